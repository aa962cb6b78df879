/**
 * `npm run bench -- load [--entities N]` (default 100,000): loading at the engine's pace, on SQLite
 * files, against the plain design of bench/volume-plain.ts loaded by hand in one transaction, all in
 * the same run (the same generated datasets: a name, a 20-word description, five structured
 * properties each):
 * - the first ingest: change proposals, 1,000 entities (3 aspects each: datasetProperties,
 *   structuredProperties, status) per `applyProposals` call, as `metacatalog ingest` sends them;
 * - the daily re-ingest of the same unchanged proposals (writes nothing: no version, no event);
 * - the restore of that catalog's export into an empty file, as `metacatalog ingest` reads it
 *   (JSON lines parsed, 1,000 records a call): the ordinary import, then the initial load
 *   (`importRecords(records, { initial: true })`), each against the plain load;
 * - bytes per entity of the initially loaded file against the plain file;
 * - the same restore into an empty PostgreSQL schema with the initial load (COPY), against a plain COPY
 *   load of the same datasets (bench/load-postgres.ts; its own throw-away server unless one is given).
 * - the memory adapter's bulk load, as `npm run bench -- memory-bulk` measures it (20,000 datasets,
 *   whatever --entities says: the same figure, printed by the same code).
 * The proposals of an ingest are generated before its clock starts; the export is kept as JSON lines in memory.
 *
 * `--only initial` leaves out the unchanged re-ingest and the ordinary restore (at 1,000,000 datasets
 * they take most of an hour), and the memory adapter's part; `--postgres off` leaves out the PostgreSQL part. The default prints every figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog } from '../src';
import { printTable, time, type Figure } from './harness';
import { ADMIN, assignments } from './search-cases';
import { createBenchProperties, datasetBatches, measureFile } from './volume-data';
import { createPlainDatabase } from './volume-plain';
import { postgresLoadFigures } from './load-postgres';
import { runMemoryBulkBench } from './memory-bulk';

/** Entities per call, as `metacatalog ingest` chunks its lines (its default --chunk-size). */
const CALL_SIZE = 1_000;

const rate = (count: number, ms: number): number => count / (ms / 1000);

/** CPU time of the process (every thread) in ms: on a shared machine a steadier measure than the wall clock. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Wall and CPU time of `fn`. */
async function timed(fn: () => Promise<unknown> | unknown): Promise<{ ms: number; cpu: number }> {
  const cpu = cpuMs();
  const { ms } = await time(fn);
  return { ms, cpu: cpuMs() - cpu };
}

async function openCatalog(file: string): Promise<Catalog> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  return catalog;
}

/** One dataset's three aspects as change proposals, the shape a connector emits. */
function proposalsOf(batch: ReturnType<typeof datasetBatches> extends Generator<infer B> ? B : never): unknown[] {
  const out: unknown[] = [];
  for (const d of batch) {
    const aspect = (json: unknown) => ({ json });
    out.push(
      {
        entityUrn: d.urn,
        changeType: 'UPSERT',
        aspectName: 'datasetProperties',
        aspect: aspect({ name: d.name, description: d.description }),
      },
      { entityUrn: d.urn, changeType: 'UPSERT', aspectName: 'structuredProperties', aspect: aspect({ properties: assignments(d) }) },
      { entityUrn: d.urn, changeType: 'UPSERT', aspectName: 'status', aspect: aspect({ removed: false }) },
    );
  }
  return out;
}

/**
 * Sends `count` datasets' proposals, 1,000 datasets a call. The proposals are generated before the clock
 * starts: they stand for a connector's output, and generating their random text is not the catalog's work.
 */
async function ingest(catalog: Catalog, count: number): Promise<{ ms: number; cpu: number }> {
  const calls = Array.from(datasetBatches(count, CALL_SIZE), proposalsOf);
  return timed(async () => {
    for (const proposals of calls) await catalog.entities.applyProposals(ADMIN, proposals);
  });
}

/** Imports JSON lines 1,000 at a time (parsed here, as the command line does), searchable at the end. */
async function restore(catalog: Catalog, lines: readonly string[], initial: boolean): Promise<{ ms: number; cpu: number }> {
  return timed(async () => {
    for (let i = 0; i < lines.length; i += CALL_SIZE) {
      const records = lines.slice(i, i + CALL_SIZE).map((l) => JSON.parse(l) as unknown);
      await (initial ? catalog.importRecords(records, { initial: true }) : catalog.importRecords(records));
    }
    await catalog.search.search(ADMIN, { types: ['DATASET'], query: 'data', count: 1 });
  });
}

