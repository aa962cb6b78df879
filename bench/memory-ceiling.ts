import { createMemoryAdapter } from '../adapters/memory';
import { createCatalog } from '../src';
import { generateDatasets } from './generator';
import { printTable, type Figure } from './harness';
import { createProperties, heapAfterGc, itemsOf, loadItems, MB } from './memory-load';
import { ADMIN } from './search-cases';

/**
 * `npm run bench -- memory-ceiling [--entities N]`: the heap the memory adapter holds per entity
 * (datasets with datasetProperties and five structured properties, searchable by field, property
 * and full text), at N (default 100,000) and N/2 entities, with the catalog's defaults (change feed
 * and history on). The marginal figure (the difference between the two sizes, per entity) leaves out
 * what does not grow with the entities (the change feed's bound of 100,000 events is reached at
 * N/2 already, and the code itself); entities per GB of heap follow from it. The baseline is the
 * same entities held as the plain objects a host passes to upsertMany.
 */

const GB = 1024 * MB;

interface Measured {
  /** Heap held by the catalog after loading, items dropped, bytes. */
  catalogBytes: number;
  /** Heap of the upsertMany items themselves, bytes. */
  itemBytes: number;
}

async function measure(count: number, changes: boolean): Promise<Measured> {
  const empty = heapAfterGc();
  const catalog = createCatalog({
    adapter: createMemoryAdapter(),
    superUsers: [ADMIN],
    jobs: { background: false },
    changes: { enabled: changes },
    history: { enabled: changes },
  });
  await catalog.ready();
  await createProperties(catalog);
  const base = heapAfterGc();
  // The generated datasets are dropped: the items alone hold the strings, as a host's input would;
  // they are unreachable once this function returns.
  const itemBytes = await (async () => {
    const items = itemsOf([...generateDatasets({ count, seed: 21 })]);
    const bytes = heapAfterGc() - base;
    await loadItems(catalog, items);
    return bytes;
  })();
  const probe = await catalog.search.scroll(ADMIN, { types: ['DATASET'], query: '*', count: 1 });
  if (probe.total !== count) throw new Error(`memory-ceiling: ${probe.total} datasets found, ${count} written`);
  const catalogBytes = heapAfterGc() - empty;
  await catalog.close();
  return { catalogBytes, itemBytes };
}

export async function runMemoryCeilingBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const half = Math.floor(count / 2);
  const figures: Figure[] = [];
  for (const changes of [true, false]) {
    const small = await measure(half, changes);
    const large = await measure(count, changes);
    const average = large.catalogBytes / count;
    const marginal = (large.catalogBytes - small.catalogBytes) / (count - half);
    const itemsPerEntity = large.itemBytes / count;
    const feed = changes ? 'change feed and history on (default)' : 'change feed and history off';
    console.log(
      `memory-ceiling (${feed}): ${(small.catalogBytes / MB).toFixed(0)} MB at ${half.toLocaleString('en-US')}, ${(large.catalogBytes / MB).toFixed(0)} MB at ${count.toLocaleString('en-US')}; ` +
        `${Math.round(marginal)} bytes per further entity → ${Math.round(GB / marginal).toLocaleString('en-US')} entities per GB of heap`,
    );
    figures.push(
      {
        workload: `heap per entity at ${count.toLocaleString('en-US')} (${feed})`,
        unit: 'bytes',
        value: average,
        baseline: itemsPerEntity,
        baselineName: 'the upsertMany items as plain objects',
        better: 'lower',
      },
      {
        workload: `heap per further entity, ${half.toLocaleString('en-US')} → ${count.toLocaleString('en-US')} (${feed})`,
        unit: 'bytes',
        value: marginal,
        baseline: itemsPerEntity,
        baselineName: 'the upsertMany items as plain objects',
        better: 'lower',
      },
      { workload: `entities per GB of heap (${feed}), from the marginal figure`, unit: 'entities', value: GB / marginal, better: 'higher' },
    );
  }
  printTable('memory adapter: heap per entity', figures);
  return figures;
}
