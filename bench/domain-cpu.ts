import { createMemoryAdapter } from '../adapters/memory';
import { createCatalog, type StorageAdapter } from '../src';
import { generateDatasets, type GeneratedDataset } from './generator';
import { median, printTable, type Figure } from './harness';
import { createProperties, itemsOf, loadItems } from './memory-load';
import { ADMIN } from './search-cases';

/**
 * `npm run bench -- domain-cpu`: the domain's CPU time per entity on the bulk path, outside the engine.
 * `catalog.entities.upsertMany` of 1,000 datasets a call (datasetProperties and five structured
 * properties each) on a memory adapter whose `commit` does nothing once the definitions are written:
 * what is measured is the write path itself (checks, owners, the unit of work's planning, stamps,
 * search documents, change events) plus the adapter's reads (of entities that do not exist yet, and of
 * the definitions), which are small in memory. The baseline is the same load with the adapter's real
 * commit, in the same run. Process CPU time (user + system) over the load, divided by the entities.
 */

const RUNS = 3;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function once(datasets: readonly GeneratedDataset[], commits: boolean): Promise<number> {
  const inner = createMemoryAdapter();
  const gate = { open: true };
  const adapter: StorageAdapter = {
    ...inner,
    async commit(batch) {
      if (gate.open) await inner.commit(batch);
    },
  };
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  await createProperties(catalog);
  gate.open = commits;
  const items = itemsOf(datasets);
  const start = cpuMicros();
  await loadItems(catalog, items);
  const micros = cpuMicros() - start;
  await catalog.close();
  return micros / datasets.length;
}

export async function runDomainCpuBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 20_000;
  const datasets = [...generateDatasets({ count, seed: 11 })];
  await once(datasets.slice(0, 2_000), false); // warm-up: compiled schemas, JIT
  const domain: number[] = [];
  const whole: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    domain.push(await once(datasets, false));
    whole.push(await once(datasets, true));
  }
  console.log(
    `domain-cpu: ${domain.map((v) => v.toFixed(1)).join(', ')} µs/entity without the commit; ` +
      `${whole.map((v) => v.toFixed(1)).join(', ')} µs/entity with the memory adapter's commit`,
  );
  const value = median(domain);
  const figures: Figure[] = [
    {
      workload: `upsertMany ${count.toLocaleString('en-US')} datasets + 5 properties, 1,000/call: CPU per entity, commit a no-op (median of ${RUNS})`,
      unit: 'µs/entity',
      value,
      baseline: median(whole),
      baselineName: 'the same load with the memory adapter committing',
      better: 'lower',
      goal: '≤ 30 µs',
      met: value <= 30,
    },
  ];
  printTable('the domain on the bulk path', figures);
  return figures;
}