async function changeEvents(catalog: Catalog): Promise<number> {
  let n = 0;
  let after: string | undefined;
  for (;;) {
    const page = await catalog.changes.read(ADMIN, { limit: 1000, ...(after ? { after } : {}) });
    n += page.events.length;
    if (page.events.length === 0) return n;
    after = page.events.at(-1)!.id;
  }
}

export async function runLoadBench(options: { entities?: number; only?: string; postgres?: string } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  if (options.only !== undefined && options.only !== 'initial') throw new Error(`--only ${options.only}: the only part known is 'initial'`);
  const everything = options.only === undefined;
  const n = count.toLocaleString('en-US');
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-load-'));
  const figures: Figure[] = [];
  try {
    const plainFile = join(dir, 'plain.db');
    const plain = createPlainDatabase(plainFile);
    const plainTime = await timed(() =>
      plain.load(() => {
        for (const batch of datasetBatches(count, 10_000)) plain.insert(batch);
      }),
    );
    plain.close();
    /** A throughput by the wall clock and by CPU time, each against its baseline's. */
    const both = (
      workload: string,
      t: { ms: number; cpu: number },
      base?: { t: { ms: number; cpu: number }; name: string; goal?: number },
    ) => {
      for (const [clock, key] of [
        ['', 'ms'],
        [' (per CPU second)', 'cpu'],
      ] as const) {
        const value = rate(count, t[key]);
        const baseline = base ? rate(count, base.t[key]) : undefined;
        figures.push({
          workload: `${workload}${clock}`,
          unit: 'entities/s',
          value,
          ...(baseline !== undefined ? { baseline, baselineName: base!.name } : {}),
          better: 'higher',
          ...(base?.goal !== undefined && baseline !== undefined
            ? { goal: `≥ ${base.goal}× ${base.name}`, met: value >= base.goal * baseline }
            : {}),
        });
      }
    };

    const source = await openCatalog(join(dir, 'source.db'));
    await createBenchProperties(source);
    const first = await ingest(source, count);
    both(`first ingest, ${n} datasets × 3 aspects (applyProposals)`, first);
    if (everything) {
      const eventsBefore = await changeEvents(source);
      const again = await ingest(source, count);
      const eventsAfter = await changeEvents(source);
      if (eventsAfter !== eventsBefore) throw new Error(`the unchanged re-ingest wrote ${eventsAfter - eventsBefore} change events`);
      both(`unchanged re-ingest, ${n} datasets × 3 aspects (goal ≥ 40,000/s)`, again, { t: first, name: 'first ingest' });
    }

    const lines: string[] = [];
    for await (const record of source.exportAll()) lines.push(JSON.stringify(record));
    await source.close();

    if (everything) {
      const restored = await openCatalog(join(dir, 'restored.db'));
      const restoreTime = await restore(restored, lines, false);
      await restored.close();
      rmSync(join(dir, 'restored.db'), { force: true });
      both(`restore an export of ${n} datasets into an empty file (importRecords)`, restoreTime, { t: plainTime, name: 'plain' });
    }

    const initialFile = join(dir, 'initial.db');
    const initial = await openCatalog(initialFile);
    const initialTime = await restore(initial, lines, true);
    await initial.close();
    both(`the same, initial load (importRecords { initial: true })`, initialTime, { t: plainTime, name: 'plain', goal: 0.5 });

    const [plainSize, initialSize] = [measureFile(plainFile), measureFile(initialFile)];
    figures.push({
      workload: `bytes per entity after the initial load (checkpointed file)`,
      unit: 'B/entity',
      value: initialSize.bytes / count,
      baseline: plainSize.bytes / count,
      baselineName: 'plain',
      better: 'lower',
      goal: '≤ 2× plain',
      met: initialSize.bytes <= 2 * plainSize.bytes,
    });
    // The SQLite figures first: the PostgreSQL part needs a server (and takes as long again).
    printTable(`load: ${n} datasets on SQLite (plain design loaded in the same run)`, figures);
    if (options.postgres !== 'off') {
      const postgres = await postgresLoadFigures(lines, count, CALL_SIZE);
      printTable(`load: ${n} datasets on PostgreSQL (plain COPY load in the same run)`, postgres);
      figures.push(...postgres);
    }
    if (everything) figures.push(...(await runMemoryBulkBench()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
