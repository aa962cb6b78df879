import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readServerSentEvents } from '../../src/cli/sse';
import { CLI, cliEnv, requireBuiltCli, spawnServe } from './helpers';

// Runs the built CLI (dist/cli.js): `npm test` builds first.
requireBuiltCli();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const datasetUrn = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

/** A change-feed follower over server-sent events: what it saw, and how its stream ended. */
function follow(url: string, token: string, lastEventId?: string) {
  const seen: Array<{ id: string; urn: string }> = [];
  const stop = new AbortController();
  const ended = (async (): Promise<'ended' | 'failed'> => {
    const response = await fetch(`${url}/gms/openapi/v2/changes`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: stop.signal,
    });
    try {
      for await (const event of readServerSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)) {
        if (event.id !== undefined) seen.push({ id: event.id, urn: (JSON.parse(event.data!) as { entityUrn: string }).entityUrn });
      }
      return 'ended';
    } catch {
      return 'failed';
    }
  })();
  return { seen, ended, stop: () => stop.abort() };
}

async function write(url: string, token: string, name: string): Promise<number> {
  const response = await fetch(`${url}/gms/openapi/v2/entity/dataset/${encodeURIComponent(datasetUrn(name))}/datasetProperties`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  await response.body?.cancel();
  return response.status;
}

/** The ids of every event of the feed, read as a page. */
async function feedIds(url: string, token: string): Promise<string[]> {
  const response = await fetch(`${url}/gms/openapi/v2/changes?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as { events: Array<{ id: string }> }).events.map((e) => e.id);
}

/** A port free now (serve is started twice on it, as a service restarts on its own port). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `metacatalog changes --follow --json` against the server, in a child process: the events it printed. */
function followOnCommandLine(url: string, token: string) {
  const child = spawn(process.execPath, [CLI, 'changes', '--follow', '--json', '--server', `${url}/gms`, '--token', token], {
    env: cliEnv(),
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ids = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
  return { ids, stderr: () => err, stop: () => child.kill('SIGINT'), exit, running: () => child.exitCode === null };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('metacatalog serve: a graceful stop with followers attached', () => {
  it('SIGTERM ends every change-feed stream at once and exits 0; the followers (and `changes --follow`) resume from their last event id after the restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-stop-'));
    dirs.push(dir);
    const db = join(dir, 'catalog.db');
    const port = String(await freePort());
    const first = await spawnServe(['--db', db, '--quiet', '--port', port]);
    const url = first.url.replace(/\/$/, '');
    const token = first.token!;
    expect(await write(url, token, 'one')).toBe(200);
    const followers = [follow(url, token), follow(url, token)];
    const commandLine = followOnCommandLine(url, token);
    const before = await feedIds(url, token);
    await until(() => followers.every((f) => f.seen.length === before.length) && commandLine.ids().length === before.length);

    const signalled = performance.now();
    first.child.kill('SIGTERM');
    const outcomes = await Promise.all(followers.map((f) => f.ended));
    const streamsEndedMs = performance.now() - signalled;
    expect(await first.exit).toBe(0);
    const exitedMs = performance.now() - signalled;
    // The server ended the streams itself (a stream cut after the stop's bound fails instead).
    expect(outcomes).toEqual(['ended', 'ended']);
    expect(first.output()).toContain('metacatalog: stopped');

    // Back again: each follower resumes from its last event id and sees the next event once.
    // The command line's follower waits for the server to come back (same port).
    expect(commandLine.running()).toBe(true);
    const second = await spawnServe(['--db', db, '--quiet', '--port', port]);
    const again = second.url.replace(/\/$/, '');
    try {
      const resumed = followers.map((f) => follow(again, token, f.seen.at(-1)!.id));
      expect(await write(again, token, 'two')).toBe(200);
      const after = (await feedIds(again, token)).slice(before.length);
      expect(after.length).toBeGreaterThan(0);
      await until(() => resumed.every((f) => f.seen.length >= after.length));
      // Exactly the events after the last one seen: none repeated, none skipped.
      for (const f of followers) expect(f.seen.map((e) => e.id)).toEqual(before);
      for (const f of resumed) expect(f.seen.map((e) => e.id)).toEqual(after);
      for (const f of resumed) expect(new Set(f.seen.map((e) => e.urn))).toEqual(new Set([datasetUrn('two')]));
      await until(() => commandLine.ids().length >= before.length + after.length);
      expect(commandLine.ids(), commandLine.stderr()).toEqual([...before, ...after]);
      for (const f of resumed) f.stop();
      await Promise.all(resumed.map((f) => f.ended));
    } finally {
      commandLine.stop();
      await commandLine.exit;
      second.child.kill('SIGTERM');
      await second.exit;
    }
    console.log(
      `serve stop with 3 followers attached (shared machine): streams ended ${streamsEndedMs.toFixed(0)} ms, process exited ${exitedMs.toFixed(0)} ms after SIGTERM`,
    );
  }, 90_000);
});
