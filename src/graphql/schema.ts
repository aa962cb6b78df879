import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLSchema, Kind, parse } from 'graphql';
import { CatalogError } from '../errors';
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

/**
 * graphql 16 ships an ES module and a CommonJS build; a tool that loads both (vitest does, for a module
 * that imports `graphql` beside @graphql-tools) gets two copies whose classes do not recognise each
 * other, and every query then fails with "Cannot use GraphQLSchema from another module or realm".
 * Refuse at once, naming the fix, instead of failing every request later.
 */
export function requireOneGraphQL(schema: unknown, expected: typeof GraphQLSchema = GraphQLSchema): asserts schema is GraphQLSchema {
  if (schema instanceof expected) return;
  throw new CatalogError(
    'UNSUPPORTED',
    'two copies of the graphql package are loaded (its ES module and its CommonJS build), so the schema cannot run. ' +
      "Under vitest, alias graphql to its CommonJS entry in vitest.config: resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql/index.js') }] } " +
      '(createRequire(import.meta.url) gives require in an ES module); elsewhere, make sure one graphql is installed (npm ls graphql).',
  );
}

/** The catalog's executable GraphQL schema (`typeDefs` with `createResolvers(catalog, options)`). */
export function createGraphQLSchema(catalog: Catalog, options: GraphQLOptions = {}): GraphQLSchema {
  const schema: unknown = makeExecutableSchema({
    typeDefs: [typeDefs, hostEntityTypeDefs(catalog)].filter(Boolean),
    resolvers: createResolvers(catalog, options),
  });
  requireOneGraphQL(schema);
  return schema;
}
