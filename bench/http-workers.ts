import { fork, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, printTable, type Figure } from './harness';
import { seedSearchCatalog } from './seed-search';

/**
 * `serve --workers 1` against `serve --workers 2` on the same SQLite catalog, in one run: a mixed load
 * (64 searchers and 16 writers, each on its own kept-alive connection) and a read-only one (64
 * searchers), each for `seconds`, twice per worker count, interleaved (1, 2, 1, 2) so that a change
 * in what else the machine runs touches both alike. Each run starts from a copy of the same seeded
 * file and warms up (the mixed load for `seconds`, not counted: a cold worker answers its first searches in seconds). The load comes from a separate process (this file forked with METACATALOG_BENCH_LOAD=1), so
 * that the service's processes and the generator are scheduled by the kernel side by side; the CPU
 * seconds each side used are printed with the figures.
 */

const HOST = '127.0.0.1';
const root = fileURLToPath(new URL('../../', import.meta.url));
const LOAD_ENV = 'METACATALOG_BENCH_LOAD';

interface LoadRequest {
  port: number;
  token: string;
  seconds: number;
  searchers: number;
  writers: number;
  words: string[];
  label: string;
}

interface LoadReport {
  seconds: number;
  reads: number;
  writes: number;
  errors: number;
  errorSamples: string[];
  readP50: number;
  readP99: number;
  writeP99: number;
  /** CPU seconds the generator used. */
  cpuSeconds: number;
}

// ---------------------------------------------------------------------------------------------
// The load generator (the forked process)
// ---------------------------------------------------------------------------------------------

function post(
  agent: Agent,
  port: number,
  path: string,
  body: string,
  token: string,
  method = 'POST',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: HOST,
        port,
        method,
        path,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function generateLoad(job: LoadRequest): Promise<LoadReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: job.searchers + job.writers });
  const reads: number[] = [];
  const writes: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.seconds * 1000;
  const user = async (n: number, writer: boolean) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const urn = `urn:li:dataset:(urn:li:dataPlatform:load,${job.label}.w${n}.n${i},PROD)`;
      const path = writer ? `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties` : '/api/graphql';
      const body = writer
        ? JSON.stringify({ name: `load ${n} ${i}`, description: `written by writer ${n}` })
        : JSON.stringify({
            query:
              'query s($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn } } } }',
            variables: { input: { types: ['DATASET'], query: job.words[(n * 7 + i) % job.words.length], start: 0, count: 10 } },
          });
      const t0 = performance.now();
      try {
        const answer = await post(agent, job.port, path, body, job.token);
        (writer ? writes : reads).push(performance.now() - t0);
        if (answer.status !== 200 || (!writer && answer.text.includes('"errors"'))) {
          errors++;
          if (errorSamples.length < 3) errorSamples.push(`${answer.status} ${answer.text.slice(0, 160)}`);
        }
      } catch (error) {
        errors++;
        if (errorSamples.length < 3) errorSamples.push(String(error));
      }
    }
  };
  await Promise.all([
    ...Array.from({ length: job.searchers }, (_, n) => user(n, false)),
    ...Array.from({ length: job.writers }, (_, n) => user(n, true)),
  ]);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const used = process.cpuUsage(cpu);
  return {
    seconds,
    reads: reads.length,
    writes: writes.length,
    errors,
    errorSamples,
    readP50: percentile(reads, 50),
    readP99: percentile(reads, 99),
    writeP99: writes.length ? percentile(writes, 99) : NaN,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

if (process.env[LOAD_ENV] === '1') {
  process.once('message', (job: LoadRequest) => {
    void generateLoad(job).then((report) => process.send!(report, () => process.disconnect()));
  });
}

// ---------------------------------------------------------------------------------------------
// The service and the runs (the bench process)
// ---------------------------------------------------------------------------------------------

/** CPU seconds used so far by these processes (Linux /proc; 0 elsewhere). */
function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone, or not Linux
    }
  }
  return ticks / 100;
}

interface Service {
  child: ChildProcess;
  port: number;
  token: string;
  /** The primary and every worker. */
  pids: number[];
}

async function startService(db: string, workers: number): Promise<Service> {
  const child = spawn(
    process.execPath,
    [
      join(root, 'dist/cli.js'),
      'serve',
      '--db',
      db,
      '--port',
      '0',
      '--host',
      HOST,
      '--quiet',
      '--bootstrap-token',
      '--workers',
      String(workers),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const ready = workers === 1 ? /listening on http:\/\/[^:]+:(\d+)/ : new RegExp(`${workers} workers listening on http://[^:]+:(\\d+)`);
  const deadline = Date.now() + 120_000;
  while (!ready.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve --workers ${workers} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const token = /export METACATALOG_TOKEN=(\S+)/.exec(out)?.[1];
  if (!token) throw new Error(`no bootstrap token: ${out}`);
  const workerPids = [...out.matchAll(/worker \d+ \(pid (\d+)\)/g)].map((m) => Number(m[1]));
  return { child, port: Number(ready.exec(out)![1]), token, pids: [child.pid!, ...workerPids] };
}

async function stopService(service: Service): Promise<void> {
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;
}

function runLoad(job: LoadRequest): Promise<LoadReport> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, [LOAD_ENV]: '1' }, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (report) => resolve(report as LoadReport));
    child.once('exit', (code) => reject(new Error(`the load generator exited with ${code} before reporting`)));
    child.send(job);
  });
}

