import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { startServer } from '../../../src/http/index';
import { createCatalog } from '../../../src/index';
import { spawnServe } from '../../cli/helpers';

const ADMIN = 'urn:li:corpuser:admin';
const dataset = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const directories: string[] = [];
const fresh = () => {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-safety-'));
  directories.push(directory);
  return directory;
};
afterEach(() => {
  for (const d of directories.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the SQLite file', () => {
  it('is created readable by its owner only, and so are its WAL files (whatever the umask)', async () => {
    const previous = process.umask(0o022);
    try {
      const filename = join(fresh(), 'catalog.db');
      const catalog = createCatalog({ adapter: createSqliteAdapter({ filename }), superUsers: [ADMIN], jobs: { background: false } });
      await catalog.entities.upsertAspect(ADMIN, dataset('a'), 'datasetProperties', { name: 'a' });
      expect(statSync(filename).mode & 0o777).toBe(0o600);
      expect(statSync(`${filename}-wal`).mode & 0o777).toBe(0o600);
      await catalog.close();
    } finally {
      process.umask(previous);
    }
  });

  it('takes durability "full" (the default) or "normal", and refuses anything else', () => {
    const filename = join(fresh(), 'catalog.db');
    expect(() => createSqliteAdapter({ filename, durability: 'normal' })).not.toThrow();
    expect(() => createSqliteAdapter({ filename, durability: 'off' as 'full' })).toThrow(/durability must be "full" or "normal"/);
  });
});

describe('health while the storage refuses writes', () => {
  it('reports failing (503 on /health) while writes fail, and ok again after a write succeeds', async () => {
    let diskFull = false;
    const adapter = createSqliteAdapter({
      filename: join(fresh(), 'catalog.db'),
      // What SQLite throws when the disk is full, raised inside the commit's transaction.
      faultInjector: () => {
        if (diskFull) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
    });
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    const server = await startServer(catalog, { port: 0, trustActorHeader: true });
    const health = async () => {
      const response = await fetch(`${server.url}/health`);
      return { status: response.status, body: (await response.json()) as unknown };
    };
    try {
      expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });
      diskFull = true;
      await expect(catalog.entities.upsertAspect(ADMIN, dataset('a'), 'datasetProperties', { name: 'a' })).rejects.toThrow(/disk is full/);
      expect(await health()).toEqual({
        status: 503,
        body: { status: 'failing', storage: { error: 'database or disk is full', since: expect.any(Number) } },
      });
      // A refusal of bad input is not a storage fault.
      diskFull = false;
      await expect(catalog.entities.upsertAspect(ADMIN, 'not-a-urn', 'datasetProperties', { name: 'a' })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      expect((await health()).status).toBe(503);
      await catalog.entities.upsertAspect(ADMIN, dataset('a'), 'datasetProperties', { name: 'a' });
      expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });
    } finally {
      await server.close();
      await catalog.close();
    }
  });
});

describe("node:http's own refusals carry the JSON error body", () => {
  async function raw(url: string, request: string): Promise<string> {
    const { port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
      let answer = '';
      socket.on('data', (chunk) => (answer += String(chunk)));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it('a URL over 16 KB is 431 and a negative Content-Length 400, both with { error: { code, message } }', async () => {
    const catalog = createCatalog({
      adapter: createSqliteAdapter({ filename: ':memory:' }),
      superUsers: [ADMIN],
      jobs: { background: false },
    });
    const server = await startServer(catalog, { port: 0 });
    try {
      const long = await raw(server.url, `GET /health?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(long).toMatch(/^HTTP\/1\.1 431 /);
      expect(JSON.parse(long.slice(long.indexOf('\r\n\r\n') + 4))).toEqual({
        error: { code: 'INVALID_INPUT', message: expect.stringMatching(/larger than 16 KB/) },
        message: expect.stringMatching(/larger than 16 KB/),
      });
      const negative = await raw(server.url, 'POST /api/graphql HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n');
      expect(negative).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(negative.slice(negative.indexOf('\r\n\r\n') + 4)).error.code).toBe('INVALID_INPUT');
    } finally {
      await server.close();
      await catalog.close();
    }
  });
});

describe('metacatalog serve --trust-actor-header', () => {
  it('takes the actor from X-Service-Actor, warning at the start that only a trusted front may set it', async () => {
    const served = await spawnServe(['--db', join(fresh(), 'catalog.db'), '--quiet', '--trust-actor-header', '--durability', 'normal']);
    try {
      const response = await fetch(`${served.url.replace(/\/$/, '')}/openapi/v2/me`, {
        headers: { 'X-Service-Actor': 'urn:li:corpuser:ana' },
      });
      expect(await response.json()).toEqual({ urn: 'urn:li:corpuser:ana' });
      expect(served.output()).toContain('WARNING: --trust-actor-header');
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  });
});
