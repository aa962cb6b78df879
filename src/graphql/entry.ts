// `metacatalog/graphql`: loads the schema factory (with graphql and @graphql-tools/schema) once, naming the peers when they are missing.
import { loadWithPeer } from '../adapter/peer';

const implementation = await loadWithPeer('metacatalog/graphql', ['graphql', '@graphql-tools/schema'], () => import('./index'));

export const typeDefs = implementation.typeDefs;
export const createResolvers = implementation.createResolvers;
export const createGraphQLSchema = implementation.createGraphQLSchema;
export const hostEntityTypeDefs = implementation.hostEntityTypeDefs;
export const checkQueryLimits = implementation.checkQueryLimits;
export const createQueryLimitRules = implementation.createQueryLimitRules;
export const DEFAULT_QUERY_LIMITS = implementation.DEFAULT_QUERY_LIMITS;
export const graphql = implementation.graphql;
export const coerceStringVariables = implementation.coerceStringVariables;
export const execute = implementation.execute;
export type {
  CatalogGraphQLContext,
  CatalogResolvers,
  GraphQLErrorHook,
  GraphQLErrorReport,
  GraphQLOptions,
  QueryLimits,
  ResolverFunction,
} from './index';
