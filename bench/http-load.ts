import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { generateDatasets } from './generator';
import { percentile, printTable, type Figure } from './harness';

/**
 * Load on `metacatalog serve` over loopback: 50 connections for 30 s (or a request budget), half
 * GraphQL searches (entity reads when the schema has no search resolvers yet: one search is probed
 * first) and half REST aspect writes to new datasets. Afterwards every acknowledged write is
 * read back from the database file. The same client then drives a bare node:http handler (reads the
 * body, answers a small JSON) for the same time: the throughput ratio shows what the catalog costs
 * on top of node:http itself.
 */

const ADMIN = 'urn:li:corpuser:admin';
const HOST = '127.0.0.1';
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The GraphQL half of the load: what is sent and what counts as answered. */
interface GraphQLWork {
  /** `searches`, or `entity reads` when the schema has no search (searchAcrossEntities answers null). */
  label: string;
  body(i: number): string;
  answered(text: string): boolean;
}

function parse(text: string): { data?: Record<string, unknown> | null; errors?: unknown; ok?: boolean } | undefined {
  try {
    return JSON.parse(text) as { data?: Record<string, unknown> | null; errors?: unknown; ok?: boolean };
  } catch {
    return undefined;
  }
}

function searchWork(word: string): GraphQLWork {
  const body = JSON.stringify({
    query:
      'query search($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn type } } } }',
    variables: { input: { types: ['DATASET'], query: word, start: 0, count: 10 } },
    operationName: 'search',
  });
  return {
    label: `searches ("${word}")`,
    body: () => body,
    answered(text) {
      const answer = parse(text);
      if (answer?.ok === true) return true; // the bare baseline's answer
      const result = answer?.data?.searchAcrossEntities as { total?: unknown } | null | undefined;
      return answer?.errors === undefined && typeof result?.total === 'number';
    },
  };
}

function entityReadWork(urns: readonly string[]): GraphQLWork {
  return {
    label: 'entity reads (no search in this schema)',
    body: (i) =>
      JSON.stringify({
        query: 'query read($urn: String!) { entity(urn: $urn) { urn type } }',
        variables: { urn: urns[i % urns.length] },
        operationName: 'read',
      }),
    answered(text) {
      const answer = parse(text);
      if (answer?.ok === true) return true;
      return answer?.errors === undefined && typeof (answer?.data?.entity as { urn?: unknown } | null | undefined)?.urn === 'string';
    },
  };
}

interface LoadOptions {
  seconds: number;
  connections: number;
  maxRequests: number;
  graphql: GraphQLWork;
}

interface LoadResult {
  requests: number;
  seconds: number;
  errors: number;
  errorSamples: string[];
  writeLatencies: number[];
  searchLatencies: number[];
  /** URN → description of every write answered 200. */
  acknowledged: Map<string, string>;
}

export function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  body: string,
  token: string | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: HOST,
        port,
        method,
        path,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
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

async function drive(port: number, token: string | undefined, options: LoadOptions, label: string): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const result: LoadResult = {
    requests: 0,
    seconds: 0,
    errors: 0,
    errorSamples: [],
    writeLatencies: [],
    searchLatencies: [],
    acknowledged: new Map(),
  };
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  let issued = 0;
  const worker = async (connection: number) => {
    for (let i = 0; performance.now() < deadline && issued < options.maxRequests; i++) {
      issued++;
      const write = (i + connection) % 2 === 0;
      const urn = `urn:li:dataset:(urn:li:dataPlatform:load,${label}.c${connection}.n${i},PROD)`;
      const description = `written by connection ${connection}, request ${i}`;
      const path = write ? `/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties` : '/api/graphql';
      const body = write
        ? JSON.stringify({ name: `load ${connection} ${i}`, description })
        : options.graphql.body(i * options.connections + connection);
      const t0 = performance.now();
      try {
        const answer = await send(agent, port, 'POST', path, body, token);
        const ms = performance.now() - t0;
        (write ? result.writeLatencies : result.searchLatencies).push(ms);
        const failed = answer.status !== 200 || (!write && !options.graphql.answered(answer.text));
        if (failed) {
          result.errors++;
          if (result.errorSamples.length < 5) result.errorSamples.push(`${answer.status} ${answer.text.slice(0, 200)}`);
        } else if (write) result.acknowledged.set(urn, description);
      } catch (error) {
        result.errors++;
        if (result.errorSamples.length < 5) result.errorSamples.push(String(error));
      }
      result.requests++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, (_, c) => worker(c)));
  result.seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return result;
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

const BARE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({ ok: true, bytes: Buffer.concat(chunks).length });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '${HOST}', () => console.log('bare listening on ' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Writes the datasets the searches find; returns their URNs and the most frequent description word (the search term). */
async function seed(file: string, count: number): Promise<{ word: string; urns: string[] }> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
  const datasets = [...generateDatasets({ count })];
  await catalog.entities.upsertMany(
    ADMIN,
    datasets.map((d) => ({ urn: d.urn, aspects: { datasetProperties: { name: d.name, description: d.description } } })),
  );
  await catalog.close();
  const counts = new Map<string, number>();
  for (const d of datasets) for (const w of d.description.split(' ')) counts.set(w, (counts.get(w) ?? 0) + 1);
  return { word: [...counts].sort((a, b) => b[1] - a[1])[0]![0], urns: datasets.map((d) => d.urn) };
}

