import type { Actor } from '../core/access';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { decodeUrnFromPath } from '../core/urn';
import { methodNotAllowed } from './answers';
import type { AnswerStream } from './exchange';

const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * What a route reads from the request body: nothing, a JSON body (required or optional), or a JSON
 * Patch document (`application/json-patch+json`).
 */
export type BodyKind = 'none' | 'json' | 'optional-json' | 'json-patch' | 'json-or-json-patch';

/** What a route handler gets: the catalog, the authenticated actor, the decoded path parameters. */
export interface RouteContext {
  catalog: Catalog;
  /** The authenticated actor's URN ('' on public routes). */
  actorUrn: string;
  /** What the catalog's calls act as: the URN, or with a scoped token the URN with the token's scopes. */
  actor: Actor;
  /** The host's mount point (`HttpOptions.basePath`, '' when none), for links in pages. */
  basePath: string;
  /** Path parameters, percent-decoded once. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The parsed body (undefined when the route takes none or none was sent). */
  body: unknown;
  requestId: string;
  /** Reports an unexpected error that the route handled itself (e.g. inside a GraphQL resolver). */
  reportError(error: unknown, where: string): void;
  /** A request header by lower-case name (e.g. `accept`, `last-event-id`). */
  header?(name: string): string | undefined;
  /** Tells the request's metrics and span which GraphQL operation ran and how it ended (`ok` or an error code). */
  noteGraphQL?(operationName: string, operationType: string, outcome: string): void;
}

export interface RouteResult {
  status?: number;
  /** Sent as JSON; or, with `contentType`, a text sent as is; `undefined` sends no body at all. */
  body: unknown;
  headers?: Record<string, string>;
  /** The body is a text of this media type (a page, a script, JSON already serialized). */
  contentType?: string;
  /** A streamed answer instead of the JSON body (server-sent events). */
  stream?: AnswerStream;
}

export interface MethodSpec {
  body: BodyKind;
  /** Served without authentication (documents, health). */
  public?: boolean;
  /**
   * Errors as DataHub's Rest.li clients read them: `message` and `status` beside `error`, and
   * INVALID_INPUT answered with `invalidInputStatus` (422 for proposals, as the platform does).
   */
  restliErrors?: { invalidInputStatus?: number };
  /** The body limit this route takes: `proposals` is `HttpOptions.maxProposalBodyBytes`; default `maxBodyBytes`. */
  bodyLimit?: 'proposals';
  handle(context: RouteContext): Promise<RouteResult>;
}

/** One path template (OpenAPI syntax, e.g. `/openapi/v2/entity/{entityName}/{urn}`) with its methods. */
export interface RouteSpec {
  pattern: string;
  methods: Partial<Record<HttpMethod, MethodSpec>>;
}

interface CompiledRoute {
  spec: RouteSpec;
  /** Literal segments as strings, parameters as `{ name }`. */
  segments: Array<string | { name: string }>;
  literals: number;
}

export interface RouteMatch {
  spec: RouteSpec;
  method: MethodSpec;
  params: Record<string, string>;
}

export function compileRoutes(specs: readonly RouteSpec[]): CompiledRoute[] {
  return specs.map((spec) => {
    const segments = spec.pattern
      .split('/')
      .slice(1)
      .map((s) => (s.startsWith('{') && s.endsWith('}') ? { name: s.slice(1, -1) } : s));
    return { spec, segments, literals: segments.filter((s) => typeof s === 'string').length };
  });
}

/** Splits a raw path into segments, each percent-decoded once (INVALID_INPUT for a malformed escape). */
export function pathSegments(rawPath: string): string[] | undefined {
  if (!rawPath.startsWith('/')) return undefined;
  const raw = rawPath.slice(1).split('/');
  // One trailing slash is tolerated: `/api/graphql/` is `/api/graphql`.
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  return raw.map((segment) => (segment.includes('%') ? decodeUrnFromPath(segment) : segment));
}

/**
 * Finds the route for a method and decoded path segments. Among the templates that match the path, the
 * one with the most literal segments that has the method wins; when the path matches but no template
 * has the method, METHOD_NOT_ALLOWED lists the methods that would work; otherwise NOT_FOUND. HEAD is
 * served by a route's own HEAD, or else by its GET (the handler then sends the answer without a body).
 */
export function matchRoute(routes: readonly CompiledRoute[], method: string, segments: readonly string[]): RouteMatch {
  if (method !== 'HEAD') return matchMethod(routes, method, segments);
  try {
    return matchMethod(routes, 'HEAD', segments);
  } catch (error) {
    if (!(error instanceof CatalogError) || error.code !== 'METHOD_NOT_ALLOWED') throw error;
    return matchMethod(routes, 'GET', segments, 'HEAD');
  }
}

function matchMethod(routes: readonly CompiledRoute[], method: string, segments: readonly string[], asked = method): RouteMatch {
  let best: RouteMatch | undefined;
  let bestLiterals = -1;
  const allowed = new Set<string>();
  for (const route of routes) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matches = true;
    for (let i = 0; i < segments.length && matches; i++) {
      const want = route.segments[i]!;
      const got = segments[i]!;
      if (typeof want === 'string') matches = want === got;
      else if (got === '') matches = false;
      else params[want.name] = got;
    }
    if (!matches) continue;
    for (const m of Object.keys(route.spec.methods)) allowed.add(m);
    if (route.spec.methods.GET) allowed.add('HEAD');
    const spec = route.spec.methods[method as HttpMethod];
    if (spec && route.literals > bestLiterals) {
      best = { spec: route.spec, method: spec, params };
      bestLiterals = route.literals;
    }
  }
  if (best) return best;
  if (allowed.size > 0)
    throw methodNotAllowed(
      asked,
      HTTP_METHODS.filter((m) => allowed.has(m)),
    );
  const message = `no route for ${method} /${segments.join('/').slice(0, 200)}; the routes are listed at /openapi/v2/api-docs`;
  throw new CatalogError('NOT_FOUND', message);
}
