import { createMemoryAdapter } from '../adapters/memory';
import { createCatalog, type Catalog, type FacetFilterInput } from '../src';
import { generateDatasets } from './generator';
import { percentile, printTable, time, type Figure } from './harness';
import { createProperties, fullGc, itemsOf, loadItems, MB } from './memory-load';
import { ADMIN, CASES, FACETS, field, scrollInput } from './search-cases';

/**
 * `npm run bench -- sizing [--entities N]`: the memory adapter at N datasets (default 100,000; usable
 * at 1,000,000), each with datasetProperties and five structured properties, written through
 * `upsertMany`: load time, peak heap and RSS, the heap held afterwards, and p50/p99 of every search
 * workload of bench/search-cases.ts plus a full-text query, through the public API. Figures for
 * docs/sizing.md; no baseline (the search benchmark compares the same questions with plain loops).
 */

const ITERATIONS = 50;

interface Question {
  label: string;
  ask: (catalog: Catalog) => Promise<unknown>;
}

function questions(word: string): Question[] {
  const out: Question[] = CASES.map((c) => ({
    label: `${c.label}: count + first 20`,
    ask: (catalog) => catalog.search.scroll(ADMIN, scrollInput(c.filters)),
  }));
  for (const name of FACETS) {
    out.push({
      label: `facet ${name} over every dataset`,
      ask: (catalog) =>
        catalog.search.aggregate(ADMIN, { types: ['DATASET'], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } }),
    });
  }
  const filtered: FacetFilterInput[] = [{ field: field('score'), values: ['50'], condition: 'GREATER_THAN' }];
  out.push({
    label: 'facet owner where score>50',
    ask: (catalog) =>
      catalog.search.aggregate(ADMIN, {
        types: ['DATASET'],
        query: '*',
        facets: [field('owner')],
        orFilters: [{ and: filtered }],
        searchFlags: { maxAggValues: 20 },
      }),
  });
  out.push({
    label: `full text "${word}", first 10 by relevance`,
    ask: (catalog) => catalog.search.search(ADMIN, { types: ['DATASET'], query: word, start: 0, count: 10 }),
  });
  out.push({
    label: `full text "${word}" AND tier=gold`,
    ask: (catalog) =>
      catalog.search.search(ADMIN, {
        types: ['DATASET'],
        query: word,
        start: 0,
        count: 10,
        orFilters: [{ and: [{ field: field('tier'), values: ['gold'] }] }],
      }),
  });
  return out;
}

export async function runSizingBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  fullGc();
  const heapBefore = process.memoryUsage().heapUsed;
  const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  await createProperties(catalog);
  let peakHeap = 0;
  let peakRss = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    peakHeap = Math.max(peakHeap, usage.heapUsed);
    peakRss = Math.max(peakRss, usage.rss);
  };
  // A word of middling frequency for the full-text questions: the 50th most frequent in the descriptions.
  let word = '';
  // Generated in slices of 100,000, so that the input of a million entities is never all in memory at once.
  const SLICE = 100_000;
  const generator = generateDatasets({ count, seed: 42 });
  const cpuStart = process.cpuUsage();
  const load = await time(async () => {
    for (let done = 0; done < count; done += SLICE) {
      const slice = [];
      for (let i = 0; i < Math.min(SLICE, count - done); i++) slice.push(generator.next().value!);
      if (done === 0) {
        const counts = new Map<string, number>();
        for (const d of slice.slice(0, 10_000)) for (const w of d.description.split(' ')) counts.set(w, (counts.get(w) ?? 0) + 1);
        word = [...counts].sort((a, b) => b[1] - a[1])[Math.min(49, counts.size - 1)]![0];
      }
      await loadItems(catalog, itemsOf(slice), sample);
    }
  });
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  fullGc();
  const heldBytes = process.memoryUsage().heapUsed - heapBefore;
  const rate = count / (load.ms / 1000);
  const n = count.toLocaleString('en-US');
  console.log(
    `sizing (memory adapter, ${n} datasets): load ${(load.ms / 1000).toFixed(1)} s (${Math.round(rate).toLocaleString('en-US')}/s; ${cpuSeconds.toFixed(1)} s of CPU time), ` +
      `peak heap ${(peakHeap / MB).toFixed(0)} MB, peak RSS ${(peakRss / MB).toFixed(0)} MB, heap held after a full collection ${(heldBytes / MB).toFixed(0)} MB ` +
      `(${Math.round(heldBytes / count).toLocaleString('en-US')} bytes per entity)`,
  );
  const figures: Figure[] = [
    { workload: `load ${n} datasets + 5 properties (upsertMany, 1,000 per call)`, unit: 's', value: load.ms / 1000, better: 'lower' },
    { workload: 'load rate', unit: 'entities/s', value: rate, better: 'higher' },
    // On a shared machine the wall clock includes waiting for a core; the CPU time (every thread) does not.
    { workload: 'CPU time of the load (every thread of the process)', unit: 's', value: cpuSeconds, better: 'lower' },
    { workload: 'peak heap during the load', unit: 'MB', value: peakHeap / MB, better: 'lower' },
    { workload: 'peak RSS during the load', unit: 'MB', value: peakRss / MB, better: 'lower' },
    { workload: 'heap held after the load (full collection)', unit: 'MB', value: heldBytes / MB, better: 'lower' },
  ];
  try {
    for (const question of questions(word)) {
      for (let i = 0; i < 3; i++) await question.ask(catalog);
      const ms: number[] = [];
      for (let i = 0; i < ITERATIONS; i++) ms.push((await time(() => question.ask(catalog))).ms);
      figures.push({ workload: `${question.label}, p50`, unit: 'ms', value: percentile(ms, 50), better: 'lower' });
      figures.push({ workload: `${question.label}, p99`, unit: 'ms', value: percentile(ms, 99), better: 'lower' });
    }
  } finally {
    await catalog.close();
  }
  printTable(`sizing: memory adapter, ${n} datasets (${ITERATIONS} runs of each question)`, figures);
  return figures;
}
