import { GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { isCatalogError } from '../errors';

/** Where an unexpected error happened, for the host's log. */
export interface GraphQLErrorReport {
  /** The field path, e.g. `scrollAcrossEntities.searchResults.3.entity.structuredProperties`. */
  path: string;
  operationName: string | undefined;
}

/** Called with every unexpected (non-CatalogError) error a resolver met (the client sees only "Internal error"), and with UNAVAILABLE. */
export type GraphQLErrorHook = (error: unknown, report: GraphQLErrorReport) => void;

function defaultOnError(error: unknown, report: GraphQLErrorReport): void {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`metacatalog graphql: unexpected error at ${report.path}: ${text}\n`);
}

function pathOf(info: GraphQLResolveInfo | undefined): string {
  const keys: Array<string | number> = [];
  for (let p = info?.path; p; p = p.prev) keys.unshift(p.key);
  return keys.join('.');
}

/**
 * Turns what a resolver threw into the GraphQL error the client sees: a `CatalogError` keeps its message
 * and becomes `extensions.code` (with `details` listing every violation, and `reason` when set); a
 * GraphQLError passes unchanged; anything else is masked as INTERNAL and reported to `onError` once.
 * The result carries no `originalError`, so host servers that mask unexpected errors (graphql-yoga)
 * pass it on as it is.
 */
export function toGraphQLError(
  error: unknown,
  info: GraphQLResolveInfo | undefined,
  onError: GraphQLErrorHook | undefined,
  reported: WeakSet<object>,
): GraphQLError {
  if (error instanceof GraphQLError) return error;
  // The storage failing is logged (once per failure), so that the host's log says why clients are told to retry.
  if (isCatalogError(error) && error.code === 'UNAVAILABLE') reportOnce(error, info, onError, reported);
  if (isCatalogError(error)) {
    const { details, omittedDetails } = error.toJSON();
    return new GraphQLError(error.message, {
      extensions: {
        code: error.code,
        ...(details ? { details: details.map((v) => ({ path: v.path, message: v.message })) } : {}),
        ...(omittedDetails ? { omittedDetails } : {}),
        ...(error.reason ? { reason: error.reason } : {}),
      },
    });
  }
  reportOnce(error, info, onError, reported);
  return new GraphQLError('Internal error', { extensions: { code: 'INTERNAL' } });
}

/** One failure (e.g. of the storage) can fail many fields of a list: report it once. */
function reportOnce(
  error: unknown,
  info: GraphQLResolveInfo | undefined,
  onError: GraphQLErrorHook | undefined,
  reported: WeakSet<object>,
): void {
  const key = typeof error === 'object' && error !== null ? error : undefined;
  if (key && reported.has(key)) return;
  if (key) reported.add(key);
  try {
    (onError ?? defaultOnError)(error, { path: pathOf(info), operationName: info?.operation.name?.value });
  } catch {
    // A failing log hook must not change the answer.
  }
}
