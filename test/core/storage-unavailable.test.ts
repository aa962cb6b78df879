import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import type { StorageAdapter } from '../../src/adapter/types';
import { limitRepeats } from '../../src/core/logging/index';
import { CatalogError, storageUnavailable } from '../../src/errors';
import { repeatLimitedErrorLog } from '../../src/http/error-log';
import { createCatalog } from '../../src/index';
import { cliEnv, requireBuiltCli, runCli } from '../cli/helpers';
import { ADMIN, call, enc, startTestServer } from '../http/helpers';

/**
 * The storage failing (a full disk, a read-only file, a lost connection) is UNAVAILABLE everywhere: 503
 * with Retry-After over REST and Rest.li, `extensions.code` over GraphQL, exit code 75 on the command
 * line; classified once, where the domain calls the adapter, whatever the adapter.
 */

const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-unavailable-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const sqliteError = (message: string, code: string) => new Database.SqliteError(message, code);

describe('storageUnavailable: which failures are the storage itself', () => {
  const cases: Array<[string, unknown, string | undefined]> = [
    ['SQLite: disk full', sqliteError('database or disk is full', 'SQLITE_FULL'), 'disk-full'],
    ['SQLite: read-only file', sqliteError('attempt to write a readonly database', 'SQLITE_READONLY'), 'read-only'],
    ['SQLite: file moved away', sqliteError('attempt to write a readonly database', 'SQLITE_READONLY_DBMOVED'), 'read-only'],
    ['SQLite: I/O error', sqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'), 'io'],
    ['SQLite: locked by another writer', sqliteError('database is locked', 'SQLITE_BUSY'), 'busy'],
    [
      'PostgreSQL: administrator shutdown',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      'connection',
    ],
    ['PostgreSQL: connection failure', Object.assign(new Error('connection failure'), { code: '08006' }), 'connection'],
    ['PostgreSQL: starting up', Object.assign(new Error('the database system is starting up'), { code: '57P03' }), 'connection'],
    ['PostgreSQL: disk full', Object.assign(new Error('could not extend file'), { code: '53100' }), 'disk-full'],
    ['PostgreSQL: a standby', Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }), 'read-only'],
    ['the driver: connection ended', new Error('Connection terminated unexpectedly'), 'connection'],
    ['the network: refused', Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), { code: 'ECONNREFUSED' }), 'connection'],
    ['the file system: no space', Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }), 'disk-full'],
    ['PostgreSQL: a unique violation is not', Object.assign(new Error('duplicate key'), { code: '23505' }), undefined],
    ['SQLite: a constraint is not', sqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'), undefined],
    ['a bug is not', new TypeError('x is undefined'), undefined],
    ['a refusal is not', new CatalogError('INVALID_INPUT', 'bad'), undefined],
  ];
  it.each(cases)('%s', (_name, error, reason) => {
    const classified = storageUnavailable(error);
    expect(classified?.reason).toBe(reason);
    if (classified) {
      expect(classified.code).toBe('UNAVAILABLE');
      expect(classified.cause).toBe(error);
      // A network error is named by its code: never the database's address.
      expect(classified.message).not.toContain('10.1.2.3');
    }
  });
});

