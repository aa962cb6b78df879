import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPostgresAdapter } from '../../../adapters/postgres/index';
import { createHandle } from '../../../adapters/postgres/database';
import { createCatalog, type Catalog } from '../../../src/catalog';
import { readServerSentEvents } from '../../../src/cli/sse';
import { startServer } from '../../../src/http/server';
import { startOwnPostgres, withOwnPostgres, type OwnPostgres } from '../../support/pg-own-server';

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

withOwnPostgres('test/adapters/postgres/outage.test.ts', 'postgres: an outage of the server', () => {
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
        // The host's pool makes new connections: the catalog works again without anyone's help.
        await expect(
          catalog.entities.upsertAspect(ADMIN, datasetUrn('host'), 'datasetProperties', { name: 'host again' }),
        ).resolves.toBeDefined();
      } finally {
        await catalog.close();
        await pool.end();
      }
    });
  });
  describe('under concurrent writes over HTTP', () => {
    it('answers 503 UNAVAILABLE with Retry-After, says failing on /health, recovers by itself, loses no acknowledged write; a follower sees every event once', async () => {
      const catalog = createCatalog({
        adapter: createPostgresAdapter({ connectionString: server.url }, { schema: 'outage_load' }),
        superUsers: [ADMIN],
      });
      const http = await startServer(catalog, { port: 0, trustActorHeader: true });
      const headers = { 'content-type': 'application/json', 'x-service-actor': ADMIN };
      const acknowledged = new Set<string>();
      const refusals: Array<{ status: number; code: unknown; retryAfter: string | null }> = [];
      const stopWriters = new AbortController();
      const uncaught: Error[] = [];
      const onUncaught = (error: Error) => void uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      let firstAcknowledgedAfter: ((at: number) => void) | undefined;

      async function writer(id: number): Promise<void> {
        for (let n = 0; !stopWriters.signal.aborted; n++) {
          const urn = datasetUrn(`w${id}_${n}`);
          const response = await fetch(`${http.url}/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: `w${id}_${n}` }),
          }).catch(() => undefined);
          if (!response) continue;
          const body = (await response.json()) as { error?: { code?: unknown } };
          if (response.ok) {
            acknowledged.add(urn);
            firstAcknowledgedAfter?.(performance.now());
          } else {
            refusals.push({ status: response.status, code: body.error?.code, retryAfter: response.headers.get('retry-after') });
            await sleep(20);
          }
        }
      }

      // A follower over server-sent events that resumes from its last event id, as a client does.
      const followed: string[] = [];
      const stopFollower = new AbortController();
      const follower = (async () => {
        let last: string | undefined;
        while (!stopFollower.signal.aborted) {
          try {
            const response = await fetch(`${http.url}/openapi/v2/changes`, {
              headers: { ...headers, accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) },
              signal: stopFollower.signal,
            });
            if (!response.ok || !response.body) {
              await response.body?.cancel();
              await sleep(200);
              continue;
            }
            for await (const event of readServerSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)) {
              if (event.id === undefined) continue;
              followed.push(event.id);
              last = event.id;
            }
          } catch {
            if (!stopFollower.signal.aborted) await sleep(200);
          }
        }
      })();

      const health = async () => {
        const response = await fetch(`${http.url}/health`);
        return { status: response.status, body: (await response.json()) as { status: string } };
      };

      try {
        await catalog.ready();
        const writers = Array.from({ length: 8 }, (_, i) => writer(i));
        // Writes flowing before the stop (however slow the machine).
        while (acknowledged.size < 10) await sleep(20);

        const stoppedAt = performance.now();
        await server.halt();
        const haltedAt = performance.now();
        // /health says failing (its probe cannot reach the database).
        let failing = await health();
        while (failing.status !== 503) failing = await health();
        const healthFailingMs = performance.now() - stoppedAt;
        const healthFailingAfterHaltMs = performance.now() - haltedAt;
        expect(failing.body.status).toBe('failing');
        // GraphQL: the field's error carries UNAVAILABLE, the answer Retry-After.
        const graphql = await fetch(`${http.url}/api/graphql`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query: `{ entity(urn: "${datasetUrn('w0_0')}") { urn } }` }),
        });
        const answer = (await graphql.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
        expect(answer.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
        expect(graphql.headers.get('retry-after')).toBe('1');
        await sleep(800);
        const acknowledgedDuringOutage = acknowledged.size;

        const back = new Promise<number>((resolve) => {
          firstAcknowledgedAfter = resolve;
        });
        await server.resume();
        const resumedAt = performance.now();
        const writesBackMs = (await back) - resumedAt;
        let healthy = await health();
        while (healthy.status !== 200) healthy = await health();
        const healthOkMs = performance.now() - resumedAt;
        await sleep(500);
        stopWriters.abort();
        await Promise.all(writers);

        // Every refusal was 503 UNAVAILABLE with Retry-After: none was a 500.
        expect(refusals.length).toBeGreaterThan(0);
        expect(new Set(refusals.map((r) => `${r.status} ${String(r.code)} ${r.retryAfter !== null}`))).toEqual(
          new Set(['503 UNAVAILABLE true']),
        );
        expect(acknowledged.size).toBeGreaterThan(acknowledgedDuringOutage);

        // No acknowledged write lost.
        const stored = await catalog.entities.getMany(ADMIN, [...acknowledged]);
        const lost = [...acknowledged].filter((urn) => !stored.some((e) => e.urn === urn && e.aspects.datasetProperties));
        expect(lost).toEqual([]);

        // The follower saw every event of the feed, in order, each once (ids are dense in commit order).
        const { next } = await catalog.changes.read(ADMIN, { after: '0', limit: 1 });
        const lastId = Number((await catalog.changes.read(ADMIN, { after: next, limit: 1000 })).next);
        while (followed.length < lastId && Number(followed.at(-1) ?? 0) < lastId) await sleep(50);
        expect(followed.map(Number)).toEqual(Array.from({ length: lastId }, (_, i) => i + 1));
        expect(uncaught.map((e) => e.message)).toEqual([]);

        console.log(
          `postgres outage (8 writers over HTTP; timings on a shared machine): /health failing ${healthFailingMs.toFixed(0)} ms after the stop command (${healthFailingAfterHaltMs.toFixed(0)} ms after pg_ctl returned); ` +
            `first write acknowledged ${writesBackMs.toFixed(0)} ms and /health ok ${healthOkMs.toFixed(0)} ms after PostgreSQL was back; ` +
            `${acknowledged.size} writes acknowledged, 0 lost; ${refusals.length} answered 503; the follower saw ${followed.length} events, no gap, no repeat`,
        );
      } finally {
        process.off('uncaughtException', onUncaught);
        stopWriters.abort();
        stopFollower.abort();
        await follower;
        await http.close();
        await catalog.close();
      }
    }, 60_000);
  });
});
