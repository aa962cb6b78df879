import type { GraphQLResolveInfo, GraphQLScalarType } from 'graphql';

/**
 * A field resolver as graphql-js calls it. Declared through a method so that resolvers with precise
 * parent and argument types fit (method parameters are checked bivariantly).
 */
export type ResolverFunction = {
  resolve(parent: unknown, args: Record<string, unknown>, context: unknown, info: GraphQLResolveInfo): unknown;
}['resolve'];

/** The resolver map `createResolvers` returns: per type, its field resolvers (and `__resolveType` for interfaces and unions). */
export type CatalogResolvers = Record<string, GraphQLScalarType | Record<string, ResolverFunction>>;
