import { AsyncLocalStorage } from 'node:async_hooks';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { loadWithPeer } from '../../adapter/peer';
import { UseStampedMap } from '../../adapter/use-stamped-map';
import type { Catalog } from '../../catalog';
import { RETRY_AFTER_SECONDS, type UnavailableReason } from '../../errors';
import type { QueryLimits } from '../../graphql/limits';
import type { RouteContext, RouteResult, RouteSpec } from '../router';
import type { GraphQLHttpLimits } from '../types';
import { GRAPHQL_PEERS, loadCatalogSchema } from './graphql-schema';

/**
 * `POST /api/graphql`: GraphQL over HTTP with a JSON body `{ query, variables?, operationName? }`.
 * A request GraphQL cannot run (no query, a syntax error, a document the schema refuses, variables
 * that do not fit, no operation to run) is 400 with `{ errors }`; a request that ran is 200 with
 * `{ data, errors?, extensions }` (the errors of single fields carry `extensions.code` from the
 * catalog; the envelope's `extensions` is `{}`).
 * graphql and the schema are loaded on the first request, so hosts that never use GraphQL need not
 * install it.
 */

type GraphQLModule = typeof import('graphql');

/** Bounds the work a single document can ask of the parser. */
const MAX_TOKENS = 20_000;
/**
 * Deepest nesting of braces, parentheses and brackets in a document's text: checked by a scan before
 * parsing, so that a document nested thousands deep is refused instead of exhausting the parser's stack.
 */
const MAX_TEXT_NESTING = 100;

/** An outcome label: an error code, or `ok`; anything else is counted as `error`. */
const OUTCOME = /^(ok|[A-Z][A-Z_]{0,39})$/;

const DEFAULTS = { maxResponseBytes: 16 * 1024 * 1024, timeoutMs: 10_000, documentCacheBytes: 8 * 1024 * 1024 };

/**
 * Parsed and validated documents by query text (clients send the same few documents again and again),
 * bounded by the bytes of their text: least recently used first out, and a document over 1/16 of the
 * budget is never kept. A use only stamps its entry (src/adapter/use-stamped-map.ts).
 */
export class DocumentCache {
  private readonly documents = new UseStampedMap<string, DocumentNode>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(query: string): DocumentNode | undefined {
    return this.documents.get(query);
  }

  set(query: string, document: DocumentNode): void {
    if (query.length * 2 > this.maxBytes / 16) return;
    if (!this.documents.has(query)) this.bytes += query.length * 2;
    this.documents.set(query, document);
    if (this.bytes <= this.maxBytes) return;
    // Over the budget: the least recently used go until a quarter of it is free (one sort per many inserts).
    for (const oldest of this.documents.leastUsedFirst()) {
      if (this.bytes <= (this.maxBytes * 3) / 4) break;
      this.documents.delete(oldest);
      this.bytes -= oldest.length * 2;
    }
  }
}

interface Loaded {
  graphql: GraphQLModule;
  schema: GraphQLSchema;
  checkLimits: typeof import('../../graphql/limits').checkQueryLimits;
  coerce: typeof import('../../graphql/variable-coercion').coerceStringVariables;
}

/** The deepest nesting of `{ ( [` outside strings and comments, or more than `limit` as soon as it is. */
function textNesting(query: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const block = query.startsWith('"""', i);
      const end = block ? query.indexOf('"""', i + 3) : stringEnd(query, i + 1);
      if (end < 0) return deepest;
      i = block ? end + 2 : end;
    } else if (c === 0x23 /* # */) {
      const end = query.indexOf('\n', i);
      if (end < 0) return deepest;
      i = end;
    } else if (c === 0x7b || c === 0x28 || c === 0x5b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x7d || c === 0x29 || c === 0x5d) depth -= 1;
  }
  return deepest;
}

function stringEnd(query: string, from: number): number {
  for (let i = from; i < query.length; i++) {
    const c = query.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 1;
    else if (c === 0x22) return i;
  }
  return -1;
}

