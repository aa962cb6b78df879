import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter, type SqliteDurability } from '../adapters/sqlite';
import { createCatalog, type Catalog, type StorageAdapter } from '../src';
import { createFetchHandler, createNodeListener } from '../src/http';
import { median, printTable, time, type Figure } from './harness';
import { send } from './http-load';

/**
 * `npm run bench -- http-writes`: single aspect writes (POST /openapi/v2/entity/dataset/{urn}/datasetProperties,
 * one commit each, Bearer token) on a SQLite file, in both durability modes:
 * - through `createFetchHandler` in this process, one request after the other, against the same
 *   writes made by `catalog.entities.upsertAspect` on the same catalog (what HTTP adds);
 * - through `createNodeListener` on a loopback port, a bounded number of requests over a few
 *   keep-alive connections, against the same client driving a bare node:http handler.
 */

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'http-writes-bench-signing-key-0123456789';
const WRITES = 3_000;
const RUNS = 3;
const CONNECTIONS = 8;
/** Concurrent clients of the group-commit figure: single writes that arrive together share a sync. */
const CLIENTS = 16;

const urnOf = (label: string, i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,${label}.t${i},PROD)`;
const pathOf = (urn: string) => `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`;
const bodyOf = (i: number) => JSON.stringify({ name: `t${i}`, description: `written by request ${i}` });

/** Commits one at a time (each awaited before the next starts): single writes as they were before group commit. */
function oneCommitAtATime(adapter: StorageAdapter): StorageAdapter {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    ...adapter,
    commit(batch) {
      const committed = tail.then(() => adapter.commit(batch));
      tail = committed.catch(() => undefined);
      return committed;
    },
  };
}

async function withCatalog<T>(
  durability: SqliteDurability,
  use: (catalog: Catalog, token: string) => Promise<T>,
  options: { serialized?: boolean } = {},
): Promise<T> {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-http-writes-'));
  const adapter = createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability });
  const catalog = createCatalog({
    adapter: options.serialized ? oneCommitAtATime(adapter) : adapter,
    superUsers: [ADMIN],
    tokenSigningKey: KEY,
    jobs: { background: false },
  });
  try {
    await catalog.ready();
    const { accessToken } = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_MONTH', name: 'bench' });
    return await use(catalog, accessToken);
  } finally {
    await catalog.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Writes per second: the fetch handler, then the domain call, on one catalog. */
async function inProcess(durability: SqliteDurability, run: number): Promise<{ http: number; direct: number }> {
  return withCatalog(durability, async (catalog, token) => {
    const handler = createFetchHandler(catalog);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const http = await time(async () => {
      for (let i = 0; i < WRITES; i++) {
        const response = await handler(
          new Request(`http://localhost${pathOf(urnOf(`f${run}`, i))}`, { method: 'POST', headers, body: bodyOf(i) }),
        );
        if (response.status !== 200) throw new Error(`http-writes: ${response.status} ${await response.text()}`);
        await response.text();
      }
    });
    const direct = await time(async () => {
      for (let i = 0; i < WRITES; i++) {
        await catalog.entities.upsertAspect(ADMIN, urnOf(`d${run}`, i), 'datasetProperties', JSON.parse(bodyOf(i)) as { name: string });
      }
    });
    return { http: (WRITES / http.ms) * 1000, direct: (WRITES / direct.ms) * 1000 };
  });
}

/**
 * What the disk allows: one small row per transaction with better-sqlite3 alone, WAL, in the same
 * sync mode. With durability 'full' every write waits for its sync, so no single-write path is faster.
 */
