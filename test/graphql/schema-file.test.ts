import { readFileSync } from 'node:fs';
import { buildSchema, graphql, printSchema, type GraphQLEnumType } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { createCatalog } from '../../src';
import { createGraphQLSchema, hostEntityTypeDefs } from '../../src/graphql';
import { ADMIN } from './support';

const committed = readFileSync(new URL('../../docs/schema.graphql', import.meta.url), 'utf8');

describe('the schema', () => {
  const catalog = createCatalog({ adapter: createMemoryAdapter(), jobs: { background: false } });
  afterAll(() => catalog.close());

  it('docs/schema.graphql is the printed executable schema, modulo formatting (`npm run build` rewrites it)', () => {
    expect(printSchema(buildSchema(committed))).toBe(printSchema(createGraphQLSchema(catalog)));
  });

  it('entity types a host registers extend EntityType and resolve as GenericEntity', async () => {
    const MODEL = 'urn:li:mlModel:churn';
    const hosted = createCatalog({
      adapter: createMemoryAdapter(),
      superUsers: [ADMIN],
      jobs: { background: false },
      entityTypes: [{ name: 'mlModel', graphqlType: 'ML_MODEL', aspects: ['status'] }],
    });
    try {
      expect(hostEntityTypeDefs(catalog)).toBe('');
      const schema = createGraphQLSchema(hosted);
      expect((schema.getType('EntityType') as GraphQLEnumType).getValue('ML_MODEL')).toBeDefined();
      await hosted.entities.upsertAspect(ADMIN, MODEL, 'status', { removed: false });
      const result = await graphql({ schema, source: `{ entity(urn: "${MODEL}") { __typename urn type } }`, contextValue: { actorUrn: ADMIN } });
      expect(result).toEqual({ data: { entity: { __typename: 'GenericEntity', urn: MODEL, type: 'ML_MODEL' } } });
    } finally {
      await hosted.close();
    }
  });
});
