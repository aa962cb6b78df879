import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { request } from 'node:http';
import { CLI, ROOT } from './helpers';

/** Helpers for `serve --workers N`: the supervised service, requests that say which worker answered. */

export interface Cluster {
  child: ChildProcessWithoutNullStreams;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  token: string | undefined;
  /** stdout then stderr so far. */
  output(): string;
  exit: Promise<number | null>;
  /** SIGTERM to the primary, then its exit code. */
  stop(): Promise<number | null>;
}

/** Waits (60 s at most: workers start one after the other) until `pattern` is in the output. */
export async function waitForOutput(output: () => string, pattern: RegExp, exited: () => boolean, what: string): Promise<RegExpExecArray> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const match = pattern.exec(output());
    if (match) return match;
    if (exited() || Date.now() > deadline) throw new Error(`${what}: ${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Spawns `metacatalog serve --port 0 --workers N <args>` and waits until every worker listens. */
export async function spawnWorkers(workers: number, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Cluster> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--workers', String(workers), ...args], { cwd: ROOT, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const output = () => out + err;
  const listening = await waitForOutput(
    output,
    new RegExp(`${workers} workers listening on (http://\\S+)`),
    () => child.exitCode !== null,
    'the workers did not start',
  );
  const url = listening[1]!.replace(/\/$/, '');
  return {
    child,
    url,
    port: Number(new URL(url).port),
    token: /^export METACATALOG_TOKEN=(\S+)$/m.exec(out)?.[1],
    output,
    exit,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exit;
    },
  };
}

export interface Answer {
  status: number;
  /** The `X-Metacatalog-Worker` header: which worker answered. */
  worker: string | undefined;
  body: string;
  json<T = unknown>(): T;
}

/**
 * One request on a connection of its own: the cluster hands each new connection to the next worker,
 * so a series of these reaches every worker (a kept-alive connection would stay with one).
 */
export function call(
  port: number,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const worker = res.headers['x-metacatalog-worker'];
          resolve({
            status: res.statusCode ?? 0,
            worker: Array.isArray(worker) ? worker[0] : worker,
            body: text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // A hung request fails the test with a message rather than its timeout.
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    req.end(body);
  });
}

/** Calls until an answer comes from a worker `accept` takes (at most 20 connections); that answer. */
export async function callUntil(accept: (worker: string | undefined) => boolean, send: () => Promise<Answer>): Promise<Answer> {
  const seen: Array<string | undefined> = [];
  for (let i = 0; i < 20; i++) {
    const answer = await send();
    if (accept(answer.worker)) return answer;
    seen.push(answer.worker);
  }
  throw new Error(`no answer from the wanted worker; answers came from ${seen.join(', ')}`);
}

export interface Follower {
  /** The worker the stream is connected to. */
  worker: string | undefined;
  /** The events received so far, in order. */
  events: Array<{ id: string; entityUrn: string; aspectName: string }>;
  /** Resolves once `count` events have arrived (rejects after 30 s). */
  waitFor(count: number): Promise<void>;
  close(): void;
}

/** A change-feed follower: `GET /openapi/v2/changes` as server-sent events, after `after`. */
export function follow(port: number, token: string, after?: string): Promise<Follower> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/openapi/v2/changes${after ? `?after=${encodeURIComponent(after)}` : ''}`,
        agent: false,
        headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` },
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`the change feed answered ${res.statusCode}`));
          return;
        }
        const events: Follower['events'] = [];
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          let end: number;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            const data = /^data: ?(.*)$/m.exec(block)?.[1];
            if (data !== undefined) events.push(JSON.parse(data) as Follower['events'][number]);
          }
        });
        res.on('error', () => undefined);
        const worker = res.headers['x-metacatalog-worker'];
        resolve({
          worker: Array.isArray(worker) ? worker[0] : worker,
          events,
          async waitFor(count) {
            const deadline = Date.now() + 30_000;
            while (events.length < count) {
              if (Date.now() > deadline) throw new Error(`the follower received ${events.length} of ${count} events`);
              await new Promise((r) => setTimeout(r, 10));
            }
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
