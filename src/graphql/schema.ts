import { makeExecutableSchema } from '@graphql-tools/schema';
import { GraphQLSchema, Kind, parse, type DocumentNode } from 'graphql';
import { CatalogError } from '../errors';
import type { Catalog } from '../catalog';
import { createResolvers, type GraphQLOptions } from './resolvers';
import { typeDefs } from './type-defs';

/**
 * The library's type definitions, parsed once per process: every schema is built from the same document (a
 * host's server builds one per catalog, a test suite one per test), and the parse was a third of the build.
 */
let typeDefsDocument: DocumentNode | undefined;
function parsedTypeDefs(): DocumentNode {
  return (typeDefsDocument ??= parse(typeDefs));
}

/** Whether a schema was built from the library's definitions with the SDL checks, in this process. */
let typeDefsChecked = false;

let builtIn: ReadonlySet<string> | undefined;
function builtInEntityTypes(): ReadonlySet<string> {
  if (builtIn === undefined) {
    const definition = parsedTypeDefs().definitions.find((d) => d.kind === Kind.ENUM_TYPE_DEFINITION && d.name.value === 'EntityType');
    builtIn = new Set(definition?.kind === Kind.ENUM_TYPE_DEFINITION ? definition.values?.map((v) => v.name.value) : []);
  }
  return builtIn;
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
  const extension = hostEntityTypeDefs(catalog);
  const schema: unknown = makeExecutableSchema({
    typeDefs: extension === '' ? [parsedTypeDefs()] : [parsedTypeDefs(), extension],
    resolvers: createResolvers(catalog, options),
    // The schema was just built for this call: its fields take the resolvers as they are, without a copy of it.
    updateResolversInPlace: true,
    // The SDL checks (two fifths of a build) run on the library's definitions at their first build in the process,
    // and on every build that adds a host's entity types.
    assumeValidSDL: extension === '' && typeDefsChecked,
  });
  requireOneGraphQL(schema);
  typeDefsChecked = true;
  return schema;
}