describe('any adapter: the failure is classified where the domain calls it', () => {
  /** A memory adapter whose connection "drops" while `down` is set (as a network database's would). */
  function flaky(): { adapter: StorageAdapter; setDown(down: boolean): void } {
    const inner = createMemoryAdapter();
    let down = false;
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), { code: 'ECONNREFUSED' });
    const adapter: StorageAdapter = {
      ...inner,
      readEntities: (...args) => (down ? Promise.reject(refused()) : inner.readEntities(...args)),
      commit: (batch) => (down ? Promise.reject(refused()) : inner.commit(batch)),
    };
    return { adapter, setDown: (value) => void (down = value) };
  }

  it('memory: reads and writes reject with UNAVAILABLE (reason connection); health fails, then heals by itself once the storage answers', async () => {
    const { adapter, setDown } = flaky();
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    try {
      await catalog.entities.upsertAspect(ADMIN, dataset('a'), 'datasetProperties', { name: 'a' });
      expect(await catalog.health()).toEqual({ status: 'ok' });
      setDown(true);
      await expect(catalog.entities.get(ADMIN, dataset('a'))).rejects.toMatchObject({ code: 'UNAVAILABLE', reason: 'connection' });
      await expect(catalog.entities.upsertAspect(ADMIN, dataset('b'), 'datasetProperties', { name: 'b' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });
      expect(await catalog.health()).toEqual({ status: 'failing', storage: { error: 'ECONNREFUSED', since: expect.any(Number) } });
      setDown(false);
      // No write needed: the health probe reads, and a lost connection is healed by any call that succeeds.
      expect(await catalog.health()).toEqual({ status: 'ok' });
    } finally {
      await catalog.close();
    }
  });
});

describe('SQLite: a full disk, a read-only file', () => {
  /** A SQLite catalog whose commits fail with `failure` while it is set (the error SQLite raises, inside the transaction). */
  async function failingServer() {
    let failure: Error | undefined;
    let failing: (urn: string) => boolean = (urn) => !urn.startsWith('urn:li:dataHubAccessToken');
    const adapter = createSqliteAdapter({
      filename: join(fresh(), 'catalog.db'),
      faultInjector: ({ urn }) => {
        if (failure && failing(urn)) throw failure;
      },
    });
    const t = await startTestServer({ catalog: { adapter } });
    return {
      t,
      fail: (error: Error | undefined, only?: (urn: string) => boolean) => {
        failure = error;
        if (only) failing = only;
      },
    };
  }

  it('REST, Rest.li and GraphQL answer UNAVAILABLE with Retry-After; /health fails; nothing is half written; a write after it heals', async () => {
    const { t, fail } = await failingServer();
    try {
      fail(sqliteError('database or disk is full', 'SQLITE_FULL'));
      const rest = await call(t.url, 'POST', `/openapi/v2/entity/dataset/${enc(dataset('a'))}/datasetProperties`, {
        token: t.adminToken,
        body: { name: 'a' },
      });
      expect(rest.status).toBe(503);
      expect(rest.headers.get('retry-after')).toBe('5');
      expect(rest.json.error).toEqual({
        code: 'UNAVAILABLE',
        reason: 'disk-full',
        message: 'the storage is unavailable (the disk is full): database or disk is full; try again later',
      });

      const restli = await call(t.url, 'POST', '/gms/aspects?action=ingestProposal', {
        token: t.adminToken,
        body: {
          proposal: {
            entityType: 'dataset',
            entityUrn: dataset('b'),
            changeType: 'UPSERT',
            aspectName: 'status',
            aspect: { value: '{"removed":false}', contentType: 'application/json' },
          },
        },
      });
      expect(restli.status).toBe(503);
      expect(restli.headers.get('retry-after')).toBe('5');
      expect(restli.json).toMatchObject({ status: 503, error: { code: 'UNAVAILABLE' } });

      fail(sqliteError('attempt to write a readonly database', 'SQLITE_READONLY'));
      const graphql = await call(t.url, 'POST', '/api/graphql', {
        token: t.adminToken,
        body: {
          query:
            'mutation { createStructuredProperty(input: { id: "io.test.tier", qualifiedName: "io.test.tier", valueType: "string", entityTypes: ["dataset"] }) { urn } }',
        },
      });
      expect(graphql.status, graphql.text).toBe(200);
      expect(graphql.headers.get('retry-after')).toBe('5');
      expect(graphql.json.errors[0].extensions).toEqual({ code: 'UNAVAILABLE', reason: 'read-only' });

      const health = await call(t.url, 'GET', '/health');
      expect(health.status).toBe(503);
      expect(health.json).toEqual({ status: 'failing', storage: { error: 'database or disk is full', since: expect.any(Number) } });
      // Each failure reached the error hook (the log says why clients are told to retry), as UNAVAILABLE.
      expect(t.errors.map((e) => (e.error as CatalogError).code)).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE']);

      fail(undefined);
      // Reads work meanwhile, but only a write that succeeds says the disk takes writes again.
      expect((await call(t.url, 'GET', '/health')).status).toBe(503);
      expect(await t.catalog.entities.get(ADMIN, dataset('a'))).toBeUndefined();
      const again = await call(t.url, 'POST', `/openapi/v2/entity/dataset/${enc(dataset('a'))}/datasetProperties`, {
        token: t.adminToken,
        body: { name: 'a' },
      });
      expect(again.status).toBe(200);
      expect((await call(t.url, 'GET', '/health')).json).toEqual({ status: 'ok' });
    } finally {
      await t.close();
    }
  });

  it('the command line: ingest against the server exits 75, naming the chunk of lines that failed and what was written before it', async () => {
    requireBuiltCli();
    const { t, fail } = await failingServer();
    try {
      const file = join(fresh(), 'lines.jsonl');
      const line = (name: string) => JSON.stringify({ urn: dataset(name), aspects: { status: { removed: false } } });
      writeFileSync(file, `${[line('one'), line('two'), line('three'), line('four')].join('\n')}\n`);
      // The first chunk is written; the disk is full when the second comes.
      fail(sqliteError('database or disk is full', 'SQLITE_FULL'), (urn) => urn === dataset('three') || urn === dataset('four'));
      const r = await runCli(['ingest', file, '--chunk-size', '2', '--server', `${t.url}/gms`, '--token', t.adminToken], { env: cliEnv() });
      expect(r.code).toBe(75);
      expect(r.stderr).toMatch(
        /^metacatalog ingest: .*the storage is unavailable \(the disk is full\): database or disk is full; try again later/,
      );
      expect(r.stderr).toMatch(/\(writing the chunk of lines 3-4; written before it: 2 entities \(2 aspects\) in 1 chunk\)\n$/);
    } finally {
      await t.close();
    }
  });
});

