/**
 * Search and aggregation at scale: N datasets (default 100,000) × 5 structured properties (a skewed
 * 5-value enum, a 1,000-value string, a number, a date, a property on 30%) plus a name and a 20-word
 * description, written through the public API (`entities.upsertMany`, `properties.upsertValuesMany`).
 *
 * Every figure is measured through `catalog.search` (the domain resolves the filter fields, the
 * adapter evaluates) and printed beside a baseline run in the same process, interleaved with it:
 * - SQLite: the same question written by hand in SQL on the library's own schema (its best form for
 *   these data: the driving condition and the page strategy a person would pick), on a second
 *   connection to the same file with the same settings;
 * - memory: a plain JavaScript loop over the same search documents;
 * - memory full text: lunr() building an index of the same documents (what a rebuild per write costs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDatasets } from './generator';
import { printTable, type Figure } from './harness';
import { memoryFigures } from './search-memory';
import { sqliteFigures } from './search-sqlite';

// What other workloads reuse (bench/postgres.ts runs the same cases on PostgreSQL).
export { CASES, FACETS, field, load, propertyUrn, scrollInput, type FilterCase, type PropertyName } from './search-cases';
export { sqliteFigures } from './search-sqlite';

export async function runSearchBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const datasets = [...generateDatasets({ count, seed: 42 })];
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  const figures: Figure[] = [];
  try {
    figures.push(...(await sqliteFigures(dir, datasets)));
    figures.push(...(await memoryFigures(datasets)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    `Search and aggregation: ${count.toLocaleString('en-US')} datasets × 5 properties (latencies through catalog.search; baselines interleaved in the same process)`,
    figures,
  );
  return figures;
}
