import { makeExecutableSchema } from '@graphql-tools/schema';
import { Kind, parse, type GraphQLSchema } from 'graphql';
import type { Catalog } from '../catalog';
import { createResolvers, type GraphQLOptions } from './resolvers';
import { typeDefs } from './type-defs';

function builtInEntityTypes(): Set<string> {
  for (const definition of parse(typeDefs).definitions) {
    if (definition.kind === Kind.ENUM_TYPE_DEFINITION && definition.name.value === 'EntityType') {
      return new Set(definition.values?.map((v) => v.name.value));
    }
  }
  return new Set();
}

/**
 * `extend enum EntityType` with the GraphQL names of entity types the host registered, so that
 * `type` resolves for them too; empty when there are none.
 */
export function hostEntityTypeDefs(catalog: Catalog): string {
  const known = builtInEntityTypes();
  const extra = catalog.registry
    .entityTypeNames()
    .map((name) => catalog.registry.entityType(name).graphqlType)
    .filter((name) => !known.has(name));
  return extra.length ? `extend enum EntityType {\n  ${extra.join('\n  ')}\n}\n` : '';
}

/** The catalog's executable GraphQL schema (`typeDefs` with `createResolvers(catalog, options)`). */
export function createGraphQLSchema(catalog: Catalog, options: GraphQLOptions = {}): GraphQLSchema {
  return makeExecutableSchema({
    typeDefs: [typeDefs, hostEntityTypeDefs(catalog)].filter(Boolean),
    resolvers: createResolvers(catalog, options),
  });
}
