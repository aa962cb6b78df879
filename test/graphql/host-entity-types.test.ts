import { makeExecutableSchema } from '@graphql-tools/schema';
import { graphql, type GraphQLEnumType } from 'graphql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { createCatalog, type Catalog } from '../../src';
import { createGraphQLSchema, createResolvers, hostEntityTypeDefs, typeDefs } from '../../src/graphql';
import { ADMIN } from './support';

const MODEL = 'urn:li:mlModel:churn';

describe('entity types a host registers', () => {
  let catalog: Catalog;
  beforeEach(async () => {
    catalog = createCatalog({
      adapter: createMemoryAdapter(),
      superUsers: [ADMIN],
      jobs: { background: false },
      entityTypes: [{ name: 'mlModel', graphqlType: 'ML_MODEL', aspects: ['status'] }],
    });
    await catalog.entities.upsertAspect(ADMIN, MODEL, 'status', { removed: false });
  });
  afterEach(() => catalog.close());

  it('extend EntityType and resolve as GenericEntity in createGraphQLSchema', async () => {
    const schema = createGraphQLSchema(catalog);
    expect((schema.getType('EntityType') as GraphQLEnumType).getValue('ML_MODEL')).toBeDefined();
    const result = await graphql({
      schema,
      source: `{ entity(urn: "${MODEL}") { __typename urn type } }`,
      contextValue: { actorUrn: ADMIN },
    });
    expect(result).toEqual({ data: { entity: { __typename: 'GenericEntity', urn: MODEL, type: 'ML_MODEL' } } });
  });

  it('resolve as the host’s own object type with entityObjectTypes', async () => {
    const hostTypeDefs = /* GraphQL */ `
      type MLModel implements Entity {
        urn: String!
        type: EntityType!
        structuredProperties: StructuredProperties
        status: Status
        framework: String!
      }
    `;
    const schema = makeExecutableSchema({
      typeDefs: [typeDefs, hostEntityTypeDefs(catalog), hostTypeDefs],
      resolvers: [createResolvers(catalog, { entityObjectTypes: { mlModel: 'MLModel' } }), { MLModel: { framework: () => 'xgboost' } }],
    });
    const result = await graphql({
      schema,
      source: `{ entity(urn: "${MODEL}") { __typename type ... on MLModel { framework status { removed } structuredProperties { properties { associatedUrn } } } } }`,
      contextValue: { actorUrn: ADMIN },
    });
    expect(result).toEqual({
      data: {
        entity: {
          __typename: 'MLModel',
          type: 'ML_MODEL',
          framework: 'xgboost',
          status: { removed: false },
          structuredProperties: { properties: [] },
        },
      },
    });
  });
});