describe('repeated failures are logged once per interval, with a count', () => {
  it('the first line at once, then one line counting the repeats when the interval ends; another kind is its own line', () => {
    let now = 0;
    const lines: string[] = [];
    const log = limitRepeats((line) => lines.push(line), { intervalMs: 10_000, clock: () => now });
    for (let i = 0; i < 1000; i++) log('disk full', 'metacatalog: the disk is full');
    log('other', 'metacatalog: something else');
    expect(lines).toEqual(['metacatalog: the disk is full\n', 'metacatalog: something else\n']);
    now = 10_000;
    log('disk full', 'metacatalog: the disk is full');
    expect(lines.slice(2)).toEqual([
      'metacatalog: the disk is full (and 999 more times in the last 10 s)\n',
      'metacatalog: the disk is full\n',
    ]);
    log.flush();
    expect(lines.length).toBe(4);
  });

  it('the HTTP error log: UNAVAILABLE in one line without a stack, the same failure of many requests once', () => {
    const lines: string[] = [];
    const log = repeatLimitedErrorLog((line) => lines.push(line));
    const failure = storageUnavailable(sqliteError('database or disk is full', 'SQLITE_FULL'))!;
    for (let i = 0; i < 500; i++)
      log(failure, { requestId: `r${i}`, method: 'POST', path: '/openapi/v2/entity/dataset/x/status', where: 'http' });
    expect(lines).toEqual([
      'metacatalog: the storage is unavailable (the disk is full): database or disk is full; try again later (first: request r0 POST /openapi/v2/entity/dataset/x/status)\n',
    ]);
    const bug = new TypeError('x is undefined');
    log(bug, { requestId: 'r1', method: 'GET', path: '/p', where: 'http' });
    log(bug, { requestId: 'r2', method: 'GET', path: '/p', where: 'http' });
    expect(lines.length).toBe(2);
    expect(lines[1]).toContain('TypeError: x is undefined\n    at ');
  });
});
