import { Ajv } from 'ajv';
import { createMemoryAdapter } from '../adapters/memory';
import { createCatalog } from '../src';
import * as aspectSchemas from '../src/core/validation/schemas/aspects';
import { latencies, median, percentile, printTable, type Figure } from './harness';

const ACTOR = 'urn:li:corpuser:bench';
const ROUNDS = 500;

/** One catalog as a host's test opens it: a new memory adapter, one write, closed. */
async function freshCatalog(i: number): Promise<void> {
  const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ACTOR], jobs: { background: false } });
  await catalog.entities.upsertAspects(ACTOR, `urn:li:corpuser:user${i}`, { corpUserInfo: { displayName: `User ${i}` } });
  await catalog.close();
}

/** The baseline: compiling the built-in aspect schemas afresh, what every new catalog paid before they were shared. */
function compileAspectSchemas(): void {
  const ajv = new Ajv({ allErrors: true, strict: false });
  for (const schema of Object.values(aspectSchemas)) ajv.compile(schema as object);
}

/** `npm run bench -- fresh-catalog`: the cost of a fresh memory catalog per test, after the first. */
export async function runFreshCatalogBench(): Promise<void> {
  await freshCatalog(-1); // the first pays for compiling the schemas once per process
  const catalogMs = await latencies(ROUNDS, freshCatalog);
  const compileMs = await latencies(20, compileAspectSchemas);
  const p50 = median(catalogMs);
  const figures: Figure[] = [
    {
      workload: 'fresh memory catalog + one write, p50',
      unit: 'ms',
      value: p50,
      baseline: median(compileMs),
      baselineName: 'compiling the aspect schemas afresh',
      better: 'lower',
      goal: '≤ 1 ms',
      met: p50 <= 1,
    },
    { workload: 'fresh memory catalog + one write, p99', unit: 'ms', value: percentile(catalogMs, 99), better: 'lower' },
  ];
  printTable(`fresh catalogs (${ROUNDS} in a row)`, figures);
}
