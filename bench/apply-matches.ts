import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { printTable, time, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:bench.tier';
const dataset = (platform: string, i: number) => `urn:li:dataset:(urn:li:dataPlatform:${platform},db.table${i},PROD)`;

/**
 * `properties.applyToMatches` over N matching datasets (default 100,000), on a SQLite file. Two equal
 * halves are loaded: the baseline writes `tier = gold` on the hive half with the plain bulk path
 * (`properties.upsertValuesMany`, chunks of 500); the apply job writes the same value on every match of
 * a search for the snowflake half (the snapshot of the matches, then chunks of 500 through the one
 * write path, each chunk also recording the progress and completing its job). Goal: ≥ 0.5× the rate.
 */
export async function runApplyMatchesBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  try {
    const catalog = createCatalog({
      adapter: createSqliteAdapter({ filename: join(dir, 'apply.db') }),
      superUsers: [ADMIN],
      jobs: { background: false },
    });
    await catalog.properties.create(ADMIN, { qualifiedName: 'bench.tier', valueType: 'string', entityTypes: ['dataset'] });
    for (const platform of ['hive', 'snowflake']) {
      for (let start = 0; start < count; start += 10_000) {
        const items = [];
        for (let i = start; i < Math.min(count, start + 10_000); i++)
          items.push({
            urn: dataset(platform, i),
            aspects: { datasetProperties: { name: `table${i}`, description: `table ${i} of ${platform}` } },
          });
        await catalog.entities.upsertMany(ADMIN, items);
      }
    }
    const values = [{ propertyUrn: TIER, values: [{ string: 'gold' }] }];
    const baseline = await time(() =>
      catalog.properties.upsertValuesMany(
        ADMIN,
        Array.from({ length: count }, (_, i) => ({ urn: dataset('hive', i), properties: values })),
      ),
    );
    const applied = await time(async () => {
      const started = await catalog.properties.applyToMatches(ADMIN, {
        types: ['dataset'],
        orFilters: [{ and: [{ field: 'platform', value: 'urn:li:dataPlatform:snowflake' }] }],
        set: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }],
      });
      if (!('jobId' in started)) throw new Error('no job');
      const report = await catalog.settle();
      if (report.failed.length) throw new Error(`apply failed: ${JSON.stringify(report.failed)}`);
      return catalog.properties.applyStatus(ADMIN, started.jobId);
    });
    if (applied.result.state !== 'DONE' || applied.result.done !== count) throw new Error(`apply ended ${JSON.stringify(applied.result)}`);
    await catalog.close();
    const figures: Figure[] = [
      {
        workload: `apply a property to ${count} matches (dry-run checks, snapshot, chunks of 500)`,
        unit: 'ms',
        value: applied.ms,
        baseline: baseline.ms,
        baselineName: `upsertValuesMany of the same value on ${count} datasets`,
        better: 'lower',
        goal: '≥ 0.5× baseline rate',
        met: baseline.ms / applied.ms >= 0.5,
      },
    ];
    printTable(
      `apply to matches: ${(count / (applied.ms / 1000)).toFixed(0)} entities/s vs ${(count / (baseline.ms / 1000)).toFixed(0)} entities/s (ratio ${(baseline.ms / applied.ms).toFixed(2)}×)`,
      figures,
    );
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
