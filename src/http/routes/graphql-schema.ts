import type { GraphQLSchema } from 'graphql';
import { loadWithPeer } from '../../adapter/peer';
import type { Catalog } from '../../catalog';

/** The optional peers the GraphQL endpoint loads at its first request. */
export const GRAPHQL_PEERS = ['graphql', '@graphql-tools/schema'] as const;

/** The catalog's schema (metacatalog/graphql), built once per handler; its unexpected errors go to `onError` with the field path. */
export async function loadCatalogSchema(catalog: Catalog, onError: (error: unknown, where: string) => void): Promise<GraphQLSchema> {
  const { createGraphQLSchema } = await loadWithPeer(
    'the GraphQL endpoint (/api/graphql)',
    GRAPHQL_PEERS,
    () => import('../../graphql/index'),
  );
  return createGraphQLSchema(catalog, { onError: (error, report) => onError(error, report.path) });
}
