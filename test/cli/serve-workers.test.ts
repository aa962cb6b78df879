import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, CLI, withCatalog } from './helpers';
import { call, callUntil, follow, spawnWorkers, waitForOutput, type Answer, type Cluster } from './workers';

// Runs the built CLI (dist/cli.js): `npm test` builds first. `serve --workers 2` on one SQLite file.

const dirs: string[] = [];
const running: Cluster[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-workers-'));
  dirs.push(dir);
  return join(dir, 'catalog.db');
}

/** A cluster on `db`; stopped after the test that started it, unless `shared` (then its describe block stops it). */
async function start(db: string, { shared = false } = {}): Promise<Cluster & { token: string }> {
  const c = await spawnWorkers(2, ['--db', db, '--quiet']);
  if (!shared) running.push(c);
  if (!c.token) throw new Error(`no bootstrap token: ${c.output()}`);
  return c as Cluster & { token: string };
}

const datasetUrn = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const aspectPath = (urn: string, aspect = 'datasetProperties') => `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/${aspect}`;

function graphql(port: number, token: string, query: string, variables: Record<string, unknown>): Promise<Answer> {
  return call(port, 'POST', '/api/graphql', { token, body: { query, variables } });
}

const SEARCH =
  'query s($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn } } } }';

interface FeedEvent {
  id: string;
  entityUrn: string;
  aspectName: string;
  changeType: string;
}

/** The whole feed after `after`, read page by page (no streaming). */
async function readFeed(port: number, token: string, after?: string): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let cursor = after;
  for (;;) {
    const page = await call(port, 'GET', `/openapi/v2/changes?limit=1000${cursor ? `&after=${cursor}` : ''}`, { token });
    expect(page.status).toBe(200);
    const { events: got, next } = page.json<{ events: FeedEvent[]; next: string }>();
    events.push(...got);
    if (got.length === 0) return events;
    cursor = next;
  }
}

/** Pids of the workers by id, from their `listening` lines. */
function workerPids(output: string): Map<string, number> {
  return new Map([...output.matchAll(/worker (\d+) \(pid (\d+)\): listening on/g)].map((m) => [m[1]!, Number(m[2])]));
}

