import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../../catalog';

/** The catalog's schema (metacatalog/graphql), built once per handler; its unexpected errors go to `onError` with the field path. */
export async function loadCatalogSchema(catalog: Catalog, onError: (error: unknown, where: string) => void): Promise<GraphQLSchema> {
  const { createGraphQLSchema } = await import('../../graphql/index');
  return createGraphQLSchema(catalog, { onError: (error, report) => onError(error, report.path) });
}