async function readBack(file: string, acknowledged: Map<string, string>): Promise<number> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
  const urns = [...acknowledged.keys()];
  let lost = 0;
  for (let start = 0; start < urns.length; start += 500) {
    const chunk = urns.slice(start, start + 500);
    const found = new Map(
      (await catalog.entities.getMany(ADMIN, chunk)).map((v) => [v.urn, v.aspects.datasetProperties?.value.description]),
    );
    for (const urn of chunk) if (found.get(urn) !== acknowledged.get(urn)) lost++;
  }
  await catalog.close();
  return lost;
}

export async function runHttpLoadBench(
  options: { seconds?: number; connections?: number; maxRequests?: number; entities?: number } = {},
): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-http-load-'));
  const db = join(dir, 'catalog.db');
  try {
    const seeded = await seed(db, options.entities ?? 2000);
    const served = spawn(
      process.execPath,
      [join(root, 'dist/cli.js'), 'serve', '--db', db, '--port', '0', '--host', HOST, '--quiet', '--bootstrap-token'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const [listening, token] = await Promise.all([
      waitForLine(served, /listening on http:\/\/[^:]+:(\d+)/, 'metacatalog serve'),
      waitForLine(served, /export METACATALOG_TOKEN=(\S+)/, 'the bootstrap token'),
    ]);
    const port = Number(listening[1]);
    // One search first: a schema without search resolvers answers null, and the GraphQL half then reads entities.
    const probeAgent = new Agent({ keepAlive: false });
    const search = searchWork(seeded.word);
    const probe = await send(probeAgent, port, 'POST', '/api/graphql', search.body(0), token[1]);
    probeAgent.destroy();
    const load: LoadOptions = {
      seconds: options.seconds ?? 30,
      connections: options.connections ?? 50,
      maxRequests: options.maxRequests ?? 500_000,
      graphql: probe.status === 200 && search.answered(probe.text) ? search : entityReadWork(seeded.urns),
    };
    if (load.graphql !== search)
      console.log(`http-load: searchAcrossEntities answered ${probe.text.slice(0, 120)}: the GraphQL half reads entities instead`);
    console.log(
      `http-load: ${load.connections} connections, ${load.seconds} s or ${load.maxRequests} requests, half GraphQL ${load.graphql.label}, half REST writes`,
    );
    const catalogRun = await drive(port, token[1], load, 'serve');
    const serveExit = await stop(served);
    const lost = await readBack(db, catalogRun.acknowledged);

    const bare = spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    const bareListening = await waitForLine(bare, /bare listening on (\d+)/, 'the bare node:http server');
    const bareRun = await drive(Number(bareListening[1]), undefined, load, 'bare');
    await stop(bare);

    const throughput = catalogRun.requests / catalogRun.seconds;
    const bareThroughput = bareRun.requests / bareRun.seconds;
    const all = [...catalogRun.writeLatencies, ...catalogRun.searchLatencies];
    const bareAll = [...bareRun.writeLatencies, ...bareRun.searchLatencies];
    console.log(
      `http-load: serve answered ${catalogRun.requests} requests in ${catalogRun.seconds.toFixed(1)} s (${catalogRun.writeLatencies.length} writes, ${catalogRun.searchLatencies.length} GraphQL ${load.graphql.label}), ` +
        `${catalogRun.errors} errors, ${catalogRun.acknowledged.size} writes acknowledged, ${lost} of them lost; serve exited with ${serveExit}`,
    );
    if (catalogRun.errorSamples.length) console.log(`http-load: error samples:\n  ${catalogRun.errorSamples.join('\n  ')}`);
    const figures: Figure[] = [
      {
        workload: 'all requests',
        unit: 'req/s',
        value: throughput,
        baseline: bareThroughput,
        baselineName: 'bare node:http',
        better: 'higher',
      },
      {
        workload: 'all requests p99',
        unit: 'ms',
        value: percentile(all, 99),
        baseline: percentile(bareAll, 99),
        baselineName: 'bare node:http',
        better: 'lower',
      },
      { workload: 'REST writes p50', unit: 'ms', value: percentile(catalogRun.writeLatencies, 50), better: 'lower' },
      { workload: 'REST writes p99', unit: 'ms', value: percentile(catalogRun.writeLatencies, 99), better: 'lower' },
      {
        workload: `GraphQL ${load.graphql === search ? 'searches' : 'entity reads'} p50`,
        unit: 'ms',
        value: percentile(catalogRun.searchLatencies, 50),
        better: 'lower',
      },
      {
        workload: `GraphQL ${load.graphql === search ? 'searches' : 'entity reads'} p99`,
        unit: 'ms',
        value: percentile(catalogRun.searchLatencies, 99),
        better: 'lower',
      },
      { workload: 'errors', unit: 'requests', value: catalogRun.errors, better: 'lower', goal: '0', met: catalogRun.errors === 0 },
      { workload: 'lost writes', unit: 'writes', value: lost, better: 'lower', goal: '0', met: lost === 0 },
    ];
    printTable(`HTTP load (${load.connections} connections, loopback, SQLite file)`, figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