// A cluster starts two workers one after the other (seconds on a busy machine): the tests that do not end their
// cluster share one, in the order written, and the last of them stops it.
describe('metacatalog serve --workers 2 (SQLite), one cluster', { timeout: 120_000 }, () => {
  const db = tempDb();
  let c: Cluster & { token: string };
  beforeAll(async () => {
    c = await start(db, { shared: true });
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('prints one bootstrap token; a write through one worker is found by a search through the other; revocation holds on every worker at once', async () => {
    expect(c.output().match(/^export METACATALOG_TOKEN=/gm)).toHaveLength(1);

    const urn = datasetUrn('crosswalk');
    const written = await call(c.port, 'POST', aspectPath(urn), {
      token: c.token,
      body: { name: 'crosswalk', description: 'the zebrafinch table' },
    });
    expect(written.status).toBe(200);
    expect(written.worker).toMatch(/^\d+$/);

    const searched = await callUntil(
      (w) => w !== undefined && w !== written.worker,
      () => graphql(c.port, c.token, SEARCH, { input: { types: ['DATASET'], query: 'zebrafinch', start: 0, count: 10 } }),
    );
    expect(searched.status).toBe(200);
    expect(searched.json<{ data: unknown }>().data).toEqual({ searchAcrossEntities: { total: 1, searchResults: [{ entity: { urn } }] } });
    const read = await callUntil(
      (w) => w !== written.worker,
      () => call(c.port, 'GET', aspectPath(urn), { token: c.token }),
    );
    expect(read.json()).toEqual({ value: { name: 'crosswalk', description: 'the zebrafinch table' } });

    // A second token works on both workers; once revoked through one, it fails on both.
    const created = await graphql(
      c.port,
      c.token,
      'mutation t($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { accessToken metadata { id } } }',
      { input: { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_DAY', name: 'revoked soon' } },
    );
    const { accessToken, metadata } = created.json<{ data: { createAccessToken: { accessToken: string; metadata: { id: string } } } }>()
      .data.createAccessToken;
    const before = await Promise.all(Array.from({ length: 6 }, () => call(c.port, 'GET', aspectPath(urn), { token: accessToken })));
    expect(before.map((a) => a.status)).toEqual(Array(6).fill(200));
    expect(new Set(before.map((a) => a.worker)).size).toBe(2);
    const revoked = await graphql(c.port, c.token, 'mutation r($id: String!) { revokeAccessToken(tokenId: $id) }', { id: metadata.id });
    expect(revoked.json<{ data: unknown }>().data).toEqual({ revokeAccessToken: true });
    const after: Answer[] = [];
    for (let i = 0; i < 8; i++) after.push(await call(c.port, 'GET', aspectPath(urn), { token: accessToken }));
    expect(after.map((a) => a.status)).toEqual(Array(8).fill(401));
    expect(new Set(after.map((a) => a.worker)).size).toBe(2);
  });

  it('a follower on one worker receives what is written through the other, in commit order, without gaps', async () => {
    const head = (await readFeed(c.port, c.token)).at(-1)?.id;
    const follower = await follow(c.port, c.token, head);
    try {
      // One write at a time, each on a new connection: they alternate between the workers.
      const sequential: Answer[] = [];
      const urns = Array.from({ length: 16 }, (_, i) => datasetUrn(`sequential${i}`));
      for (const urn of urns) sequential.push(await call(c.port, 'POST', aspectPath(urn), { token: c.token, body: { name: urn } }));
      expect(sequential.map((a) => a.status)).toEqual(Array(16).fill(200));
      expect(sequential.filter((a) => a.worker !== follower.worker).length).toBeGreaterThan(0);

      // Then concurrent writes through both workers.
      const concurrent = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          call(c.port, 'POST', aspectPath(datasetUrn(`concurrent${i}`)), { token: c.token, body: { name: `c${i}` } }),
        ),
      );
      expect(concurrent.map((a) => a.status)).toEqual(Array(40).fill(200));
      expect(new Set(concurrent.map((a) => a.worker)).size).toBe(2);

      const feed = await readFeed(c.port, c.token, head);
      await follower.waitFor(feed.length);
      // Exactly the feed: every event once, none missing, in id order.
      expect(follower.events.map((e) => e.id)).toEqual(feed.map((e) => e.id));
      const ids = follower.events.map((e) => BigInt(e.id));
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      const datasets = follower.events.filter((e) => e.aspectName === 'datasetProperties').map((e) => e.entityUrn);
      expect(datasets.slice(0, 16)).toEqual(urns);
      expect(new Set(datasets.slice(16))).toEqual(new Set(Array.from({ length: 40 }, (_, i) => datasetUrn(`concurrent${i}`))));
      expect(datasets).toHaveLength(56);
    } finally {
      follower.close();
    }
  });

  it('a background job queued under load runs once: a truncation in units, each unit once', async () => {
    const dataset = datasetUrn('profiled');
    const rows = Array.from({ length: 200 }, (_, i) => ({ timestampMillis: 1_700_000_000_000 + i, rowCount: i }));
    // Appended by another process's catalog on the same file while the workers serve it.
    await withCatalog(db, (catalog) => catalog.timeseries.append(ADMIN, dataset, 'datasetProfile', rows));
    const head = (await readFeed(c.port, c.token)).at(-1)?.id;

    let loading = true;
    const acknowledged: Answer[] = [];
    const writer = async (n: number) => {
      for (let i = 0; loading; i++) {
        acknowledged.push(
          await call(c.port, 'POST', aspectPath(datasetUrn(`load${n}.${i}`)), { token: c.token, body: { name: `${n}.${i}` } }),
        );
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(writer));
    await new Promise((r) => setTimeout(r, 200));
    const asked = await call(c.port, 'POST', '/gms/operations?action=truncateTimeseriesAspect', {
      token: c.token,
      body: {
        entityType: 'dataset',
        aspect: 'datasetProfile',
        endTimeMillis: 1_700_000_000_099,
        dryRun: false,
        batchSize: 10,
        forceDeleteByQuery: true,
      },
    });
    expect(asked.status).toBe(200);
    const taskId = asked.json<{ value: string }>().value;
    let status: { completed: boolean; status: { state: string; rowsDeleted: number; rowsToDelete: number; batches: number } };
    for (;;) {
      const answer = await call(c.port, 'POST', '/gms/operations?action=getEsTaskStatus', { token: c.token, body: { task: taskId } });
      status = JSON.parse(answer.json<{ value: string }>().value) as typeof status;
      if (status.completed) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    loading = false;
    await load;
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.every((a) => a.status === 200)).toBe(true);
    expect(new Set(acknowledged.map((a) => a.worker)).size).toBe(2);

    // 100 rows in batches of 10: ten full units and a last one that finds fewer than 10. A unit done
    // twice would count an eleventh full batch (or a retry), and a second end would record a second event.
    expect(status.status).toMatchObject({ state: 'completed', rowsToDelete: 100, rowsDeleted: 100, batches: 11 });
    const truncations = (await readFeed(c.port, c.token, head)).filter((e) => e.changeType === 'TRUNCATE');
    expect(truncations.map((e) => e.entityUrn)).toEqual([`urn:li:timeseriesTruncation:${taskId}`]);
    const left = await call(c.port, 'GET', `/openapi/v2/timeseries/dataset/datasetProfile?urn=${encodeURIComponent(dataset)}&count=1000`, {
      token: c.token,
    });
    expect(left.json<{ results: unknown[] }>().results).toHaveLength(100);
  });

  it('a killed worker is replaced while the other keeps answering; the replacement prints no token', async () => {
    const pids = workerPids(c.output());
    expect([...pids.keys()].sort()).toEqual(['1', '2']);
    process.kill(pids.get('2')!, 'SIGKILL');
    // Once the primary knows (a connection handed over at the very moment of the kill dies with the
    // worker), the worker left answers every request until the replacement is there.
    await waitForOutput(
      c.output,
      new RegExp(`worker 2 \\(pid ${pids.get('2')}\\) died \\(signal SIGKILL\\); starting a new one in \\d+ ms`),
      () => c.child.exitCode !== null,
      'the death was not seen',
    );
    const during: Answer[] = [];
    for (let i = 0; i < 10; i++) during.push(await call(c.port, 'GET', '/openapi/v2/entity/dataset', { token: c.token }));
    expect(during.map((a) => a.status)).toEqual(Array(10).fill(200));

    await waitForOutput(c.output, /worker 3 \(pid \d+\): listening on/, () => c.child.exitCode !== null, 'no replacement');
    const fromReplacement = await callUntil(
      (w) => w === '3',
      () => call(c.port, 'GET', '/openapi/v2/entity/dataset', { token: c.token }),
    );
    expect(fromReplacement.status).toBe(200);
    expect(c.output().match(/^export METACATALOG_TOKEN=/gm)).toHaveLength(1);
    expect(await c.stop()).toBe(0);
    expect(c.output()).toContain('metacatalog: stopped\n');
  });
});

describe('metacatalog serve --workers 2 (SQLite), a cluster each', { timeout: 120_000 }, () => {
  it('gives up, stopping the workers left, when replacements keep dying before they serve', async () => {
    const db = tempDb();
    const c = await start(db);
    // Every new worker now refuses the key file (others may read it) and exits at start.
    chmodSync(`${db}.signing-key`, 0o644);
    process.kill(workerPids(c.output()).get('2')!, 'SIGKILL');
    expect(await c.exit).toBe(1);
    const output = c.output();
    expect(output).toContain('giving up: 5 workers in a row died before they could serve');
    expect(output.match(/died \(exit code 1\); starting a new one in/g)).toHaveLength(4);
    expect(output).toMatch(/worker 1 \(pid \d+\): stopped/);
    expect(output).toContain('metacatalog: stopped\n');
  });

  it('refuses --workers that is not a count, and several workers on :memory: (exit 2)', () => {
    for (const [args, message] of [
      [['--workers', '0'], '--workers must be a number from 1 to 256 or auto'],
      [['--workers', 'many'], '--workers must be a number from 1 to 256 or auto'],
      [['--workers', '2', '--db', ':memory:'], 'each worker would have its own :memory: database'],
    ] as const) {
      const r = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', ...args], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
