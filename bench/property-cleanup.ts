import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { generateDatasets } from './generator';
import { printTable, time, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:bench.tier';
const SCORE = 'urn:li:structuredProperty:bench.score';

/**
 * Hard-delete clean-up of a structured property carried by N entities (default 10,000), on SQLite.
 * Baseline: writing the same values through the bulk path (`properties.upsertValuesMany`), which
 * rewrites the same aspects and search documents; the clean-up does the same amount of writing in
 * batches of 500, each also completing its job and queuing the next.
 */
export async function runPropertyCleanupBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  const figures: Figure[] = [];
  try {
    const catalog = createCatalog({
      adapter: createSqliteAdapter({ filename: join(dir, 'cleanup.db') }),
      superUsers: [ADMIN],
      jobs: { background: false },
    });
    await catalog.properties.create(ADMIN, { qualifiedName: 'bench.tier', valueType: 'string', entityTypes: ['dataset'] });
    await catalog.properties.create(ADMIN, { qualifiedName: 'bench.score', valueType: 'number', entityTypes: ['dataset'] });
    const items = [...generateDatasets({ count, seed: 11 })].map((d) => ({
      urn: d.urn,
      properties: [
        { propertyUrn: TIER, values: [{ string: d.tier }] },
        { propertyUrn: SCORE, values: [{ double: d.score }] },
      ],
    }));
    const seed = await time(() => catalog.properties.upsertValuesMany(ADMIN, items));
    const hard = await time(() => catalog.properties.hardDelete(ADMIN, TIER));
    const cleanup = await time(() => catalog.settle());
    if (cleanup.result.failed.length) throw new Error(`clean-up failed: ${JSON.stringify(cleanup.result.failed)}`);
    await catalog.close();
    figures.push(
      { workload: `hard delete (definition gone, values hidden), ${count} carriers`, unit: 'ms', value: hard.ms, better: 'lower' },
      {
        workload: `hard-delete clean-up of ${count} entities`,
        unit: 'ms',
        value: cleanup.ms,
        baseline: seed.ms,
        baselineName: 'bulk write of the same values',
        better: 'lower',
        goal: '≥ 0.5× baseline',
        met: seed.ms / cleanup.ms >= 0.5,
      },
    );
    printTable(`structured property clean-up (${cleanup.result.completed} batches)`, figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
