/**
 * `npm run bench -- volume [--entities N]` (default 100,000; usable at 1,000,000): the catalog on a
 * SQLite file against the plain design of bench/volume-plain.ts, on the same generated datasets
 * (a name, a 20-word description, five structured properties each):
 * - load throughput: `catalog.entities.upsertMany` (1,000 entities per call, structured properties
 *   included, searchable at the end) against the plain design's one-transaction load;
 * - bytes per entity of each file after a checkpoint, with the dbstat breakdown;
 * - p50/p99 of the search cases of bench/search-cases.ts and of a full-text query, on both;
 * - the catalog's own figures without a baseline: single aspect writes through the HTTP handler on
 *   SQLite, and the memory adapter's bulk load (at most 100,000 entities).
 * Datasets are generated batch by batch, so a million never sit in memory; the peak RSS is printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryAdapter } from '../adapters/memory';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog, type CatalogOptions } from '../src';
import { createFetchHandler } from '../src/http';
import { percentile, printTable, time, type Figure } from './harness';
import { ADMIN, CASES, sameResult, scrollInput } from './search-cases';
import { breakdownLines, createBenchProperties, datasetBatches, datasetEntity, measureFile, peakRssMb, type FileSize } from './volume-data';
import { createPlainDatabase, type PlainDatabase } from './volume-plain';

export { createPlainDatabase, type PlainDatabase } from './volume-plain';
export { breakdownLines, createBenchProperties, datasetBatches, datasetEntity, measureFile, peakRssMb, type FileSize } from './volume-data';

/** Entities per `upsertMany` call. */
const CALL_SIZE = 1_000;
/** The memory adapter's load and the load without change feed stop here (they hold or repeat everything). */
const SIDE_LOAD_LIMIT = 100_000;
const HTTP_WRITES = 2_000;
/** A word of the generated vocabulary's head (frequent) for the full-text case. */
const TEXT_SAMPLES = 200;

function rate(count: number, ms: number): number {
  return count / (ms / 1000);
}

/** The plain design, loaded in one transaction. */
function loadPlain(file: string, count: number): { ms: number; plain: PlainDatabase } {
  const plain = createPlainDatabase(file);
  const start = performance.now();
  plain.load(() => {
    for (const batch of datasetBatches(count, 10_000)) plain.insert(batch);
  });
  return { ms: performance.now() - start, plain };
}

/** The catalog's bulk load, searchable at the end (the deferred full-text rows are flushed inside the time). */
async function loadCatalog(options: Omit<CatalogOptions, 'superUsers'>, count: number): Promise<{ ms: number; catalog: Catalog }> {
  const catalog = createCatalog({ superUsers: [ADMIN], jobs: { background: false }, ...options });
  await catalog.ready();
  await createBenchProperties(catalog);
  const { ms } = await time(async () => {
    for (const batch of datasetBatches(count, CALL_SIZE)) await catalog.entities.upsertMany(ADMIN, batch.map(datasetEntity));
    await options.adapter.flushSearchIndex?.();
  });
  return { ms, catalog };
}

/** Latencies of the same question on the catalog and on the plain design, interleaved; answers compared first. */
async function searchFigures(catalog: Catalog, plain: PlainDatabase, word: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  const push = (label: string, library: number[], baseline: number[]) => {
    for (const p of [50, 99]) {
      figures.push({
        workload: `${label}: count + first 20, p${p}`,
        unit: 'ms',
        value: percentile(library, p),
        baseline: percentile(baseline, p),
        baselineName: 'plain',
        better: 'lower',
      });
    }
  };
  for (const c of CASES) {
    const input = scrollInput(c.filters);
    const library = async () => {
      const r = await catalog.search.scroll(ADMIN, input);
      return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
    };
    const baseline = () => plain.filter(c.filters);
    sameResult(c.label, await library(), baseline());
    const runs = { library: [] as number[], baseline: [] as number[] };
    for (let i = 0; i < (c.kind === 'and' ? 60 : 120); i++) {
      let start = performance.now();
      await library();
      runs.library.push(performance.now() - start);
      start = performance.now();
      baseline();
      runs.baseline.push(performance.now() - start);
    }
    push(c.label, runs.library, runs.baseline);
  }
  // Full text: the analysis differs (the catalog stems and folds), so only the times are compared.
  const input = { types: ['DATASET' as const], query: word, count: 20 };
  const runs = { library: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < TEXT_SAMPLES; i++) {
    let start = performance.now();
    await catalog.search.search(ADMIN, input);
    runs.library.push(performance.now() - start);
    start = performance.now();
    plain.text(word);
    runs.baseline.push(performance.now() - start);
  }
  push(`full text "${word}"`, runs.library, runs.baseline);
  return figures;
}

/** Single aspect writes through the HTTP handler (in process): one POST, one commit each. */
async function httpWrites(catalog: Catalog, label: string): Promise<number> {
  const handler = createFetchHandler(catalog, { trustActorHeader: true });
  const started = performance.now();
  for (let i = 0; i < HTTP_WRITES; i++) {
    const urn = encodeURIComponent(`urn:li:dataset:(urn:li:dataPlatform:hive,http.${label}_${i},PROD)`);
    const response = await handler(
      new Request(`http://localhost/openapi/v2/entity/dataset/${urn}/datasetProperties`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-actor': ADMIN },
        body: JSON.stringify({ name: `single_${i}`, description: `written alone, number ${i}` }),
      }),
    );
    if (response.status !== 200) throw new Error(`HTTP write ${i}: ${response.status} ${await response.text()}`);
  }
  return rate(HTTP_WRITES, performance.now() - started);
}

