import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createQueryLimitRules, checkQueryLimits } from '../../src/graphql/index';
import { createFetchHandler } from '../../src/http/index';
import { createCatalog } from '../../src/index';
import type { GraphQLHttpLimits } from '../../src/http/types';

const ADMIN = 'urn:li:corpuser:admin';

function setup(limits: GraphQLHttpLimits = {}) {
  let searches = 0;
  let reads = 0;
  const adapter = createMemoryAdapter();
  const counted = Object.create(adapter) as typeof adapter;
  counted.search = (request) => {
    searches += 1;
    return adapter.search(request);
  };
  counted.readEntities = (urns, aspectNames) => {
    reads += 1;
    return adapter.readEntities(urns, aspectNames);
  };
  const catalog = createCatalog({ adapter: counted, superUsers: [ADMIN], jobs: { background: false } });
  const handler = createFetchHandler(catalog, { trustActorHeader: true, graphqlLimits: limits });
  const post = async (query: string, variables?: Record<string, unknown>) => {
    const response = await handler(
      new Request('http://localhost/api/graphql', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Service-Actor': ADMIN },
        body: JSON.stringify({ query, variables }),
      }),
    );
    return {
      status: response.status,
      json: (await response.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> },
    };
  };
  return { catalog, post, searches: () => searches, reads: () => reads };
}

/** 16 levels of fragments through user → property → definition → audit stamp → user, doubling at each level. */
function fragmentBomb(levels: number): string {
  const fragments: string[] = [];
  for (let level = 0; level < levels; level++) {
    const next = level + 1 < levels ? `...U${level + 1}` : 'urn';
    fragments.push(
      `fragment U${level} on CorpUser { urn structuredProperties { properties { structuredProperty { definition { ` +
        `a: created { actor { ${next} } } b: lastModified { actor { ${next} } } } } } } }`,
    );
  }
  return `query { entity(urn: "${ADMIN}") { ... on CorpUser { ...U0 } } }\n${fragments.join('\n')}`;
}

function aliasBomb(aliases: number, count: string): string {
  const fields = Array.from(
    { length: aliases },
    (_, i) => `s${i}: searchAcrossEntities(input: { query: "*", count: ${count} }) { searchResults { entity { urn } } }`,
  );
  return `query${count.startsWith('$') ? '($n: Int)' : ''} { ${fields.join('\n')} }`;
}