function requestError(message: string, extra: Record<string, unknown> = {}): RouteResult {
  return { status: 400, body: { errors: [{ message, ...extra, extensions: { code: 'INVALID_INPUT' } }] } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The graphql route of one handler: the schema is built once, on first use. */
export function graphqlRoutes(catalog: Catalog, limitOptions: GraphQLHttpLimits = {}): RouteSpec[] {
  const settings = { ...DEFAULTS, ...limitOptions };
  const queryLimits: QueryLimits = {
    ...(limitOptions.maxDepth !== undefined ? { maxDepth: limitOptions.maxDepth } : {}),
    ...(limitOptions.maxCost !== undefined ? { maxCost: limitOptions.maxCost } : {}),
    ...(limitOptions.defaultListSize !== undefined ? { defaultListSize: limitOptions.defaultListSize } : {}),
  };
  const documents = new DocumentCache(settings.documentCacheBytes);
  // The request whose resolvers are running, for the schema's error hook (built once for all requests).
  const current = new AsyncLocalStorage<RouteContext>();
  let loading: Promise<Loaded> | undefined;
  const load = () => {
    loading ??= (async () => {
      const [graphql, { checkQueryLimits }, { coerceStringVariables }] = await Promise.all([
        loadWithPeer('the GraphQL endpoint (/api/graphql)', GRAPHQL_PEERS, () => import('graphql')),
        import('../../graphql/limits'),
        import('../../graphql/variable-coercion'),
      ]);
      const schema = await loadCatalogSchema(catalog, (error, where) => current.getStore()?.reportError(error, `graphql ${where}`));
      return { graphql, schema, checkLimits: checkQueryLimits, coerce: coerceStringVariables };
    })();
    // A failed load (graphql not installed) is retried by the next request.
    loading.catch(() => (loading = undefined));
    return loading;
  };

  async function handle(ctx: RouteContext): Promise<RouteResult> {
    const body = ctx.body;
    if (!isPlainObject(body))
      return requestError('the body must be a JSON object { "query": "...", "variables": {...}, "operationName": "..." }');
    const { query, variables, operationName } = body;
    if (typeof query !== 'string' || query.trim() === '') return requestError('"query" must be a non-empty string');
    if (variables !== undefined && variables !== null && !isPlainObject(variables)) return requestError('"variables" must be an object');
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
      return requestError('"operationName" must be a string');

    const { graphql, schema, checkLimits, coerce } = await load();
    let document = documents.get(query);
    if (!document) {
      if (textNesting(query, MAX_TEXT_NESTING) > MAX_TEXT_NESTING)
        return requestError(`the document nests braces, parentheses or brackets more than ${MAX_TEXT_NESTING} deep`);
      try {
        document = graphql.parse(query, { maxTokens: MAX_TOKENS });
      } catch (error) {
        if (error instanceof graphql.GraphQLError)
          return { status: 400, body: { errors: [{ ...error.toJSON(), extensions: { code: 'INVALID_INPUT' } }] } };
        throw error;
      }
      const invalid = graphql.validate(schema, document);
      if (invalid.length)
        return { status: 400, body: { errors: invalid.map((e) => ({ ...e.toJSON(), extensions: { code: 'INVALID_INPUT' } })) } };
      documents.set(query, document);
    }
    const name = typeof operationName === 'string' ? operationName : undefined;
    const operation = graphql.getOperationAST(document, name);
    if (!operation) {
      return requestError(
        name
          ? `the document has no operation named "${name}"`
          : 'the document has several operations: name the one to run in "operationName"',
      );
    }
    const note = (outcome: unknown) =>
      ctx.noteGraphQL?.(
        operation.name?.value ?? 'anonymous',
        operation.operation,
        typeof outcome === 'string' && OUTCOME.test(outcome) ? outcome : 'error',
      );
    // The platform's clients send "0", "20" and "false" for Int and Boolean variables (docs/graphql.md);
    // coerced first, so that the cost check sees the sizes the request will run with.
    const variableValues = coerce(schema, document, variables as Record<string, unknown> | null | undefined, name);
    try {
      checkLimits(schema, document, { ...queryLimits, variables: variableValues ?? null, operationName: name ?? null });
    } catch (error) {
      if (error instanceof graphql.GraphQLError) {
        note(error.extensions?.code ?? 'INVALID_INPUT');
        return { status: 400, body: { errors: [error.toJSON()] } };
      }
      throw error;
    }
    const deadline = Date.now() + settings.timeoutMs;
    const result = await current.run(ctx, () =>
      graphql.execute({
        schema,
        document: document!,
        variableValues,
        operationName: name,
        contextValue: { actorUrn: ctx.actorUrn, ...(typeof ctx.actor === 'string' ? {} : { scopes: ctx.actor.scopes }), deadline },
      }),
    );
    // No `data` at all: the request could not start (e.g. variables that do not fit their types).
    if (!('data' in result) || result.data === undefined) {
      note('INVALID_INPUT');
      return {
        status: 400,
        body: { errors: (result.errors ?? []).map((e) => ({ ...e.toJSON(), extensions: { code: 'INVALID_INPUT', ...e.extensions } })) },
      };
    }
    // `extensions` is always there, `{}` when nothing adds to it: DataHub's server answers so (its web app reads the member).
    const text = JSON.stringify({ ...result, extensions: result.extensions ?? {} });
    if (Buffer.byteLength(text) > settings.maxResponseBytes) {
      note('PAYLOAD_TOO_LARGE');
      return {
        status: 413,
        body: {
          errors: [
            {
              message: `the answer would be larger than ${settings.maxResponseBytes} bytes; ask for fewer results or fields`,
              extensions: { code: 'PAYLOAD_TOO_LARGE' },
            },
          ],
        },
      };
    }
    note(result.errors?.length ? (result.errors[0]!.extensions?.code ?? 'error') : 'ok');
    // A storage that failed a field: the client may retry the whole request, and is told when.
    const waits = (result.errors ?? [])
      .filter((e) => e.extensions?.code === 'UNAVAILABLE')
      .map((e) => RETRY_AFTER_SECONDS[e.extensions.reason as UnavailableReason] ?? RETRY_AFTER_SECONDS.connection);
    const headers = waits.length ? { headers: { 'retry-after': String(Math.max(...waits)) } } : {};
    return { body: text, contentType: 'application/json; charset=utf-8', ...headers };
  }

  return [{ pattern: '/api/graphql', methods: { POST: { body: 'json', handle } } }];
}
