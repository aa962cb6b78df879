import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog } from '../src';
import { createFetchHandler, createMetricsHandler } from '../src/http';
import { median, printTable, type Figure } from './harness';

/**
 * `npm run bench -- observability`: what metrics cost. Two catalogs on SQLite files (durability `normal`,
 * so that the disk's sync does not hide the cost), seeded alike; one has metrics on (createMetricsHandler),
 * the other not; no OpenTelemetry SDK is registered (spans are no-ops). Each workload runs on both,
 * alternating call by call, and compares the median latencies:
 * - single writes: POST /openapi/v2/entity/dataset/{urn}/datasetProperties through the fetch handler
 *   (HTTP, token verification, catalog call, commit), and the same write as a catalog call;
 * - search: GraphQL searchAcrossEntities through the fetch handler, and catalog.search.search.
 * Goal: metrics on within 3% of metrics off (speed ≥ 0.97).
 */

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'observability-bench-signing-key-0123456789';
const SEEDED = 2_000;
const WRITES = 1_500;
const SEARCHES = 600;
const ROUNDS = 3;

const urnOf = (label: string, i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,${label}.t${i},PROD)`;

interface Side {
  catalog: Catalog;
  http: (request: Request) => Promise<Response>;
  token: string;
  close(): Promise<void>;
}

async function side(metrics: boolean): Promise<Side> {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-observability-'));
  const catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability: 'normal' }),
    superUsers: [ADMIN],
    tokenSigningKey: KEY,
    jobs: { background: false },
  });
  await catalog.ready();
  if (metrics) createMetricsHandler(catalog);
  const { accessToken } = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_MONTH', name: 'bench' });
  await catalog.entities.upsertMany(
    ADMIN,
    Array.from({ length: SEEDED }, (_, i) => ({
      urn: urnOf('seed', i),
      aspects: { datasetProperties: { name: `orders ${i}`, description: i % 3 === 0 ? 'daily revenue by region' : 'raw events' } },
    })),
  );
  return {
    catalog,
    http: createFetchHandler(catalog),
    token: accessToken,
    async close() {
      await catalog.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

const SEARCH_QUERY =
  'query search($input: SearchAcrossEntitiesInput!) { searchAcrossEntities(input: $input) { total searchResults { entity { urn } } } }';

function workloads(s: Side, round: number): Record<string, (i: number) => Promise<void>> {
  const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  const ok = async (response: Response) => {
    const text = await response.text();
    if (response.status !== 200) throw new Error(`observability bench: ${response.status} ${text.slice(0, 200)}`);
  };
  return {
    'single write, HTTP': async (i) =>
      ok(
        await s.http(
          new Request(`http://localhost/openapi/v2/entity/dataset/${encodeURIComponent(urnOf(`h${round}`, i))}/datasetProperties`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ name: `t${i}`, description: `written by request ${i}` }),
          }),
        ),
      ),
    'single write, catalog call': async (i) => {
      await s.catalog.entities.upsertAspect(ADMIN, urnOf(`d${round}`, i), 'datasetProperties', { name: `t${i}` });
    },
    'search, GraphQL over HTTP': async (i) =>
      ok(
        await s.http(
          new Request('http://localhost/api/graphql', {
            method: 'POST',
            headers,
            body: JSON.stringify({ query: SEARCH_QUERY, variables: { input: { types: ['DATASET'], query: i % 2 ? 'revenue' : 'orders', count: 10 } } }),
          }),
        ),
      ),
    'search, catalog call': async (i) => {
      await s.catalog.search.search(ADMIN, { types: ['DATASET'], query: i % 2 ? 'revenue' : 'orders', start: 0, count: 10 });
    },
  };
}

/**
 * Latencies of two sides called alternately, the order swapped every call (ABBA...), so that neither side
 * always runs right after the other's work (a warm cache, a pending collection); a few warm-up calls first.
 */
async function alternating(iterations: number, a: (i: number) => Promise<void>, b: (i: number) => Promise<void>): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < 5; i++) {
    await a(i);
    await b(i);
  }
  const out = { a: [] as number[], b: [] as number[] };
  const timed = async (fn: (i: number) => Promise<void>, i: number, into: number[]) => {
    const start = performance.now();
    await fn(i);
    into.push(performance.now() - start);
  };
  for (let i = 5; i < iterations + 5; i++) {
    if (i % 2) {
      await timed(a, i, out.a);
      await timed(b, i, out.b);
    } else {
      await timed(b, i, out.b);
      await timed(a, i, out.a);
    }
  }
  return out;
}

export async function runObservabilityBench(): Promise<Figure[]> {
  const on = await side(process.env.OBSERVABILITY_BENCH_SAME !== '1');
  const off = await side(false);
  const ratios = new Map<string, { on: number[]; off: number[] }>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const withMetrics = workloads(on, round);
      const without = workloads(off, round);
      for (const name of Object.keys(withMetrics)) {
        const iterations = name.startsWith('search') ? SEARCHES : WRITES;
        const timings = await alternating(iterations, withMetrics[name]!, without[name]!);
        const entry = ratios.get(name) ?? { on: [], off: [] };
        entry.on.push(median(timings.a));
        entry.off.push(median(timings.b));
        ratios.set(name, entry);
      }
    }
  } finally {
    await Promise.all([on.close(), off.close()]);
  }
  const figures: Figure[] = [...ratios].map(([name, { on: withMetrics, off: without }]) => {
    const value = median(withMetrics);
    const baseline = median(without);
    return {
      workload: `${name} (median of ${ROUNDS} rounds)`,
      unit: 'ms p50',
      value,
      baseline,
      baselineName: 'metrics off',
      better: 'lower',
      goal: '≥ 0.97× metrics off',
      met: baseline / value >= 0.97,
    };
  });
  printTable('Metrics on vs off (no OpenTelemetry SDK registered; SQLite, durability normal)', figures);
  return figures;
}