describe('GraphQL limits at the HTTP endpoint', () => {
  it('refuses the nested-fragment bomb with 400 before running anything', async () => {
    const t = setup();
    const answer = await t.post(fragmentBomb(16));
    expect(answer.status).toBe(400);
    expect(answer.json.errors?.[0]?.message).toMatch(/nests fields more than 15 deep/);
    expect(answer.json.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
    // Refused before execution: no resolver read anything.
    expect(t.reads()).toBe(0);
    expect(t.searches()).toBe(0);
    await t.catalog.close();
  });

  it('refuses 400 aliases of a 10,000-result search by cost, the count given inline or as a variable', async () => {
    const t = setup();
    for (const [query, variables] of [
      [aliasBomb(400, '10000'), undefined],
      [aliasBomb(400, '$n'), { n: 10000 }],
    ] as const) {
      const answer = await t.post(query, variables);
      expect(answer.status).toBe(400);
      expect(answer.json.errors?.[0]?.message).toMatch(/cost budget of 50000/);
    }
    expect(t.searches()).toBe(0);
    expect(t.reads()).toBe(0);
    await t.catalog.close();
  });

  it('runs ordinary documents, fragments and a large page included', async () => {
    const t = setup();
    const answer = await t.post(
      'query { a: searchAcrossEntities(input: { query: "*", count: 1000 }) { total searchResults { entity { urn type } } } }',
    );
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({ a: { total: 0, searchResults: [] } });
    expect(t.searches()).toBe(1);
    await t.catalog.close();
  });

  it('refuses a document nested 3,000 deep with 400 (not a stack overflow)', async () => {
    const t = setup();
    for (const query of [
      `{ ${'entity(urn: "x") { ... on Dataset { '.repeat(1500)}urn${' } }'.repeat(1500)} }`,
      `{ entity(urn: ${'['.repeat(3000)}"x"${']'.repeat(3000)}) { urn } }`,
    ]) {
      const answer = await t.post(query);
      expect(answer.status).toBe(400);
      expect(answer.json.errors?.[0]?.message).toMatch(/more than 100 deep/);
    }
    await t.catalog.close();
  });

  it('caps the size of an answer (413) and the time of a request (fields starting after the deadline fail with TIMEOUT)', async () => {
    const big = setup({ maxResponseBytes: 200 });
    await big.catalog.entities.upsertMany(
      ADMIN,
      Array.from({ length: 20 }, (_, i) => ({
        urn: `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`,
        aspects: { datasetProperties: { name: `t${i}` } },
      })),
    );
    const answer = await big.post('{ searchAcrossEntities(input: { query: "*", count: 20 }) { searchResults { entity { urn } } } }');
    expect(answer.status).toBe(413);
    expect(answer.json.errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    await big.catalog.close();

    const slow = setup({ timeoutMs: -1 });
    const late = await slow.post(`{ entity(urn: "${ADMIN}") { urn } }`);
    expect(late.json.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
    await slow.catalog.close();
  });
});

describe('the limits for a host server', () => {
  const schema = buildSchema(
    `type Query { items(count: Int): [Item!]! node: Item }  type Item { id: ID! children(first: Int): [Item!]! parent: Item }`,
  );

  it('as validation rules (depth and cost; a size from a variable counts as the default list size)', () => {
    const rules = [...specifiedRules, ...createQueryLimitRules({ maxDepth: 4, maxCost: 1_000 })];
    expect(validate(schema, parse('{ items(count: 10) { id children(first: 5) { id } } }'), rules)).toEqual([]);
    expect(validate(schema, parse('{ node { parent { parent { parent { parent { id } } } } } }'), rules).map((e) => e.message)).toEqual([
      expect.stringMatching(/more than 4 deep/),
    ]);
    expect(validate(schema, parse('{ a: items(count: 100) { children(first: 100) { id } } }'), rules).map((e) => e.message)).toEqual([
      expect.stringMatching(/cost budget of 1000/),
    ]);
  });

  it('checkQueryLimits uses the request variables', () => {
    const document = parse('query($n: Int) { items(count: $n) { children(first: $n) { id } } }');
    expect(() => checkQueryLimits(schema, document, { variables: { n: 10 }, maxCost: 1_000 })).not.toThrow();
    expect(() => checkQueryLimits(schema, document, { variables: { n: 100 }, maxCost: 1_000 })).toThrow(/cost budget of 1000/);
  });
});

describe("variables as the platform's clients send them", () => {
  it('numeric strings for Int and "true"/"false" for Boolean are taken in variables (datahub-project/datahub smoke-test sends "0" and "20")', async () => {
    const t = setup();
    const query = 'query($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { start count total } }';
    const answer = await t.post(query, { input: { query: '*', start: '0', count: '20' } });
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({ searchAcrossEntities: { start: 0, count: 0, total: 0 } });
    // In the document itself a string is still not an Int.
    const literal = await t.post('{ searchAcrossEntities(input: { query: "*", count: "20" }) { total } }');
    expect(literal.status).toBe(400);
    await t.catalog.close();
  });

  it('a count given as a string still counts against the cost budget', async () => {
    const t = setup();
    const fields = Array.from(
      { length: 400 },
      (_, i) => `s${i}: searchAcrossEntities(input: { query: "*", count: $n }) { searchResults { entity { urn } } }`,
    );
    const answer = await t.post(`query($n: Int) { ${fields.join('\n')} }`, { n: '10000' });
    expect(answer.status).toBe(400);
    expect(answer.json.errors?.[0]?.message).toMatch(/cost budget/);
    await t.catalog.close();
  });
});
