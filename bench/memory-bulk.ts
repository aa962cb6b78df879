import { createMemoryAdapter } from '../adapters/memory';
import { createCatalog, type StorageAdapter, type WriteBatch } from '../src';
import { generateDatasets, type GeneratedDataset } from './generator';
import { median, printTable, time, type Figure } from './harness';
import { createProperties, itemsOf, loadItems, PER_CALL } from './memory-load';
import { ADMIN } from './search-cases';

/**
 * `npm run bench -- memory-bulk`: bulk load into the memory adapter through the public API,
 * `catalog.entities.upsertMany` of 1,000 datasets a call, each with datasetProperties (name,
 * description) and five structured properties, searchable (fields, properties, full text) when the
 * call returns. The baseline replays the very batches the catalog committed into a fresh memory
 * adapter: the adapter's own share of the work, so the ratio shows what the domain adds on top.
 */

const RUNS = 3;

/** Passes everything through to the adapter and keeps each committed batch (when `recording`). */
function recordingAdapter(adapter: StorageAdapter): { adapter: StorageAdapter; batches: WriteBatch[]; recording: { on: boolean } } {
  const batches: WriteBatch[] = [];
  const recording = { on: false };
  const wrapped: StorageAdapter = {
    ...adapter,
    async commit(batch) {
      await adapter.commit(batch);
      if (recording.on) batches.push(batch);
    },
  };
  return { adapter: wrapped, batches, recording };
}

interface Run {
  ms: number;
  /** CPU time of the process (every thread) over the same span: less sensitive to a shared machine. */
  cpuMs: number;
  adapterMs: number;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function once(datasets: readonly GeneratedDataset[], changes: boolean): Promise<Run> {
  const recorded = recordingAdapter(createMemoryAdapter());
  const catalog = createCatalog({
    adapter: recorded.adapter,
    superUsers: [ADMIN],
    jobs: { background: false },
    changes: { enabled: changes },
    history: { enabled: changes },
  });
  await catalog.ready();
  await createProperties(catalog);
  const items = itemsOf(datasets);
  recorded.recording.on = true;
  const cpuStart = cpuMs();
  const { ms } = await time(() => loadItems(catalog, items));
  const cpu = cpuMs() - cpuStart;
  recorded.recording.on = false;
  const probe = await catalog.search.scroll(ADMIN, {
    types: ['DATASET'],
    query: datasets[datasets.length - 1]!.name.split('_')[0]!,
    count: 1,
  });
  if (probe.total < 1) throw new Error('memory-bulk: the last dataset written is not found by its name');
  await catalog.close();

  // The baseline: the same batches into a fresh adapter (definitions first, as the catalog wrote them).
  const replay = createMemoryAdapter();
  await replay.open();
  const setup = createCatalog({ adapter: replay, superUsers: [ADMIN], jobs: { background: false } });
  await createProperties(setup);
  const adapterOnly = await time(async () => {
    for (const batch of recorded.batches) await replay.commit(batch);
  });
  await setup.close();
  return { ms, cpuMs: cpu, adapterMs: adapterOnly.ms };
}

export async function runMemoryBulkBench(options: { entities?: number } = {}): Promise<Figure[]> {
  // 20,000 by default: twelve loads in all (three runs, feed on and off, each replayed); `sizing` loads 100,000 once.
  const count = options.entities ?? 20_000;
  const datasets = [...generateDatasets({ count, seed: 11 })];
  const figures: Figure[] = [];
  for (const changes of [true, false]) {
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(datasets, changes));
    const rates = runs.map((r) => count / (r.ms / 1000));
    const adapterRates = runs.map((r) => count / (r.adapterMs / 1000));
    const cpuRates = runs.map((r) => count / (r.cpuMs / 1000));
    const rate = median(rates);
    console.log(
      `memory-bulk (change feed ${changes ? 'on' : 'off'}): ${rates.map((r) => Math.round(r)).join(', ')} entities/s over ${RUNS} runs; ` +
        `per CPU second ${cpuRates.map((r) => Math.round(r)).join(', ')}; adapter alone ${adapterRates.map((r) => Math.round(r)).join(', ')}`,
    );
    figures.push({
      workload: `upsertMany ${count.toLocaleString('en-US')} datasets + 5 properties, ${PER_CALL}/call (memory, change feed ${changes ? 'on' : 'off'}), median of ${RUNS}`,
      unit: 'entities/s',
      value: rate,
      baseline: median(adapterRates),
      baselineName: 'the same batches replayed into the adapter',
      better: 'higher',
      goal: '≥ 20,000/s',
      met: rate >= 20_000,
    });
    figures.push({
      workload: `the same, per second of CPU time of the process (change feed ${changes ? 'on' : 'off'}), median of ${RUNS}`,
      unit: 'entities/s',
      value: median(cpuRates),
      better: 'higher',
      goal: '≥ 20,000/s',
      met: median(cpuRates) >= 20_000,
    });
  }
  printTable('memory adapter bulk load', figures);
  return figures;
}
