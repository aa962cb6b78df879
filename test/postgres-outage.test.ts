import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPostgresAdapter } from '../adapters/postgres/index';
import { createHandle } from '../adapters/postgres/database';
import { createCatalog, type Catalog } from '../src/catalog';
import { startOwnPostgres, withOwnPostgres, type OwnPostgres } from './support/pg-own-server';

/**
 * PostgreSQL going away under a catalog: a cluster of this file's own (never the shared test server),
 * stopped with `pg_ctl stop -m fast` (every connection ends with 57P01) and started again.
 */

const ADMIN = 'urn:li:corpuser:admin';
const datasetUrn = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Uncaught exceptions seen while `work` runs (an unhandled 'error' event of a pg client is one). */
async function uncaughtDuring(work: () => Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const onUncaught = (error: Error) => void seen.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    await work();
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  return seen;
}

withOwnPostgres('test/postgres-outage.test.ts', 'postgres: an outage of the server', () => {
  let server: OwnPostgres;
  beforeAll(async () => {
    server = await startOwnPostgres();
  }, 120_000);
  afterEach(async () => {
    await server.ensureRunning();
  });
  afterAll(async () => {
    await server?.remove();
  });

  describe('no connection error goes unhandled', () => {
    it('idle pooled connections and the change feed LISTEN connection: the catalog keeps running and works again', async () => {
      const catalog: Catalog = createCatalog({
        adapter: createPostgresAdapter({ connectionString: server.url }, { schema: 'outage_idle' }),
        superUsers: [ADMIN],
      });
      try {
        await catalog.ready();
        await catalog.entities.upsertAspect(ADMIN, datasetUrn('before'), 'datasetProperties', { name: 'before' });
        // A follower waiting holds the LISTEN connection.
        const follow = new AbortController();
        const following = (async () => {
          for await (const _event of catalog.changes.follow(ADMIN, { signal: follow.signal }));
        })().catch(() => undefined);
        await sleep(200);
        const uncaught = await uncaughtDuring(async () => {
          await server.halt();
          await sleep(300);
        });
        expect(uncaught.map((e) => e.message)).toEqual([]);
        await server.resume();
        // The first request after the restart may meet a connection the pool had not yet seen die.
        let written = false;
        for (let attempt = 0; attempt < 20 && !written; attempt++) {
          written = await catalog.entities.upsertAspect(ADMIN, datasetUrn('after'), 'datasetProperties', { name: 'after' }).then(
            () => true,
            () => false,
          );
          if (!written) await sleep(100);
        }
        expect(written).toBe(true);
        const read = await catalog.entities.get(ADMIN, datasetUrn('after'));
        expect(read?.aspects.datasetProperties?.value).toEqual({ name: 'after' });
        follow.abort();
        await following;
      } finally {
        await catalog.close();
      }
    });

    it('a connection checked out for a transaction, between two statements', async () => {
      const pool = new pg.Pool({ connectionString: server.url, max: 2 });
      // The host's pool has its own listener; the checked-out connection's error is the adapter's to handle.
      pool.on('error', () => undefined);
      const handle = createHandle(pool, 'public');
      try {
        let failure: unknown;
        const uncaught = await uncaughtDuring(async () => {
          await handle
            .transaction(async (tx) => {
              await tx.query('SELECT 1');
              await server.halt();
              await sleep(300);
              await tx.query('SELECT 2');
            })
            .catch((error: unknown) => {
              failure = error;
            });
        });
        expect(uncaught.map((e) => e.message)).toEqual([]);
        expect(failure).toBeInstanceOf(Error);
        await server.resume();
        const rows = await handle.query<{ one: number }>('SELECT 1 AS one');
        expect(rows).toEqual([{ one: 1 }]);
      } finally {
        await pool.end();
      }
    });

    it('a pool the host passes without an error listener: its idle connections failing do not crash the process', async () => {
      const pool = new pg.Pool({ connectionString: server.url, max: 3 });
      const catalog = createCatalog({ adapter: createPostgresAdapter({ pool }, { schema: 'outage_host' }), superUsers: [ADMIN] });
      try {
        await catalog.ready();
        await catalog.entities.upsertAspect(ADMIN, datasetUrn('host'), 'datasetProperties', { name: 'host' });
        const uncaught = await uncaughtDuring(async () => {
          await server.halt();
          await sleep(300);
        });
        expect(uncaught.map((e) => e.message)).toEqual([]);
        await server.resume();
      } finally {
        await catalog.close();
        await pool.end();
      }
    });
  });
});
