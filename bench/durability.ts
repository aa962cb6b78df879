import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter, type SqliteDurability } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { printTable, time, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:bench';
const WRITES = 2_000;

/** Single-aspect writes, one commit each, on a fresh file in the given durability mode: writes per second. */
async function writesPerSecond(durability: SqliteDurability): Promise<number> {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-durability-'));
  const catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability }),
    superUsers: [ADMIN],
    jobs: { background: false },
  });
  try {
    await catalog.ready();
    const { ms } = await time(async () => {
      for (let i = 0; i < WRITES; i++) {
        await catalog.entities.upsertAspect(ADMIN, `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`, 'datasetProperties', {
          name: `t${i}`,
        });
      }
    });
    return (WRITES / ms) * 1000;
  } finally {
    await catalog.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** `npm run bench -- durability`: what keeping acknowledged writes through a power loss costs. */
export async function runDurabilityBench(): Promise<void> {
  await writesPerSecond('normal'); // warm-up
  const normal = await writesPerSecond('normal');
  const full = await writesPerSecond('full');
  const figures: Figure[] = [
    {
      workload: `SQLite durability "full" (default), ${WRITES} single writes`,
      unit: 'writes/s',
      value: full,
      baseline: normal,
      baselineName: 'durability "normal"',
      better: 'higher',
    },
  ];
  printTable('SQLite durability modes', figures);
}
