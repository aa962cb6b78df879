import { AsyncLocalStorage } from 'node:async_hooks';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Catalog } from '../../catalog';
import type { RouteContext, RouteResult, RouteSpec } from '../router';
import { loadCatalogSchema } from './graphql-schema';

/**
 * `POST /api/graphql`: GraphQL over HTTP with a JSON body `{ query, variables?, operationName? }`.
 * A request GraphQL cannot run (no query, a syntax error, a document the schema refuses, variables
 * that do not fit, no operation to run) is 400 with `{ errors }`; a request that ran is 200 with
 * `{ data, errors? }` (the errors of single fields carry `extensions.code` from the catalog).
 * graphql and the schema are loaded on the first request, so hosts that never use GraphQL need not
 * install it.
 */

type GraphQLModule = typeof import('graphql');

/** Parsed and validated documents by query text: clients send the same few documents again and again. */
const DOCUMENT_CACHE_SIZE = 500;
/** Bounds the work a single document can ask of the parser. */
const MAX_TOKENS = 20_000;

interface Loaded {
  graphql: GraphQLModule;
  schema: GraphQLSchema;
  documents: Map<string, DocumentNode>;
}

function requestError(message: string, extra: Record<string, unknown> = {}): RouteResult {
  return { status: 400, body: { errors: [{ message, ...extra, extensions: { code: 'INVALID_INPUT' } }] } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The graphql route of one handler: the schema is built once, on first use. */
export function graphqlRoutes(catalog: Catalog): RouteSpec[] {
  // The request whose resolvers are running, for the schema's error hook (built once for all requests).
  const current = new AsyncLocalStorage<RouteContext>();
  let loading: Promise<Loaded> | undefined;
  const load = () => {
    loading ??= (async () => {
      const graphql = await import('graphql');
      const schema = await loadCatalogSchema(catalog, (error, where) => current.getStore()?.reportError(error, `graphql ${where}`));
      return { graphql, schema, documents: new Map<string, DocumentNode>() };
    })();
    // A failed load (graphql not installed) is retried by the next request.
    loading.catch(() => (loading = undefined));
    return loading;
  };

  async function handle(ctx: RouteContext): Promise<RouteResult> {
    const body = ctx.body;
    if (!isPlainObject(body)) return requestError('the body must be a JSON object { "query": "...", "variables": {...}, "operationName": "..." }');
    const { query, variables, operationName } = body;
    if (typeof query !== 'string' || query.trim() === '') return requestError('"query" must be a non-empty string');
    if (variables !== undefined && variables !== null && !isPlainObject(variables)) return requestError('"variables" must be an object');
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return requestError('"operationName" must be a string');

    const { graphql, schema, documents } = await load();
    let document = documents.get(query);
    if (!document) {
      try {
        document = graphql.parse(query, { maxTokens: MAX_TOKENS });
      } catch (error) {
        if (error instanceof graphql.GraphQLError) return { status: 400, body: { errors: [{ ...error.toJSON(), extensions: { code: 'INVALID_INPUT' } }] } };
        throw error;
      }
      const invalid = graphql.validate(schema, document);
      if (invalid.length) return { status: 400, body: { errors: invalid.map((e) => ({ ...e.toJSON(), extensions: { code: 'INVALID_INPUT' } })) } };
      if (documents.size >= DOCUMENT_CACHE_SIZE) documents.delete(documents.keys().next().value as string);
      documents.set(query, document);
    }
    const name = typeof operationName === 'string' ? operationName : undefined;
    if (!graphql.getOperationAST(document, name)) {
      return requestError(name ? `the document has no operation named "${name}"` : 'the document has several operations: name the one to run in "operationName"');
    }
    const result = await current.run(ctx, () =>
      graphql.execute({
        schema,
        document: document!,
        variableValues: (variables as Record<string, unknown> | null | undefined) ?? undefined,
        operationName: name,
        contextValue: { actorUrn: ctx.actorUrn },
      }),
    );
    // No `data` at all: the request could not start (e.g. variables that do not fit their types).
    if (!('data' in result) || result.data === undefined) {
      return { status: 400, body: { errors: (result.errors ?? []).map((e) => ({ ...e.toJSON(), extensions: { code: 'INVALID_INPUT', ...e.extensions } })) } };
    }
    return { body: result };
  }

  return [{ pattern: '/api/graphql', methods: { POST: { body: 'json', handle } } }];
}
