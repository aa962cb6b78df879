/**
 * `metacatalog/graphql`: the catalog's GraphQL API with the operation names and input shapes of the
 * established metadata platform, so that documents written for it run unchanged. The host builds the
 * context once per request with the authenticated actor: `{ actorUrn }`.
 */
export { typeDefs } from './type-defs';
export { createResolvers } from './resolvers';
export type { GraphQLOptions } from './resolvers';
export { createGraphQLSchema, hostEntityTypeDefs } from './schema';
export type { CatalogGraphQLContext } from './request-state';
export type { CatalogResolvers, ResolverFunction } from './resolver-types';
export type { GraphQLErrorHook, GraphQLErrorReport } from './errors';
export { checkQueryLimits, createQueryLimitRules, DEFAULT_QUERY_LIMITS } from './limits';
export { coerceStringVariables } from './variable-coercion';
export type { QueryLimits } from './limits';
export {
  createStructuredPropertyFromGraphql,
  decodeGraphqlAssignments,
  decodeGraphqlDefinition,
  decodeGraphqlPreview,
  decodeGraphqlUpdate,
  graphqlDefinitionPath,
  graphqlUpdatePath,
  graphqlValuesPath,
  updateStructuredPropertyFromGraphql,
  upsertStructuredPropertiesFromGraphql,
} from './property-input';
export type { GraphqlPreviewInput } from './property-input';
/**
 * graphql-js's own `graphql()` and `execute()`, from the copy of graphql this schema was built with: under
 * a test runner that loads graphql twice (vitest without the alias), running the schema with these works.
 */
export { execute, graphql } from 'graphql';
