import { GraphQLError } from 'graphql';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, codesOf, countingAdapter, createAdapter, createHarness, type Harness } from './support';

const ENTITY = 'query e($urn: String!) { entity(urn: $urn) { urn type } }';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';

describe.each(ADAPTERS)('GraphQL errors (%s)', (kind) => {
  let h: Harness | undefined;
  afterEach(() => h?.close());

  it('an unexpected error is masked as INTERNAL and reported once to onError, with where it happened', async () => {
    const reports: Array<{ error: unknown; path: string; operationName: string | undefined }> = [];
    const adapter = createAdapter(kind);
    const failing = new Error('disk on fire at /var/lib/secret/catalog.db');
    const broken = new Proxy(adapter, {
      get(target, property, receiver) {
        if (property === 'readEntities') return () => Promise.reject(failing);
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    h = createHarness(broken, {}, { onError: (error, report) => reports.push({ error, ...report }) });
    const result = await h.run(
      `query twoFields { a: entity(urn: "${DATASET}") { urn } b: entity(urn: "urn:li:dataset:(urn:li:dataPlatform:hive,other,PROD)") { urn } }`,
    );
    expect(codesOf(result)).toEqual(['INTERNAL', 'INTERNAL']);
    for (const error of result.errors ?? []) expect(error.message).toBe('Internal error');
    const text = JSON.stringify(result);
    expect(text).not.toContain('disk on fire');
    expect(text).not.toContain('secret');
    expect(text).not.toContain('stack');
    // Both fields failed from one batched read: one report.
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ error: failing, operationName: 'twoFields' });
    expect(['a', 'b']).toContain(reports[0]?.path);
  });

  it('a failing onError hook does not change the answer', async () => {
    const adapter = createAdapter(kind);
    const broken = new Proxy(adapter, {
      get(target, property, receiver) {
        if (property === 'readEntities') return () => Promise.reject(new TypeError('boom'));
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    h = createHarness(
      broken,
      {},
      {
        onError: () => {
          throw new Error('logger down');
        },
      },
    );
    const result = await h.run(ENTITY, { urn: DATASET });
    expect(codesOf(result)).toEqual(['INTERNAL']);
  });

  it('a CatalogError keeps its message and code; validation errors carry every violation as details', async () => {
    h = createHarness(createAdapter(kind));
    const result = await h.run('{ dataset(urn: "urn:li:dataFlow:(airflow,daily,PROD)") { urn } }');
    expect(codesOf(result)).toEqual(['INVALID_INPUT']);
    expect(result.errors?.[0]).toBeInstanceOf(GraphQLError);
    expect(result.errors?.[0]?.extensions.details).toEqual([{ path: 'urn', message: expect.stringContaining('is not a dataset URN') }]);
    expect(result.errors?.[0]?.path).toEqual(['dataset']);
  });

  it('without an actor every operation is UNAUTHENTICATED (reason missing); a malformed actor too', async () => {
    h = createHarness(createAdapter(kind));
    const missing = await h.run(ENTITY, { urn: DATASET }, null);
    expect(codesOf(missing)).toEqual(['UNAUTHENTICATED']);
    expect(missing.errors?.[0]?.extensions.reason).toBe('missing');
    expect(codesOf(await h.run(ENTITY, { urn: DATASET }, 'admin'))).toEqual(['UNAUTHENTICATED']);
  });

  describe('bad input is refused by GraphQL validation before any resolver runs', () => {
    const cases: Array<[string, string, Record<string, unknown> | undefined]> = [
      [
        'an unknown enum value',
        'mutation { createAccessToken(input: { type: SHARED, actorUrn: "urn:li:corpuser:admin", duration: ONE_HOUR, name: "x" }) { accessToken } }',
        undefined,
      ],
      [
        'an unknown enum value in a variable',
        'mutation m($i: CreateAccessTokenInput!) { createAccessToken(input: $i) { accessToken } }',
        { i: { type: 'PERSONAL', actorUrn: ADMIN, duration: 'FOREVER', name: 'x' } },
      ],
      [
        'a missing required input field',
        'mutation { createAccessToken(input: { type: PERSONAL, actorUrn: "urn:li:corpuser:admin", name: "x" }) { accessToken } }',
        undefined,
      ],
      ['a missing required argument', 'mutation { revokeAccessToken }', undefined],
      ['a wrong scalar type', 'query { listAccessTokens(input: { start: "zero" }) { total } }', undefined],
      [
        'a wrong scalar type in a variable',
        'query l($i: ListAccessTokenInput!) { listAccessTokens(input: $i) { total } }',
        { i: { count: 2.5 } },
      ],
      [
        'an unknown input field',
        'mutation { deleteStructuredProperty(input: { urn: "urn:li:structuredProperty:x", soft: true }) }',
        undefined,
      ],
      ['an unknown field', '{ entity(urn: "urn:li:corpuser:x") { colour } }', undefined],
    ];
    it.each(cases)('%s', async (_name, source, variables) => {
      const counted = countingAdapter(createAdapter(kind));
      h = createHarness(counted.adapter);
      await h.catalog.ready();
      counted.reset();
      const result = await h.run(source, variables);
      expect(result.data).toBeUndefined();
      expect(result.errors?.length).toBeGreaterThan(0);
      // No resolver ran: the adapter was not asked anything.
      expect([...counted.calls.keys()]).toEqual([]);
      expect((await h.catalog.tokens.list(ADMIN, {})).total).toBe(0);
    });
  });
});
