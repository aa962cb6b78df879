import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { printTable, type Figure } from './harness';
import { seedSearchCatalog } from './seed-search';
import { startServe, stopServe, type ServeProcess } from './serve-process';

/**
 * `npm run bench -- edges`: the SQLite catalog away from its steady state (docs/operations.md).
 *
 * - A fresh catalog: a file made by a CLI command (`properties upsert`), then served; writes/s of its
 *   first 10 s against its 4th 10 s.
 * - Single-aspect REST writes on a warm file (20,000 datasets), one process, 16 connections, durability full.
 * - `serve --workers 2` against one process on the same warm file: writes, then GraphQL searches.
 * - Embedded: the host's event-loop delay (p99, perf_hooks.monitorEventLoopDelay) while 16 writers
 *   commit, with the commit's sync off the event loop, against the sync inside COMMIT (0.3's way) and
 *   against an idle loop.
 *
 * The HTTP load comes from `wrk` (a C generator: one thread, 16 connections), so the cores measured are
 * not spent generating load. Every run prints the load average it met.
 */

const ADMIN = 'urn:li:corpuser:admin';
const HOST = '127.0.0.1';
const root = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(root, 'dist/cli.js');
const WRK = process.env.METACATALOG_BENCH_WRK ?? '/usr/bin/wrk';
const CONNECTIONS = 16;
const WINDOW_S = 10;
const WARM_ENTITIES = 20_000;

// ---------------------------------------------------------------------------------------------
// wrk
// ---------------------------------------------------------------------------------------------

/** POSTs of datasetProperties, each to a new dataset URN (per thread, per run label). */
const WRITE_SCRIPT = `
local label = "w"
local n = 0
function init(args) label = args[1] or "w" end
request = function()
  n = n + 1
  local urn = "urn:li:dataset:(urn:li:dataPlatform:wrk," .. label .. ".n" .. n .. ",PROD)"
  local path = "/openapi/v2/entity/dataset/" .. urn:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end) .. "/datasetProperties"
  return wrk.format("POST", path, nil, '{"name":"t' .. n .. '","description":"written by wrk"}')
end
`;

/** GraphQL searches for a word among a fixed list, round robin. */
function searchScript(words: readonly string[]): string {
  const list = words.map((w) => `"${w}"`).join(',');
  return `
local words = {${list}}
local n = 0
request = function()
  n = n + 1
  local word = words[(n % #words) + 1]
  local body = '{"query":"query s($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn } } } }","variables":{"input":{"types":["DATASET"],"query":"' .. word .. '","start":0,"count":10}}}'
  return wrk.format("POST", "/api/graphql", nil, body)
end
`;
}

interface WrkResult {
  requests: number;
  perSecond: number;
  p99Ms: number;
  errors: number;
}

function parseWrk(text: string): WrkResult {
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const p99 = /99%\s+([\d.]+)(us|ms|s)\b/.exec(text);
  const p99Ms = p99 ? Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = non2xx + (socket ? socket.slice(1).reduce((s, n) => s + Number(n), 0) : 0);
  return { requests, perSecond, p99Ms, errors };
}

async function wrk(port: number, token: string, script: string, seconds: number, label: string): Promise<WrkResult> {
  const args = [
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    '--latency',
    '-H',
    `Authorization: Bearer ${token}`,
    '-H',
    'Content-Type: application/json',
    '-s',
    script,
    `http://${HOST}:${port}`,
    '--',
    label,
  ];
  const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${out}`);
  return parseWrk(out);
}

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

type Service = ServeProcess;

function startService(db: string, workers: number): Promise<Service> {
  const ready = workers === 1 ? /listening on http:\/\/[^:]+:(\d+)/ : new RegExp(`${workers} workers listening on http://[^:]+:(\\d+)`);
  return startServe(CLI, ['--db', db, '--port', '0', '--host', HOST, '--quiet', '--bootstrap-token', '--workers', String(workers)], ready);
}

const stopService = stopServe;

function runCli(args: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`metacatalog ${args.join(' ')} exited with ${code}`)))),
  );
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

// ---------------------------------------------------------------------------------------------
// The figures
// ---------------------------------------------------------------------------------------------

