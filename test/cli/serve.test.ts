import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog } from '../../src/index';
import { CLI as cli, spawnServe, type ServeChild as Started } from './helpers';

// Runs the built CLI (dist/cli.js): `npm test` builds first.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `serve --port 0` with these arguments, once it listens. */
const startServe = (args: string[]): Promise<Started> => spawnServe(args);

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-serve-'));
  dirs.push(dir);
  return join(dir, 'nested', 'catalog.db');
}

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,served,PROD)';
const path = `/gms/openapi/v2/entity/dataset/${encodeURIComponent(DATASET)}/datasetProperties`;

describe('metacatalog serve', () => {
  it('starts on a new database: key file 0600, a bootstrap token that works, SIGTERM exits 0', async () => {
    const db = tempDb();
    const s = await startServe(['--db', db]);
    expect(s.token).toBeTruthy();
    const keyFile = `${db}.signing-key`;
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const written = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'served' }),
    });
    expect(written.status).toBe(200);
    const anonymous = await fetch(`${s.url}${path}`);
    expect(anonymous.status).toBe(401);
    // The access log is on stdout and never shows the token.
    expect(s.output()).toContain(`200 POST ${path}`);
    expect(
      s
        .output()
        .split('\n')
        .filter((l) => l.includes(s.token!)),
    ).toEqual([`export METACATALOG_TOKEN=${s.token}`]);

    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
    expect(s.output()).toContain('metacatalog: stopped');

    // Second start: same key, no new token, the old token and the data are still there.
    const again = await startServe(['--db', db, '--quiet']);
    expect(again.token).toBeUndefined();
    const read = await fetch(`${again.url}${path}`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ value: { name: 'served' } });
    again.child.kill('SIGINT');
    expect(await again.exit).toBe(0);
  });

  it('finishes a request in flight when stopped, then exits 0', async () => {
    const db = tempDb();
    const s = await startServe(['--db', db, '--quiet']);
    const url = new URL(s.url);
    const body = JSON.stringify({ name: 'in flight', description: 'd'.repeat(2000) });
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let response = '';
    socket.on('data', (d) => (response += String(d)));
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${s.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 1000)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(s.child.exitCode).toBeNull();
    // The rest of the body, without half-closing: node:http aborts a request whose client ended its side
    // before the answer (Node's default, httpAllowHalfOpen false), and a commit's sync now runs off the event loop.
    socket.write(body.slice(1000));
    await once(socket, 'close');
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response.toLowerCase()).toContain('connection: close');
    expect(await s.exit).toBe(0);

    const again = await startServe(['--db', db, '--quiet']);
    const read = await fetch(`${again.url}${path}`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(((await read.json()) as { value: { name: string } }).value.name).toBe('in flight');
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  });

  it('stops during background work (the clean-up of a hard delete) with exit 0; the work resumes on the same file', async () => {
    const db = tempDb();
    spawnSync('mkdir', ['-p', dirname(db)]);
    const ADMIN = 'urn:li:corpuser:admin';
    const PROP = 'urn:li:structuredProperty:test.cleanup';
    const urns = Array.from({ length: 3000 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`);
    const seed = createCatalog({ adapter: createSqliteAdapter({ filename: db }), superUsers: [ADMIN], jobs: { background: false } });
    await seed.properties.create(ADMIN, { qualifiedName: 'test.cleanup', valueType: 'string', entityTypes: ['dataset'] });
    await seed.properties.upsertValuesMany(
      ADMIN,
      urns.map((urn) => ({ urn, properties: [{ propertyUrn: PROP, values: [{ string: 'x' }] }] })),
    );
    await seed.close();

    const s = await startServe(['--db', db, '--quiet', '--bootstrap-token']);
    const deleted = await fetch(`${s.url}/openapi/v2/entity/structuredProperty/${encodeURIComponent(PROP)}?hard=true`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(deleted.status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);

    const after = createCatalog({ adapter: createSqliteAdapter({ filename: db }), superUsers: [ADMIN], jobs: { background: false } });
    try {
      await after.settle();
      expect(await after.listJobs({ includeDead: true })).toEqual([]);
      const sample = await after.entities.getMany(ADMIN, [urns[0]!, urns[1500]!, urns[2999]!]);
      for (const view of sample) expect(view.aspects.structuredProperties?.value.properties ?? []).toEqual([]);
    } finally {
      await after.close();
    }
  });

  it('refuses a key file that others may read (exit 1), and bad options (exit 2)', () => {
    const db = tempDb();
    const first = spawnSync(process.execPath, [cli, 'serve', '--db', db, '--port', '-1'], { encoding: 'utf8' });
    expect(first.status).toBe(2);
    expect(existsSync(db)).toBe(false);

    const unknown = spawnSync(process.execPath, [cli, 'serve', '--nope'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('--nope');

    const keyFile = `${db}.signing-key`;
    spawnSync('mkdir', ['-p', dirname(db)]);
    spawnSync('sh', ['-c', `printf '%s' 0123456789abcdef0123456789abcdef0123 > '${keyFile}'`]);
    chmodSync(keyFile, 0o644);
    const loose = spawnSync(process.execPath, [cli, 'serve', '--db', db, '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
    expect(loose.status).toBe(1);
    expect(loose.stderr).toContain(`chmod 600 ${keyFile}`);
    expect(existsSync(db)).toBe(false);
  });

  it('a first start that cannot listen (port taken) exits 1; the next start still prints the bootstrap token', async () => {
    const db = tempDb();
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const taken = (blocker.address() as import('node:net').AddressInfo).port;
    try {
      const failed = spawnSync(process.execPath, [cli, 'serve', '--db', db, '--port', String(taken)], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain('the port is in use');
      expect(failed.stdout).not.toContain('METACATALOG_TOKEN');
    } finally {
      blocker.close();
    }
    const s = await startServe(['--db', db, '--quiet']);
    expect(s.token).toBeTruthy();
    const r = await fetch(`${s.url}/openapi/v2/entity/dataset`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(r.status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exit).toBe(0);
  });

  it('a --db that is a directory exits 1 without creating a key file', () => {
    const db = tempDb();
    spawnSync('mkdir', ['-p', db]);
    const r = spawnSync(process.execPath, [cli, 'serve', '--db', db, '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is not a file');
    expect(existsSync(`${db}.signing-key`)).toBe(false);
  });

  it('--help describes the options', () => {
    const help = spawnSync(process.execPath, [cli, 'serve', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--db <file>');
    expect(help.stdout).toContain('signing-key');
  });
});