function sizeLines(title: string, size: FileSize, entities: number): void {
  console.log(`  ${title}: ${(size.bytes / 1e6).toFixed(1)} MB, ${(size.bytes / entities).toFixed(0)} B/entity`);
  for (const line of breakdownLines(size, entities)) console.log(line);
}

export async function runVolumeBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-volume-'));
  const figures: Figure[] = [];
  const n = count.toLocaleString('en-US');
  try {
    const plainFile = join(dir, 'plain.db');
    const plainLoad = loadPlain(plainFile, count);
    const catalogFile = join(dir, 'catalog.db');
    const adapter = createSqliteAdapter({ filename: catalogFile });
    const catalogLoad = await loadCatalog({ adapter }, count);
    const rssAfterLoad = peakRssMb();
    const [plainRate, catalogRate] = [rate(count, plainLoad.ms), rate(count, catalogLoad.ms)];
    figures.push({
      workload: `SQLite: load ${n} datasets × 5 properties (upsertMany, ${CALL_SIZE.toLocaleString('en-US')} a call)`,
      unit: 'entities/s',
      value: catalogRate,
      baseline: plainRate,
      baselineName: 'plain design, one transaction',
      better: 'higher',
      goal: '≥ 0.5× plain',
      met: catalogRate / plainRate >= 0.5,
    });
    plainLoad.plain.close();
    await catalogLoad.catalog.close();
    const plainSize = measureFile(plainFile);
    const catalogSize = measureFile(catalogFile);
    figures.push({
      workload: `SQLite: file size per entity (after checkpoint)`,
      unit: 'B/entity',
      value: catalogSize.bytes / count,
      baseline: plainSize.bytes / count,
      baselineName: 'plain design',
      better: 'lower',
      goal: '≤ 2× plain',
      met: catalogSize.bytes <= 2 * plainSize.bytes,
    });

    // Search on both files, reopened.
    const catalog = createCatalog({
      adapter: createSqliteAdapter({ filename: catalogFile }),
      superUsers: [ADMIN],
      jobs: { background: false },
    });
    const plain = createPlainDatabase(plainFile);
    try {
      const word = (plain.db.prepare('SELECT name FROM datasets WHERE id = 1').pluck().get() as string).split('_')[0]!;
      figures.push(...(await searchFigures(catalog, plain, word)));
      const httpRate = await httpWrites(catalog, 'full');
      figures.push({
        workload: `SQLite: single datasetProperties writes through the HTTP handler (in process, ${HTTP_WRITES.toLocaleString('en-US')}), durability full`,
        unit: 'writes/s',
        value: httpRate,
        better: 'higher',
        goal: '≥ 2,000/s',
        met: httpRate >= 2000,
      });
    } finally {
      plain.close();
      await catalog.close();
    }
    // The same with durability 'normal' (no sync of the WAL at each commit).
    const relaxed = createCatalog({
      adapter: createSqliteAdapter({ filename: catalogFile, durability: 'normal' }),
      superUsers: [ADMIN],
      jobs: { background: false },
    });
    try {
      const httpRate = await httpWrites(relaxed, 'normal');
      figures.push({
        workload: `SQLite: single datasetProperties writes through the HTTP handler, durability normal`,
        unit: 'writes/s',
        value: httpRate,
        better: 'higher',
        goal: '≥ 2,000/s',
        met: httpRate >= 2000,
      });
    } finally {
      await relaxed.close();
    }

    const side = Math.min(count, SIDE_LOAD_LIMIT);
    const sideN = side.toLocaleString('en-US');
    // The change feed's share: the same load with events and kept versions switched off.
    const quietFile = join(dir, 'no-feed.db');
    const quiet = await loadCatalog(
      { adapter: createSqliteAdapter({ filename: quietFile }), changes: { enabled: false }, history: { enabled: false } },
      side,
    );
    await quiet.catalog.close();
    const quietSize = measureFile(quietFile);
    figures.push({
      workload: `SQLite without change feed and history: ${sideN} datasets, load`,
      unit: 'entities/s',
      value: rate(side, quiet.ms),
      better: 'higher',
    });
    figures.push({
      workload: `SQLite without change feed and history: file size per entity`,
      unit: 'B/entity',
      value: quietSize.bytes / side,
      better: 'lower',
    });

    const memory = await loadCatalog({ adapter: createMemoryAdapter() }, side);
    await memory.catalog.close();
    const memoryRate = rate(side, memory.ms);
    figures.push({
      workload: `memory adapter: load ${sideN} datasets × 5 properties (upsertMany)`,
      unit: 'entities/s',
      value: memoryRate,
      better: 'higher',
      goal: '≥ 20,000/s',
      met: memoryRate >= 20_000,
    });

    printTable(`Volume: ${n} datasets × 5 structured properties, catalog on SQLite against a plain design`, figures);
    console.log(
      `\n  load time: catalog ${(catalogLoad.ms / 1000).toFixed(1)} s, plain ${(plainLoad.ms / 1000).toFixed(1)} s; peak RSS after the SQLite load ${rssAfterLoad.toFixed(0)} MB, at the end ${peakRssMb().toFixed(0)} MB`,
    );
    sizeLines('catalog file', catalogSize, count);
    sizeLines('plain file', plainSize, count);
    sizeLines(`catalog file without change feed and history (${sideN})`, quietSize, side);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
