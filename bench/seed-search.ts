/** A SQLite file of generated datasets for the HTTP benchmarks, and search terms that match a part of them. */
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import { generateDatasets } from './generator';
import { ADMIN } from './search-cases';

/**
 * Writes `count` generated datasets (name and description) into `file`, 5,000 a call, and returns the
 * search terms: the 40 most frequent description words after the 10 most frequent (which match most datasets).
 */
export async function seedSearchCatalog(file: string, count: number): Promise<string[]> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
  const datasets = [...generateDatasets({ count })];
  for (let start = 0; start < datasets.length; start += 5_000) {
    await catalog.entities.upsertMany(
      ADMIN,
      datasets
        .slice(start, start + 5_000)
        .map((d) => ({ urn: d.urn, aspects: { datasetProperties: { name: d.name, description: d.description } } })),
    );
  }
  await catalog.close();
  const counts = new Map<string, number>();
  for (const d of datasets) for (const w of d.description.split(' ')) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(10, 50)
    .map(([w]) => w);
}
