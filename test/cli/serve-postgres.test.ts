import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { POSTGRES_URL, SchemaPool, withPostgresServer } from '../support/postgres';
import { CLI as cli, ROOT as root, spawnServe, type ServeChild as Started } from './helpers';
import { call, callUntil, follow, spawnWorkers, type Answer, type Cluster } from './workers';

// Runs the built CLI (dist/cli.js): `npm test` builds first. Several `serve --postgres` instances on one database.

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,served,PROD)';
const path = `/gms/openapi/v2/entity/dataset/${encodeURIComponent(DATASET)}/datasetProperties`;

/** The child's environment without a signing key of the developer's shell. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.METACATALOG_SIGNING_KEY;
  return env;
}

/** `serve --port 0` with these arguments, quiet, without the shell's signing key, once it listens. */
const startServe = (args: string[]): Promise<Started> => spawnServe(['--quiet', ...args], childEnv());

await withPostgresServer('test/cli/serve-postgres.test.ts', 'metacatalog serve --postgres', () => {
  const schemas = new SchemaPool();
  const dirs: string[] = [];
  const running: Started[] = [];
  const clusters: Cluster[] = [];
  afterEach(async () => {
    for (const c of clusters.splice(0)) await c.stop();
    for (const s of running.splice(0)) {
      if (s.child.exitCode === null) {
        s.child.kill('SIGTERM');
        await s.exit;
      }
    }
    await schemas.dropAll();
  });
  afterAll(async () => {
    await schemas.end();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function keyFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-serve-pg-'));
    dirs.push(dir);
    return join(dir, 'catalog.signing-key');
  }

  /** The URL with a password the (trust-authenticated) test server ignores: it must never be printed. */
  const urlWithPassword = (): string => {
    const url = new URL(POSTGRES_URL);
    url.password = 'never-printed-secret';
    return url.toString();
  };

  describe('metacatalog serve --postgres', () => {
    it('two instances on one database: one bootstrap token, valid on both; what one writes the other serves', async () => {
      const schema = schemas.freshSchema();
      const key = keyFile();
      const args = ['--postgres', urlWithPassword(), '--postgres-schema', schema, '--signing-key-file', key];
      const a = await startServe(args);
      running.push(a);
      expect(a.token).toBeTruthy();
      expect(statSync(key).mode & 0o777).toBe(0o600);
      const b = await startServe(args);
      running.push(b);
      // The database already holds a token: the second instance prints none.
      expect(b.token).toBeUndefined();
      for (const s of [a, b]) {
        expect(s.output()).not.toContain('never-printed-secret');
        expect(s.output()).toContain(`(database postgres://postgres:***@`);
      }

      const written = await fetch(`${a.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'served by a' }),
      });
      expect(written.status).toBe(200);
      const read = await fetch(`${b.url}${path}`, { headers: { authorization: `Bearer ${a.token}` } });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { value: unknown }).value).toEqual({ name: 'served by a' });
      expect((await fetch(`${b.url}${path}`)).status).toBe(401);

      for (const s of [a, b]) {
        s.child.kill('SIGTERM');
        expect(await s.exit).toBe(0);
      }
    });

    it(
      '--workers 2: one bootstrap token; what one worker writes the other serves, and its follower receives in order',
      { timeout: 120_000 },
      async () => {
        const c = await spawnWorkers(
          2,
          ['--quiet', '--postgres', POSTGRES_URL, '--postgres-schema', schemas.freshSchema(), '--signing-key-file', keyFile()],
          childEnv(),
        );
        clusters.push(c);
        expect(c.output().match(/^export METACATALOG_TOKEN=/gm)).toHaveLength(1);
        const token = c.token!;
        const feed = await call(c.port, 'GET', '/openapi/v2/changes?limit=1000', { token });
        const head = feed.json<{ next: string }>().next;
        const follower = await follow(c.port, token, head);
        try {
          const urns = Array.from({ length: 12 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,pg${i},PROD)`);
          const writes: Answer[] = [];
          for (const urn of urns) {
            writes.push(
              await call(c.port, 'POST', `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`, {
                token,
                body: { name: urn },
              }),
            );
          }
          expect(writes.map((w) => w.status)).toEqual(Array(12).fill(200));
          const other = writes.find((w) => w.worker !== follower.worker);
          expect(other).toBeDefined();
          const read = await callUntil(
            (w) => w !== writes[0]!.worker,
            () => call(c.port, 'GET', `/openapi/v2/entity/dataset/${encodeURIComponent(urns[0]!)}/datasetProperties`, { token }),
          );
          expect(read.json()).toEqual({ value: { name: urns[0] } });
          const all = await call(c.port, 'GET', `/openapi/v2/changes?limit=1000&after=${head}`, { token });
          const expected = all.json<{ events: Array<{ id: string }> }>().events.map((e) => e.id);
          await follower.waitFor(expected.length);
          expect(follower.events.map((e) => e.id)).toEqual(expected);
          expect(follower.events.filter((e) => e.aspectName === 'datasetProperties').map((e) => e.entityUrn)).toEqual(urns);
        } finally {
          follower.close();
        }
        expect(await c.stop()).toBe(0);
      },
    );

    it('takes the signing key from METACATALOG_SIGNING_KEY instead of a file', async () => {
      const schema = schemas.freshSchema();
      const child = spawnSync(
        process.execPath,
        [cli, 'serve', '--port', '1', '--host', '256.0.0.1', '--postgres', POSTGRES_URL, '--postgres-schema', schema],
        {
          cwd: root,
          encoding: 'utf8',
          env: { ...childEnv(), METACATALOG_SIGNING_KEY: 'k'.repeat(43) },
          timeout: 20_000,
        },
      );
      // It got as far as listening (the address is impossible on purpose), so the key was accepted.
      expect(child.stderr).toContain('cannot listen on 256.0.0.1:1');
      expect(child.status).toBe(1);
    });

    it('refuses to start without a shared signing key (exit 1), and bad option mixes (exit 2)', () => {
      const run = (args: string[]) =>
        spawnSync(process.execPath, [cli, 'serve', ...args], { cwd: root, encoding: 'utf8', env: childEnv(), timeout: 20_000 });
      const noKey = run(['--port', '0', '--postgres', POSTGRES_URL, '--postgres-schema', schemas.freshSchema()]);
      expect(noKey.status).toBe(1);
      expect(noKey.stderr).toContain('--signing-key-file');
      expect(run(['--postgres', POSTGRES_URL, '--db', 'x.db']).status).toBe(2);
      expect(run(['--postgres', '']).status).toBe(2);
      expect(run(['--signing-key-file', 'k']).status).toBe(2);
      const badSchema = run(['--port', '0', '--postgres', POSTGRES_URL, '--postgres-schema', 'no; way', '--signing-key-file', keyFile()]);
      expect(badSchema.status).toBe(1);
      expect(badSchema.stderr).toContain('cannot open the database');
    });
  });
});
