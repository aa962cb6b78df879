import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createFetchHandler } from '../../src/http/index';
import { createCatalog, type StorageAdapter } from '../../src/index';

/**
 * Long-lived state stays bounded: after a warm-up, every request path runs thousands of times on one
 * catalog and the heap after a full collection must not grow beyond what the stored data itself takes.
 * (A per-call leak of 2.8 KB, which a schema cache keyed by fresh object literals once had, shows up here
 * as megabytes.) Bounded in time: a few thousand rounds of ten calls per adapter; SQLite runs with
 * durability 'normal' (the sync mode changes nothing the process keeps in memory, and a sync per
 * write would make this file take minutes instead of about a minute).
 */

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'soak-test-signing-key-0123456789abcdef';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,soak.orders,PROD)';
const TIER = 'urn:li:structuredProperty:soak.tier';
// 5,000 measured calls. The heap after collection varies by up to ±0.9 MB from run to run (SQLite); a leak of
// 500 bytes per call failed both adapters in every trial (the schema cache that once leaked kept 2.8 KB per
// call). Twice the rounds with twice the allowance took a seventh of the whole suite's CPU and caught no less:
// the revoked tokens' records, which then took up to 3.6 MB of the memory adapter's allowance, are now removed.
const ROUNDS = 500;
// The warm-up fills the bounded caches before the heap is first measured. After 300 rounds the SQLite heap
// still grew 0.96-1.55 MB over the next 500 (2 of 12 runs past the allowance, and once in CI); measured over
// 1,000 and 1,500 rounds instead it grew 0.81 and 0.37 MB: caches filling, then evicting, not a leak. After
// 800 rounds the next 500 grew it 0.18-0.35 MB. The measured rounds, and so the leak a call may have, are
// unchanged. What fills is mostly V8's own compiled code: between rounds 500 and 1,100 a heap snapshot grew by
// 464 KB of "(code)" objects against 36 KB of plain objects; leaving the code spaces out of the measurement
// still left 0.44-0.46 MB after a 500-round warm-up, as bytecode and feedback live in old space.
const WARM_UP = 800;
/** Heap growth allowed beyond the stored data: noise of the collector, caches filling to their bounds (300 B a call, beside the noise). */
const ALLOWED_GROWTH = 1.5 * 1024 * 1024;
const HOUR = 3_600_000;

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterCollection(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

async function soak(adapter: StorageAdapter): Promise<{ growth: number; dataBytes: number }> {
  // Change events and earlier versions are data the catalog keeps on purpose (bounded by their retention,
  // tested in the conformance suite): off here, so that what remains is state that must not grow.
  let clockShift = 0;
  const catalog = createCatalog({
    adapter,
    clock: () => Date.now() + clockShift,
    superUsers: [ADMIN],
    tokenSigningKey: KEY,
    jobs: { background: false },
    changes: { enabled: false },
    history: { enabled: false },
  });
  const handler = createFetchHandler(catalog, { trustActorHeader: true });
  const call = async (method: string, path: string, body?: unknown, type = 'application/json') => {
    const response = await handler(
      new Request(`http://localhost${path}`, {
        method,
        headers: { 'X-Service-Actor': ADMIN, ...(body === undefined ? {} : { 'Content-Type': type }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text;
  };
  await catalog.properties.create(ADMIN, { qualifiedName: 'soak.tier', valueType: 'string', entityTypes: ['dataset'] });
  const encoded = encodeURIComponent(DATASET);
  let timeseriesRows = 0;
  const round = async (i: number) => {
    // GraphQL value upsert, REST aspect POST, PATCH of structured properties.
    await call('POST', '/api/graphql', {
      query:
        'mutation($input: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $input) { properties { structuredProperty { urn } } } }',
      variables: {
        input: {
          assetUrn: DATASET,
          structuredPropertyInputParams: [{ structuredPropertyUrn: TIER, values: [{ stringValue: `v${i % 7}` }] }],
        },
      },
    });
    await call('POST', `/openapi/v2/entity/dataset/${encoded}/datasetProperties`, { name: 'orders', description: `round ${i % 5}` });
    await call(
      'PATCH',
      `/openapi/v2/entity/dataset/${encoded}/structuredProperties`,
      { patch: [{ op: 'add', path: `/properties/${TIER}`, value: { propertyUrn: TIER, values: [{ string: 'gold' }] } }] },
      'application/json-patch+json',
    );
    // Token create, verify and revoke (a revoked token's small record stays until the token expires, for the
    // revocation feed: the clean-up removes them below, once the catalog clock has passed their expiry).
    const created = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'soak' });
    await catalog.tokens.verify(created.accessToken);
    await catalog.tokens.revoke(ADMIN, created.metadata.id);
    // Search and aggregate, with a structured property filter.
    await call('POST', '/api/graphql', {
      query:
        'query($f: String!) { searchAcrossEntities(input: { query: "*", count: 10, orFilters: [{ and: [{ field: "structuredProperties.soak.tier", values: [$f] }] }] }) { total } }',
      variables: { f: 'gold' },
    });
    await call('POST', '/api/graphql', {
      query: '{ aggregateAcrossEntities(input: { query: "*", facets: ["structuredProperties.soak.tier"] }) { facets { field } } }',
    });
    // Change proposals as DataHub's SDK sends them (an upsert and a remove-then-add patch), and a Rest.li read.
    await call('POST', '/aspects?action=ingestProposalBatch', {
      proposals: [
        {
          entityUrn: DATASET,
          changeType: 'UPSERT',
          aspectName: 'status',
          aspect: { value: '{"removed":false}', contentType: 'application/json' },
          systemMetadata: { runId: `run-${i % 3}` },
        },
        {
          entityUrn: DATASET,
          changeType: 'PATCH',
          aspectName: 'structuredProperties',
          aspect: {
            value: JSON.stringify([
              { op: 'remove', path: `/properties/${TIER}`, value: {} },
              { op: 'add', path: `/properties/${TIER}`, value: { propertyUrn: TIER, values: [{ string: 'gold' }] } },
            ]),
            contentType: 'application/json-patch+json',
          },
        },
      ],
      async: 'false',
    });
    await call('GET', `/entitiesV2/${encoded.replace(/\(/g, '%28').replace(/\)/g, '%29')}?aspects=List(status,datasetKey)`);
    // Timeseries append (rows are data: their size is taken out of the growth below).
    await call('POST', `/openapi/v2/entity/dataset/${encoded}/operation`, {
      timestampMillis: 1_700_000_000_000 + i,
      operationType: 'INSERT',
    });
    timeseriesRows++;
  };
  // The revoked tokens' records go once expired: the clock moves two hours on, the clean-up removes them (and is
  // soaked too: the store reuses what the removed records took).
  const removeRevokedTokens = async () => {
    clockShift += 2 * HOUR;
    return catalog.tokens.removeExpired(ADMIN);
  };
  for (let i = 0; i < WARM_UP; i++) await round(i);
  expect(await removeRevokedTokens()).toBe(WARM_UP);
  const rowsBefore = timeseriesRows;
  const sizeOf = async () => (await adapter.timeseriesIndexSizes()).reduce((sum, s) => sum + s.bytes, 0);
  const dataBefore = adapter.capabilities.durable ? 0 : await sizeOf();
  const before = heapAfterCollection();
  for (let i = WARM_UP; i < WARM_UP + ROUNDS; i++) await round(i);
  expect(await removeRevokedTokens()).toBe(ROUNDS);
  const after = heapAfterCollection();
  const dataBytes = adapter.capabilities.durable ? 0 : (await sizeOf()) - dataBefore;
  expect(timeseriesRows - rowsBefore).toBe(ROUNDS);
  await catalog.close();
  return { growth: after - before, dataBytes };
}

const directories: string[] = [];
afterEach(() => {
  for (const d of directories.splice(0)) rmSync(d, { recursive: true, force: true });
});
const ADAPTERS: Record<'memory' | 'sqlite', () => StorageAdapter> = {
  memory: () => createMemoryAdapter(),
  sqlite: () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-soak-'));
    directories.push(directory);
    return createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability: 'normal' });
  },
};

/** The soak of one adapter: each adapter has a file (and so an isolated fork) of its own, run side by side. */
export function soakSuite(kind: keyof typeof ADAPTERS): void {
  describe(`memory stays flat under load (${kind})`, () => {
    it(`${ROUNDS} rounds of ten calls (GraphQL, REST, PATCH, change proposals, Rest.li reads, tokens, search, aggregate, timeseries) grow the heap by less than ${ALLOWED_GROWTH / 1024 / 1024} MB beyond the data`, async () => {
      expect(gc, 'the test runs with --expose-gc (vitest.config.ts execArgv)').toBeTypeOf('function');
      const { growth, dataBytes } = await soak(ADAPTERS[kind]());
      console.log(
        `soak ${kind}: heap grew ${(growth / 1024 / 1024).toFixed(2)} MB, stored data ${(dataBytes / 1024 / 1024).toFixed(2)} MB`,
      );
      // The memory adapter's estimate of its rows is bytes of JSON; its objects take about three times that.
      expect(growth - 3 * dataBytes).toBeLessThan(ALLOWED_GROWTH);
    }, 180_000);
  });
}