function bareTransactions(durability: SqliteDurability): number {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-http-writes-bare-'));
  const db = new Database(join(directory, 'bare.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    const write = db.transaction((i: number) => insert.run(`k${i}`, bodyOf(i)));
    const start = performance.now();
    for (let i = 0; i < WRITES; i++) write(i);
    return (WRITES / (performance.now() - start)) * 1000;
  } finally {
    db.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Requests per second over loopback with `connections` keep-alive connections, `WRITES` requests in all. */
async function overLoopback(
  listener: Parameters<typeof createServer>[1],
  token: string | undefined,
  label: string,
  connections = CONNECTIONS,
): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  let failed = '';
  try {
    const { ms } = await time(() =>
      Promise.all(
        Array.from({ length: connections }, async () => {
          while (next < WRITES) {
            const i = next++;
            const answer = await send(agent, port, 'POST', pathOf(urnOf(label, i)), bodyOf(i), token);
            if (answer.status !== 200) failed ||= `${answer.status} ${answer.text.slice(0, 200)}`;
          }
        }),
      ),
    );
    if (failed) throw new Error(`http-writes over loopback: ${failed}`);
    return (WRITES / ms) * 1000;
  } finally {
    agent.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const bare: Parameters<typeof createServer>[1] = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({ ok: true, bytes: Buffer.concat(chunks).length });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
};

export async function runHttpWritesBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const durability of ['full', 'normal'] as const) {
    const runs: Array<{ http: number; direct: number; loopback: number; clients: number; alone: number; bare: number; disk: number }> = [];
    for (let run = 0; run < RUNS; run++) {
      const local = await inProcess(durability, run);
      const loopback = await withCatalog(durability, (catalog, token) => overLoopback(createNodeListener(catalog), token, `l${run}`));
      const clients = await withCatalog(durability, (catalog, token) =>
        overLoopback(createNodeListener(catalog), token, `c${run}`, CLIENTS),
      );
      const alone = await withCatalog(
        durability,
        (catalog, token) => overLoopback(createNodeListener(catalog), token, `s${run}`, CLIENTS),
        { serialized: true },
      );
      runs.push({
        ...local,
        loopback,
        clients,
        alone,
        bare: await overLoopback(bare, undefined, `b${run}`),
        disk: bareTransactions(durability),
      });
    }
    const list = (pick: (r: (typeof runs)[number]) => number) => runs.map((r) => Math.round(pick(r))).join(', ');
    console.log(
      `http-writes (${durability}): fetch handler ${list((r) => r.http)}; upsertAspect ${list((r) => r.direct)}; ` +
        `node listener ${list((r) => r.loopback)}; ${CLIENTS} clients ${list((r) => r.clients)} (one commit at a time ${list((r) => r.alone)}); bare node:http ${list((r) => r.bare)}; bare SQLite transactions ${list((r) => r.disk)} (writes/s, ${RUNS} runs)`,
    );
    const http = median(runs.map((r) => r.http));
    const loopback = median(runs.map((r) => r.loopback));
    figures.push(
      {
        workload: `fetch handler, ${WRITES} single writes in a row (SQLite, durability ${durability})`,
        unit: 'writes/s',
        value: http,
        baseline: median(runs.map((r) => r.direct)),
        baselineName: 'catalog.entities.upsertAspect',
        better: 'higher',
        goal: '≥ 2,000/s',
        met: http >= 2000,
      },
      {
        workload: `node listener, loopback, ${CONNECTIONS} connections, ${WRITES} writes (SQLite, durability ${durability})`,
        unit: 'writes/s',
        value: loopback,
        baseline: median(runs.map((r) => r.bare)),
        baselineName: 'bare node:http',
        better: 'higher',
        goal: '≥ 2,000/s',
        met: loopback >= 2000,
      },
      {
        workload: `node listener, loopback, ${CLIENTS} clients, ${WRITES} writes (SQLite, durability ${durability}; concurrent writes share a sync)`,
        unit: 'writes/s',
        value: median(runs.map((r) => r.clients)),
        baseline: median(runs.map((r) => r.alone)),
        baselineName: 'the same clients, commits one at a time',
        better: 'higher',
        goal: '≥ 2,000/s',
        met: median(runs.map((r) => r.clients)) >= 2000,
      },
      {
        workload: `one-row transactions, better-sqlite3 alone (durability ${durability}): what the disk allows`,
        unit: 'writes/s',
        value: median(runs.map((r) => r.disk)),
        better: 'higher',
      },
    );
  }
  printTable('single writes through HTTP (median of 3 runs)', figures);
  return figures;
}
