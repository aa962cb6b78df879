import { readFileSync } from 'node:fs';
import { buildSchema, printSchema } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { createCatalog } from '../../src';
import { createGraphQLSchema } from '../../src/graphql';

const committed = readFileSync(new URL('../../docs/schema.graphql', import.meta.url), 'utf8');

describe('the schema', () => {
  const catalog = createCatalog({ adapter: createMemoryAdapter(), jobs: { background: false } });
  afterAll(() => catalog.close());

  it('docs/schema.graphql is the printed executable schema, modulo formatting (`npm run build` rewrites it)', () => {
    expect(printSchema(buildSchema(committed))).toBe(printSchema(createGraphQLSchema(catalog)));
  });
});
