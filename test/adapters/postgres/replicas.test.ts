import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresAdapter, type PostgresAdapterSettings } from '../../../adapters/postgres/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { runSearchConformanceSuite } from '../../../src/testing/index';
import { startReplicatedPostgres, withOwnPostgres, type ReplicatedPostgres } from '../../support/pg-own-server';
import { SchemaPool } from '../../support/postgres';
import { cliEnv, requireBuiltCli, spawnServe } from '../../cli/helpers';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const ADMIN = 'urn:li:corpuser:admin';
const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

withOwnPostgres('test/adapters/postgres/replicas.test.ts', 'PostgreSQL hot standbys for searches', () => {
  let cluster: ReplicatedPostgres;
  let admin: pg.Pool;
  let standbyAdmin: pg.Pool;

  beforeAll(async () => {
    cluster = await startReplicatedPostgres();
    admin = new pg.Pool({ connectionString: cluster.primary.url, max: 2 });
    standbyAdmin = new pg.Pool({ connectionString: cluster.standby.url, max: 2 });
    standbyAdmin.on('error', () => undefined);
  });
  afterAll(async () => {
    await admin?.end();
    await standbyAdmin?.end();
    await cluster?.standby.remove();
    await cluster?.primary.remove();
  });

  /** An adapter on the own primary that sends searches to the standby. */
  function routed(
    settings: PostgresAdapterSettings & { schema?: string } = {},
    replicas: string[] = [cluster.standby.url],
  ): StorageAdapter {
    const schema = settings.schema ?? `mc_replica_${randomBytes(5).toString('hex')}`;
    return createPostgresAdapter(
      { connectionString: cluster.primary.url, replicas },
      { maxConnections: 4, onReplicaEvent: () => undefined, ...settings, schema },
    );
  }

  describe('the search sections of the conformance suite through the replica-routed adapter', () => {
    // A schema a test used is made fresh again for a later one (test/support/postgres.ts): cheaper for both servers
    // than creating and dropping one per test.
    let pool: SchemaPool;
    beforeAll(() => {
      pool = new SchemaPool({ recycle: true, url: cluster.primary.url, replicas: [cluster.standby.url] });
    });
    afterEach(async () => {
      await pool.dropAll();
    });
    afterAll(async () => {
      await pool.end();
    });
    runSearchConformanceSuite({
      name: 'postgres with a standby',
      describe,
      it,
      skip: it.skip,
      expect,
      capabilities: { durable: true, changeToken: false, changeFeed: true, timeseriesInCommit: true, propertyValues: true },
      createAdapter: (options) => pool.adapter({ onReplicaEvent: () => undefined, ...options, schema: pool.freshSchema() }),
      reopen: (closed) => pool.adapter({ onReplicaEvent: () => undefined, schema: pool.schemaOfAdapter(closed) }),
      inspect: {
        countAspects: (adapter) => pool.countRows(adapter, 'aspects'),
        countJobs: (adapter) => pool.countRows(adapter, 'jobs'),
      },
    });
  });

  describe('routing, lag and outages', () => {
    const open = (adapter: StorageAdapter): Catalog => createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    const found = async (catalog: Catalog, name: string) =>
      (await catalog.search.search(ADMIN, { types: ['DATASET'], query: name })).searchResults.map((r) => r.entity.urn);
    const waitFor = async (what: () => Promise<boolean>, ms = 10_000) => {
      const deadline = Date.now() + ms;
      while (!(await what())) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    it('searches go to the standby; a paused replay shows there, until the lag bound sends them to the primary', async () => {
      const events: string[] = [];
      const schema = `mc_replica_${randomBytes(5).toString('hex')}`;
      const reader = open(routed({ schema, maxReplicaLagMs: 400, replicaCheckIntervalMs: 50, onReplicaEvent: (m) => events.push(m) }));
      // Another server on the same primary writes; the reader itself has written nothing.
      const writer = open(createPostgresAdapter({ connectionString: cluster.primary.url }, { schema, maxConnections: 2 }));
      try {
        await writer.entities.upsertAspect(ADMIN, ds('before'), 'datasetProperties', { name: 'before' });
        await waitFor(async () => (await found(reader, 'before')).length === 1);
        expect(events.some((e) => /serving searches/.test(e))).toBe(true);

        await standbyAdmin.query('SELECT pg_wal_replay_pause()');
        await writer.entities.upsertAspect(ADMIN, ds('during'), 'datasetProperties', { name: 'during' });
        // The standby has not replayed it: a search it answers does not see the new table...
        expect(await found(reader, 'during')).toEqual([]);
        // ...until it is further behind than the bound, and searches go to the primary.
        await waitFor(async () => (await found(reader, 'during')).length === 1);
        expect(events.some((e) => /skipped, \d+ ms behind its primary/.test(e))).toBe(true);

        await standbyAdmin.query('SELECT pg_wal_replay_resume()');
        await waitFor(async () => events.filter((e) => /serving searches/.test(e)).length >= 2);
      } finally {
        await standbyAdmin.query('SELECT pg_wal_replay_resume()').catch(() => undefined);
        await reader.close();
        await writer.close();
      }
    });

    it('a process finds what it wrote itself, even while the standby lags', async () => {
      const catalog = open(routed({ maxReplicaLagMs: 60_000, replicaWaitMs: 50 }));
      try {
        await catalog.entities.upsertAspect(ADMIN, ds('warmup'), 'datasetProperties', { name: 'warmup' });
        expect(await found(catalog, 'warmup')).toEqual([ds('warmup')]);
        await standbyAdmin.query('SELECT pg_wal_replay_pause()');
        await catalog.entities.upsertAspect(ADMIN, ds('mine'), 'datasetProperties', { name: 'mine' });
        expect(await found(catalog, 'mine')).toEqual([ds('mine')]);
      } finally {
        await standbyAdmin.query('SELECT pg_wal_replay_resume()');
        await catalog.close();
      }
    });

    it('a standby that stops is skipped, and used again when it is back', async () => {
      const events: string[] = [];
      const catalog = open(routed({ replicaCheckIntervalMs: 50, onReplicaEvent: (m) => events.push(m) }));
      try {
        await catalog.entities.upsertAspect(ADMIN, ds('kept'), 'datasetProperties', { name: 'kept' });
        expect(await found(catalog, 'kept')).toEqual([ds('kept')]);
        await cluster.standby.halt();
        for (let i = 0; i < 5; i++) expect(await found(catalog, 'kept')).toEqual([ds('kept')]);
        await waitFor(async () => events.some((e) => /skipped, unreachable/.test(e)));
        await cluster.standby.resume();
        await waitFor(async () => events.filter((e) => /serving searches/.test(e)).length >= 2, 30_000);
        expect(await found(catalog, 'kept')).toEqual([ds('kept')]);
      } finally {
        await cluster.standby.ensureRunning();
        await catalog.close();
      }
    });

    it('a replica that cannot be reached at start is reported and skipped, not fatal', async () => {
      const events: string[] = [];
      const catalog = open(routed({ onReplicaEvent: (m) => events.push(m) }, ['postgres://postgres@127.0.0.1:1/postgres']));
      try {
        await catalog.entities.upsertAspect(ADMIN, ds('alone'), 'datasetProperties', { name: 'alone' });
        expect(await found(catalog, 'alone')).toEqual([ds('alone')]);
        expect(events).toEqual([expect.stringMatching(/^replica 127\.0\.0\.1:1: skipped, unreachable/)]);
      } finally {
        await catalog.close();
      }
    });

    it('serve --postgres-replica: searches over HTTP answer, an unreachable replica is reported on stderr', async () => {
      requireBuiltCli();
      const schema = `mc_replica_${randomBytes(5).toString('hex')}`;
      const served = await spawnServe(
        [
          ...['--postgres', cluster.primary.url, '--postgres-schema', schema, '--quiet'],
          ...['--postgres-replica', cluster.standby.url, '--postgres-replica', 'postgres://postgres@127.0.0.1:1/postgres'],
        ],
        cliEnv({ METACATALOG_SIGNING_KEY: 'replica-test-signing-key-0123456789abcdef' }),
      );
      try {
        expect(served.token).toBeDefined();
        const headers = { authorization: `Bearer ${served.token}`, 'content-type': 'application/json' };
        const base = served.url.replace(/\/$/, '');
        const write = await fetch(`${base}/openapi/v2/entity/dataset/${encodeURIComponent(ds('served'))}/datasetProperties`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'served' }),
        });
        expect(write.status).toBe(200);
        const query = 'query { searchAcrossEntities(input: { types: [DATASET], query: "served" }) { total } }';
        const answer = await fetch(`${base}/api/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) });
        expect(await answer.json()).toEqual({ data: { searchAcrossEntities: { total: 1 } }, extensions: {} });
        expect(served.output()).toMatch(/replica 127\.0\.0\.1:1: skipped, unreachable/);
        expect(served.output()).toMatch(/replica 127\.0\.0\.1:\d+: serving searches/);
      } finally {
        served.child.kill('SIGTERM');
        await served.exit;
      }
    });

    it('refuses a replica option that is not a connection string, { connectionString } or { pool }', () => {
      expect(() => createPostgresAdapter({ connectionString: cluster.primary.url, replicas: [42 as unknown as string] })).toThrow(
        /replicas\[0\] must be a connection string/,
      );
    });
  });
});