/** The warm file and its search terms (single words only: they go into GraphQL query text). */
async function seedWarm(file: string): Promise<string[]> {
  return (await seedSearchCatalog(file, WARM_ENTITIES)).filter((w) => /^[a-z0-9]+$/i.test(w));
}

/** A catalog made by `properties upsert` on a new file, then served: writes/s per 10 s window. */
async function freshCatalogWindows(directory: string, writeScript: string): Promise<WrkResult[]> {
  const file = join(directory, 'fresh.db');
  const yaml = join(directory, 'properties.yaml');
  writeFileSync(yaml, '- id: io.bench.tier\n  type: string\n  entity_types: [dataset]\n');
  await runCli(['properties', 'upsert', '-f', yaml, '--db', file]);
  const service = await startService(file, 1);
  try {
    const windows: WrkResult[] = [];
    for (let i = 0; i < 4; i++) windows.push(await wrk(service.port, service.token, writeScript, WINDOW_S, `fresh${i}`));
    return windows;
  } finally {
    await stopService(service);
  }
}

async function serviceRun(file: string, workers: number, script: string, label: string): Promise<WrkResult> {
  const service = await startService(file, workers);
  try {
    // Warm up (not counted): every worker's caches and statements.
    await wrk(service.port, service.token, script, 3, `${label}warm`);
    return await wrk(service.port, service.token, script, WINDOW_S, label);
  } finally {
    await stopService(service);
  }
}

/** Embedded: 16 writers on a SQLite file for `seconds`; the host's event-loop delay meanwhile. */
async function embeddedDelay(directory: string, seconds: number, syncOffEventLoop: boolean | 'idle') {
  const file = join(directory, `embedded-${String(syncOffEventLoop)}.db`);
  const adapter = createSqliteAdapter({ filename: file, durability: 'full', syncOffEventLoop: syncOffEventLoop !== false });
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.entities.upsertAspect(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,warm,PROD)', 'datasetProperties', { name: 'w' });
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  // A note beside the figure (not the figure): the second half alone, after the JIT's first seconds.
  const secondHalf = monitorEventLoopDelay({ resolution: 1 });
  const half = setTimeout(() => secondHalf.enable(), (seconds * 1000) / 2);
  let writes = 0;
  const deadline = performance.now() + seconds * 1000;
  histogram.enable();
  if (syncOffEventLoop === 'idle') await new Promise((r) => setTimeout(r, seconds * 1000));
  else
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; performance.now() < deadline; i++) {
          await catalog.entities.upsertAspect(ADMIN, `urn:li:dataset:(urn:li:dataPlatform:hive,e${w}.n${i},PROD)`, 'datasetProperties', {
            name: `n${i}`,
            description: `writer ${w}`,
          });
          writes++;
        }
      }),
    );
  histogram.disable();
  secondHalf.disable();
  clearTimeout(half);
  await catalog.close();
  return {
    p99Ms: histogram.percentile(99) / 1e6,
    maxMs: histogram.max / 1e6,
    writesPerSecond: writes / seconds,
    secondHalfP99Ms: secondHalf.percentile(99) / 1e6,
  };
}

