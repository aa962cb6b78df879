import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog } from '../src';
import { telemetryOf } from '../src/core/telemetry';
import { createFetchHandler, createMetricsHandler } from '../src/http';
import { median, printTable, type Figure } from './harness';

/**
 * `npm run bench -- observability`: what metrics cost. One catalog on a SQLite file (durability `normal`,
 * so that the disk's sync does not hide the cost) with its metrics switched on and off call by call (the
 * same database, caches and process for both sides); no OpenTelemetry SDK is registered (spans are
 * no-ops). Each workload compares the median latencies with metrics on and off:
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

async function openSide(): Promise<Side> {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-observability-'));
  const catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability: 'normal' }),
    superUsers: [ADMIN],
    tokenSigningKey: KEY,
    jobs: { background: false },
  });
  await catalog.ready();
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

/** Each query twice in a row, so that both sides run it first as often (the order alternates call by call). */
const queryOf = (i: number) => (Math.floor(i / 2) % 2 ? 'revenue' : 'orders');

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
            body: JSON.stringify({
              query: SEARCH_QUERY,
              variables: { input: { types: ['DATASET'], query: queryOf(i), count: 10 } },
            }),
          }),
        ),
      ),
    'search, catalog call': async (i) => {
      await s.catalog.search.search(ADMIN, { types: ['DATASET'], query: queryOf(i), start: 0, count: 10 });
    },
  };
}

/**
 * Latencies of two sides called alternately, the order swapped every call (ABBA...), so that neither side
 * always runs right after the other's work (a warm cache, a pending collection); a few warm-up calls first.
 */
async function alternating(
  iterations: number,
  a: (i: number) => Promise<void>,
  b: (i: number) => Promise<void>,
): Promise<{ a: number[]; b: number[] }> {
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
  const side = await openSide();
  createMetricsHandler(side.catalog);
  const telemetry = telemetryOf(side.catalog)!;
  const sink = telemetry.metrics;
  const ratios = new Map<string, { on: number[]; off: number[] }>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Writes of the two sides go to different URNs (labels of their own), like new entities would.
      const withMetrics = workloads(side, 2 * round);
      const without = workloads(side, 2 * round + 1);
      for (const name of Object.keys(withMetrics)) {
        const iterations = name.startsWith('search') ? SEARCHES : WRITES;
        const timings = await alternating(
          iterations,
          (i) => {
            telemetry.metrics = sink;
            return withMetrics[name]!(i);
          },
          (i) => {
            telemetry.metrics = undefined;
            return without[name]!(i);
          },
        );
        const entry = ratios.get(name) ?? { on: [], off: [] };
        entry.on.push(median(timings.a));
        entry.off.push(median(timings.b));
        ratios.set(name, entry);
      }
    }
  } finally {
    await side.close();
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
  // The same cost without the noise of whole calls: what recording the metrics of one call takes (with
  // the clock readings), as a share of that call's median with metrics off. Writes: the request, the
  // token verification, the catalog call and its commit; searches: the catalog call and the adapter query.
  const recordings = 200_000;
  const recordingCost = (record: () => void): number => {
    const started = performance.now();
    for (let i = 0; i < recordings; i++) record();
    return (performance.now() - started) / recordings;
  };
  const catalogWrite = () => {
    const t1 = performance.now();
    const t2 = performance.now();
    sink!.commit('ok', (performance.now() - t2) / 1000, 1, 1);
    sink!.operation('upsert', 'entities.upsertAspect', 'ok', (performance.now() - t1) / 1000);
  };
  const perWrite = recordingCost(catalogWrite);
  const perHttpWrite = recordingCost(() => {
    const t0 = performance.now();
    sink!.tokenVerification('ok');
    sink!.operation('token_verify', 'tokens.verify', 'ok', (performance.now() - t0) / 1000);
    catalogWrite();
    sink!.httpRequest('POST', '/openapi/v2/entity/{entityName}/{urn}/{aspectName}', 200, (performance.now() - t0) / 1000);
  });
  const perSearch = recordingCost(() => {
    const t0 = performance.now();
    const t1 = performance.now();
    sink!.query('search', 'ok', (performance.now() - t1) / 1000);
    sink!.operation('search', 'search.search', 'ok', (performance.now() - t0) / 1000);
  });
  for (const [label, perCall, of] of [
    ['one write over HTTP', perHttpWrite, 'single write, HTTP'],
    ['one write', perWrite, 'single write, catalog call'],
    ['one search', perSearch, 'search, catalog call'],
  ] as const) {
    const call = figures.find((f) => f.workload.startsWith(of))!;
    const share = perCall / call.baseline!;
    figures.push({
      workload: `recording the metrics of ${label} (${recordings.toLocaleString('en-US')} times, no I/O)`,
      unit: 'ms',
      value: call.baseline! + perCall,
      baseline: call.baseline!,
      baselineName: `${of}, metrics off; +${(perCall * 1000).toFixed(2)} µs = ${(share * 100).toFixed(2)}%`,
      better: 'lower',
      goal: '≥ 0.97× metrics off',
      met: share <= 0.03,
    });
  }
  printTable('Metrics on vs off (no OpenTelemetry SDK registered; SQLite, durability normal)', figures);
  return figures;
}
