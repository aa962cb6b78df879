import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresAdapter } from '../adapters/postgres';
import { createCatalog } from '../src';
import { median, printTable, type Figure } from './harness';
import { acquireServer } from './postgres-server';

/**
 * `npm run bench -- postgres-writes`: concurrent single writes on PostgreSQL with every commit durable.
 *
 * `CLIENTS` writers at once, each writing one aspect of its own dataset per call
 * (`catalog.entities.upsertAspect`, change feed and history on: one commit each), against the same
 * number of writers each running a plain one-row `INSERT ... ON CONFLICT DO UPDATE` in its own
 * transaction (autocommit) on a pool of `CLIENTS` connections, with `synchronous_commit` on: what the
 * server's own group commit of the WAL allows. Rounds alternate (plain, catalog, ...) so that other
 * work on a shared machine slows both alike; medians are printed.
 *
 * The server: METACATALOG_BENCH_POSTGRES_URL (its settings are printed: with `fsync` off nothing is
 * measured), else a throw-away cluster started with its durability settings kept.
 */

const ADMIN = 'urn:li:corpuser:admin';
const CLIENTS = 16;
const WRITES = 2_000;
const ROUNDS = 3;

const urnOf = (round: number, i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,w${round}.t${i},PROD)`;
const valueOf = (i: number) => ({ name: `t${i}`, description: `written by call ${i}` });

/** Runs `write(i)` for i in 0..WRITES-1 with CLIENTS callers at once; writes per second. */
async function concurrently(write: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < WRITES) await write(next++);
    }),
  );
  return (WRITES / (performance.now() - start)) * 1000;
}

export async function runPostgresWritesBench(): Promise<Figure[]> {
  const server = acquireServer({ durable: true });
  const tag = randomBytes(4).toString('hex');
  const plainSchema = `writes_plain_${tag}`;
  const catalogSchema = `writes_catalog_${tag}`;
  const plain = new pg.Pool({ connectionString: server.url, max: CLIENTS });
  const adapter = createPostgresAdapter({ connectionString: server.url }, { schema: catalogSchema, maxConnections: CLIENTS });
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  const runs: Array<{ plain: number; catalog: number }> = [];
  try {
    const settings = await plain.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay') ORDER BY name`,
    );
    console.log(`postgres-writes: server settings ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')}`);
    await plain.query(`CREATE SCHEMA "${plainSchema}"; CREATE TABLE "${plainSchema}".t (k text PRIMARY KEY, v text NOT NULL)`);
    await catalog.ready();
    const upsert = `INSERT INTO "${plainSchema}".t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;
    for (let round = 0; round < ROUNDS; round++) {
      const plainRate = await concurrently((i) =>
        plain.query({ name: 'upsert', text: upsert, values: [urnOf(round, i), JSON.stringify(valueOf(i))] }),
      );
      const catalogRate = await concurrently((i) => catalog.entities.upsertAspect(ADMIN, urnOf(round, i), 'datasetProperties', valueOf(i)));
      runs.push({ plain: plainRate, catalog: catalogRate });
    }
    console.log(
      `postgres-writes: catalog ${runs.map((r) => Math.round(r.catalog)).join(', ')}; plain ${runs.map((r) => Math.round(r.plain)).join(', ')} (writes/s, ${ROUNDS} rounds)`,
    );
  } finally {
    await catalog.close();
    await plain
      .query(`DROP SCHEMA IF EXISTS "${plainSchema}" CASCADE; DROP SCHEMA IF EXISTS "${catalogSchema}" CASCADE`)
      .catch(() => undefined);
    await plain.end();
    server.release();
  }
  const value = median(runs.map((r) => r.catalog));
  const baseline = median(runs.map((r) => r.plain));
  const figures: Figure[] = [
    {
      workload: `${CLIENTS} concurrent single writes (upsertAspect, change feed on), ${WRITES} per round`,
      unit: 'writes/s',
      value,
      baseline,
      baselineName: 'one-row INSERT ... ON CONFLICT, synchronous_commit on',
      better: 'higher',
      goal: '≥ 0.5× plain',
      met: value >= 0.5 * baseline,
    },
  ];
  printTable(`PostgreSQL concurrent single writes (median of ${ROUNDS} rounds)`, figures);
  return figures;
}
