import type { GraphQLSchema } from 'graphql';
import type { Catalog } from '../../catalog';
import { CatalogError } from '../../core/errors';

// Placeholder until metacatalog/graphql (createGraphQLSchema) lands on main.
export async function loadCatalogSchema(_catalog: Catalog, _onError: (error: unknown, where: string) => void): Promise<GraphQLSchema> {
  throw new CatalogError('UNSUPPORTED', 'the GraphQL schema is not available in this build');
}