/**
 * How long an event takes to reach a change-feed follower (server-sent events) on one worker, from the
 * moment its write is sent: writes answered by the follower's own worker (woken by the commit) against
 * writes answered by the other worker (SQLite: found by the 20 ms poll of PRAGMA data_version). One
 * write at a time, each on a new connection, so they alternate between the workers.
 */
async function followerLatency(service: Service, samples: number): Promise<{ same: number[]; other: number[] }> {
  // The head of the feed: a read that matches nothing moves its cursor past every event.
  const head = await post(
    new Agent({ keepAlive: false }),
    service.port,
    '/openapi/v2/changes?aspects=noSuchAspect&limit=1',
    '',
    service.token,
    'GET',
  );
  const after = (JSON.parse(head.text) as { next: string }).next;
  const arrivals = new Map<string, number>();
  let followerWorker: string | undefined;
  const stream = await new Promise<import('node:http').ClientRequest>((resolve, reject) => {
    const req = request(
      {
        host: HOST,
        port: service.port,
        path: `/openapi/v2/changes?after=${after}`,
        agent: false,
        headers: { accept: 'text/event-stream', authorization: `Bearer ${service.token}` },
      },
      (res) => {
        followerWorker = String(res.headers['x-metacatalog-worker']);
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (d: string) => {
          text += d;
          for (const m of text.matchAll(/"entityUrn":"([^"]+)"/g)) if (!arrivals.has(m[1]!)) arrivals.set(m[1]!, performance.now());
          text = text.slice(Math.max(0, text.lastIndexOf('\n\n')));
        });
        res.on('error', () => undefined);
        resolve(req);
      },
    );
    req.on('error', reject);
    req.end();
  });
  if (followerWorker === 'undefined') throw new Error('the follower got no worker header');
  const same: number[] = [];
  const other: number[] = [];
  const agent = new Agent({ keepAlive: false });
  for (let i = 0; i < samples; i++) {
    const urn = `urn:li:dataset:(urn:li:dataPlatform:follow,f${i},PROD)`;
    const sent = performance.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const body = JSON.stringify({ name: `f${i}` });
      const req = request(
        {
          agent,
          host: HOST,
          port: service.port,
          method: 'POST',
          path: `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Bearer ${service.token}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['x-metacatalog-worker'])));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    const deadline = performance.now() + 5_000;
    while (!arrivals.has(urn) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    const arrived = arrivals.get(urn);
    if (arrived !== undefined) (answer === followerWorker ? same : other).push(arrived - sent);
  }
  agent.destroy();
  stream.destroy();
  return { same, other };
}

interface Run {
  workers: number;
  mixed: LoadReport & { serviceCpu: number };
  readOnly: LoadReport & { serviceCpu: number };
}

export async function runHttpWorkersBench(options: { seconds?: number; entities?: number; rounds?: number } = {}): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-http-workers-'));
  const seconds = options.seconds ?? 10;
  const rounds = options.rounds ?? 2;
  const entities = options.entities ?? 20_000;
  try {
    const seeded = join(dir, 'seeded.db');
    const words = await seedSearchCatalog(seeded, entities);
    console.log(
      `http-workers: ${entities} datasets; per run ${seconds} s mixed (64 searchers, 16 writers) then ${seconds} s read-only (64 searchers); ` +
        `${rounds} rounds of --workers 1 and 2, interleaved; ${availableParallelism()} cores, shared by the service and the load generator`,
    );
    const runs: Run[] = [];
    let latency: { same: number[]; other: number[] } = { same: [], other: [] };
    for (let round = 0; round < rounds; round++) {
      for (const workers of [1, 2]) {
        const db = join(dir, `run-${round}-${workers}.db`);
        copyFileSync(seeded, db);
        const service = await startService(db, workers);
        try {
          const measure = async (searchers: number, writers: number, label: string, forSeconds = seconds) => {
            const before = cpuSecondsOf(service.pids);
            const report = await runLoad({
              port: service.port,
              token: service.token,
              seconds: forSeconds,
              searchers,
              writers,
              words,
              label,
            });
            return { ...report, serviceCpu: cpuSecondsOf(service.pids) - before };
          };
          // Not counted: every worker warms its JIT, its page cache and its prepared statements.
          await measure(64, 16, `r${round}w${workers}warm`);
          const mixed = await measure(64, 16, `r${round}w${workers}`);
          const readOnly = await measure(64, 0, `r${round}w${workers}ro`);
          runs.push({ workers, mixed, readOnly });
          if (workers === 2 && round === rounds - 1) latency = await followerLatency(service, 60);
          for (const [phase, r] of [
            ['mixed', mixed],
            ['read-only', readOnly],
          ] as const) {
            console.log(
              `http-workers: round ${round + 1}, --workers ${workers}, ${phase}: ${((r.reads + r.writes) / r.seconds).toFixed(0)} req/s ` +
                `(${(r.reads / r.seconds).toFixed(0)} reads/s, ${(r.writes / r.seconds).toFixed(0)} writes/s), read p50 ${r.readP50.toFixed(1)} ms, ` +
                `p99 ${r.readP99.toFixed(1)} ms, ${r.errors} errors; CPU s: service ${r.serviceCpu.toFixed(1)}, generator ${r.cpuSeconds.toFixed(1)}`,
            );
            if (r.errorSamples.length) console.log(`  error samples: ${r.errorSamples.join(' | ')}`);
          }
        } finally {
          await stopService(service);
          for (const suffix of ['', '-wal', '-shm', '.signing-key']) rmSync(`${db}${suffix}`, { force: true });
        }
      }
    }
    const of = (workers: number) => runs.filter((r) => r.workers === workers);
    const sum = (list: Run[], pick: (r: Run) => number) => list.reduce((s, r) => s + pick(r), 0);
    const throughput = (list: Run[], phase: 'mixed' | 'readOnly') =>
      sum(list, (r) => r[phase].reads + r[phase].writes) / sum(list, (r) => r[phase].seconds);
    const readsPerSecond = (list: Run[]) => sum(list, (r) => r.mixed.reads) / sum(list, (r) => r.mixed.seconds);
    /** The median over the rounds of a latency. */
    const mid = (list: Run[], pick: (r: Run) => number) => percentile(list.map(pick), 50);
    const one = of(1);
    const two = of(2);
    const errors = sum(runs, (r) => r.mixed.errors + r.readOnly.errors);
    const figures: Figure[] = [
      {
        workload: 'mixed: all requests',
        unit: 'req/s',
        value: throughput(two, 'mixed'),
        baseline: throughput(one, 'mixed'),
        baselineName: '--workers 1',
        better: 'higher',
      },
      {
        workload: 'mixed: reads',
        unit: 'req/s',
        value: readsPerSecond(two),
        baseline: readsPerSecond(one),
        baselineName: '--workers 1',
        better: 'higher',
      },
      {
        workload: 'mixed: read p99',
        unit: 'ms',
        value: mid(two, (r) => r.mixed.readP99),
        baseline: mid(one, (r) => r.mixed.readP99),
        baselineName: '--workers 1',
        better: 'lower',
      },
      {
        workload: 'mixed: write p99',
        unit: 'ms',
        value: mid(two, (r) => r.mixed.writeP99),
        baseline: mid(one, (r) => r.mixed.writeP99),
        baselineName: '--workers 1',
        better: 'lower',
      },
      {
        workload: 'read-only: searches',
        unit: 'req/s',
        value: throughput(two, 'readOnly'),
        baseline: throughput(one, 'readOnly'),
        baselineName: '--workers 1',
        better: 'higher',
        goal: '≥ 1.5× with a core budget of its own for the generator',
      },
      {
        workload: 'read-only: read p99',
        unit: 'ms',
        value: mid(two, (r) => r.readOnly.readP99),
        baseline: mid(one, (r) => r.readOnly.readP99),
        baselineName: '--workers 1',
        better: 'lower',
      },
      {
        workload: 'service CPU per read-only search',
        unit: 'ms',
        value: (1000 * sum(two, (r) => r.readOnly.serviceCpu)) / sum(two, (r) => r.readOnly.reads),
        baseline: (1000 * sum(one, (r) => r.readOnly.serviceCpu)) / sum(one, (r) => r.readOnly.reads),
        baselineName: '--workers 1',
        better: 'lower',
      },
      {
        workload: 'follower: event after its write p50',
        unit: 'ms',
        value: percentile(latency.other, 50),
        baseline: percentile(latency.same, 50),
        baselineName: 'written through its own worker',
        better: 'lower',
      },
      {
        workload: 'follower: event after its write p99',
        unit: 'ms',
        value: percentile(latency.other, 99),
        baseline: percentile(latency.same, 99),
        baselineName: 'written through its own worker',
        better: 'lower',
      },
      { workload: 'errors', unit: 'requests', value: errors, better: 'lower', goal: '0', met: errors === 0 },
    ];
    printTable('serve --workers 2 against --workers 1 (loopback, SQLite file; the ratio is 2 workers over 1)', figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