export async function runEdgesStorageBench(options: { seconds?: number } = {}): Promise<Figure[]> {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-edges-'));
  const writeScript = join(directory, 'writes.lua');
  writeFileSync(writeScript, WRITE_SCRIPT);
  const figures: Figure[] = [];
  const notes: string[] = [];
  // METACATALOG_BENCH_EDGES=embedded,fresh,warm picks parts (all by default).
  const parts = new Set((process.env.METACATALOG_BENCH_EDGES ?? 'embedded,fresh,warm').split(','));
  try {
    // 1. Embedded: the host's event loop while 16 writers commit.
    const seconds = options.seconds ?? 8;
    if (parts.has('embedded')) {
      const idle = await embeddedDelay(directory, seconds, 'idle');
      const inCommit = await embeddedDelay(directory, seconds, false);
      const offLoop = await embeddedDelay(directory, seconds, true);
      notes.push(
        `embedded, 16 writers, ${seconds} s each (load ${load()}): sync off the loop p99 ${offLoop.p99Ms.toFixed(2)} ms (second half alone ${offLoop.secondHalfP99Ms.toFixed(2)} ms), max ${offLoop.maxMs.toFixed(1)} ms, ${Math.round(offLoop.writesPerSecond)} writes/s; ` +
          `sync in COMMIT p99 ${inCommit.p99Ms.toFixed(2)} ms, max ${inCommit.maxMs.toFixed(1)} ms, ${Math.round(inCommit.writesPerSecond)} writes/s; idle loop p99 ${idle.p99Ms.toFixed(2)} ms`,
      );
      figures.push({
        workload: 'edges: host event-loop delay p99, embedded, 16 writers (vs sync inside COMMIT)',
        unit: 'ms',
        value: offLoop.p99Ms,
        baseline: inCommit.p99Ms,
        baselineName: 'sync in COMMIT',
        better: 'lower',
        goal: '≤ 2 ms',
        met: offLoop.p99Ms <= 2,
      });
    }

    // 2. A fresh catalog: first 10 s against the 4th.
    if (parts.has('fresh')) {
      const windows = await freshCatalogWindows(directory, writeScript);
      notes.push(
        `fresh catalog (load ${load()}): writes/s per ${WINDOW_S} s window ${windows.map((w) => Math.round(w.perSecond)).join(', ')}; errors ${windows.map((w) => w.errors).join(', ')}`,
      );
      figures.push({
        workload: 'edges: first 10 s of writes on a CLI-created catalog (vs its 4th 10 s)',
        unit: 'writes/s',
        value: windows[0]!.perSecond,
        baseline: windows[3]!.perSecond,
        baselineName: '4th 10 s',
        better: 'higher',
        goal: '≥ 0.9×',
        met: windows[0]!.perSecond >= 0.9 * windows[3]!.perSecond,
      });
    }

    // 3. A warm file: one process against two, writes and searches.
    if (parts.has('warm')) {
      const warm = join(directory, 'warm.db');
      const words = await seedWarm(warm);
      const searchFile = join(directory, 'search.lua');
      writeFileSync(searchFile, searchScript(words));
      const copy = (name: string) => {
        const target = join(directory, name);
        copyFileSync(warm, target);
        return target;
      };
      const oneWrites = await serviceRun(copy('w1.db'), 1, writeScript, 'one');
      const twoWrites = await serviceRun(copy('w2.db'), 2, writeScript, 'two');
      const oneReads = await serviceRun(copy('r1.db'), 1, searchFile, 'r1');
      const twoReads = await serviceRun(copy('r2.db'), 2, searchFile, 'r2');
      notes.push(
        `warm file, ${WARM_ENTITIES} datasets, ${CONNECTIONS} connections (load ${load()}): writes 1 process ${Math.round(oneWrites.perSecond)}/s p99 ${oneWrites.p99Ms} ms, ` +
          `2 workers ${Math.round(twoWrites.perSecond)}/s p99 ${twoWrites.p99Ms} ms; searches 1 process ${Math.round(oneReads.perSecond)}/s, 2 workers ${Math.round(twoReads.perSecond)}/s; ` +
          `errors ${[oneWrites, twoWrites, oneReads, twoReads].map((r) => r.errors).join(', ')}`,
      );
      figures.push({
        workload: 'edges: single-aspect REST writes, warm, one process, durability full',
        unit: 'writes/s',
        value: oneWrites.perSecond,
        better: 'higher',
        goal: '≥ 2,000/s (on a quiet machine)',
        met: oneWrites.perSecond >= 2_000,
      });
      figures.push({
        workload: 'edges: writes with --workers 2 (vs one process)',
        unit: 'writes/s',
        value: twoWrites.perSecond,
        baseline: oneWrites.perSecond,
        baselineName: '1 process',
        better: 'higher',
        goal: '≥ 1.0×',
        met: twoWrites.perSecond >= oneWrites.perSecond,
      });
      figures.push({
        workload: 'edges: GraphQL searches with --workers 2 (vs one process)',
        unit: 'searches/s',
        value: twoReads.perSecond,
        baseline: oneReads.perSecond,
        baselineName: '1 process',
        better: 'higher',
        goal: '≥ 1.5×',
        met: twoReads.perSecond >= 1.5 * oneReads.perSecond,
      });
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  printTable('edges (SQLite: fresh catalog, workers, embedded commits)', figures);
  for (const note of notes) console.log(`  ${note}`);
  return figures;
}
