import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog } from '../src';
import type { GeneratedDataset } from './generator';
import { againstHandSql, percentile, type Figure } from './harness';
import {
  ADMIN,
  CASES,
  FACETS,
  field,
  interleaved,
  load,
  NAMES,
  propertyUrn,
  sameResult,
  scrollInput,
  type PropertyName,
} from './search-cases';

/** The hand-written SQL of each case on the library's schema (entities, search_keys, search_values). */
function handSql(db: Database.Database, keys: Record<PropertyName, string>) {
  const keyIds = {} as Record<PropertyName, number>;
  for (const name of NAMES) {
    keyIds[name] = (
      db.prepare("SELECT id FROM search_keys WHERE kind = 'property' AND name = ? AND def_key = ?").get(propertyUrn(name), keys[name]) as {
        id: number;
      }
    ).id;
  }
  const values = (name: PropertyName, alias: string, test: string) => `${alias}.key_id = ${keyIds[name]} AND ${test}`;
  const probe = (name: PropertyName, test: string, entity = 'd.entity_id') =>
    `EXISTS (SELECT 1 FROM search_values w WHERE w.entity_id = ${entity} AND ${values(name, 'w', test)})`;
  // Value rows hold the entity type's dictionary id (in decimal), not its name.
  const datasetKey = String(db.prepare("SELECT id FROM dictionary WHERE text = 'dataset'").pluck().get() as number);
  const scope = `v.removed = 0 AND v.entity_type = '${datasetKey}'`;
  // Pages: walk the URNs of the scope and test each (many matches), or sort the few matches.
  const walk = (tests: string) =>
    db
      .prepare(`SELECT d.urn AS urn FROM entities d WHERE d.removed = 0 AND d.entity_type = 'dataset' AND ${tests} ORDER BY d.urn LIMIT 20`)
      .pluck();
  const sorted = (from: string, where: string) =>
    db
      .prepare(`SELECT d.urn AS urn FROM ${from} JOIN entities d ON d.entity_id = v.entity_id WHERE ${where} ORDER BY d.urn LIMIT 20`)
      .pluck();
  const count = (sql: string) => db.prepare(sql).pluck();
  const queries: Record<string, { count: Database.Statement; page: Database.Statement }> = {
    [CASES[0]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'bronze'")} AND ${scope}`),
      page: walk(probe('tier', "w.value = 'bronze'")),
    },
    [CASES[1]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope}`),
      page: sorted(`search_values v`, `${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope}`),
    },
    [CASES[2]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('score', 'v', 'v.value > 90')} AND ${scope}`),
      page: walk(probe('score', 'w.value > 90')),
    },
    [CASES[3]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('costCenter', 'v', '1')} AND ${scope}`),
      page: walk(probe('costCenter', '1')),
    },
    [CASES[4]!.label]: {
      count: count(
        `SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'gold'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`,
      ),
      page: walk(`${probe('tier', "w.value = 'gold'")} AND ${probe('score', 'w.value > 50')}`),
    },
    [CASES[5]!.label]: {
      count: count(
        `SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'bronze'")} AND ${scope}
         AND ${probe('costCenter', '1', 'v.entity_id')} AND ${probe('reviewed', "w.value >= '2025-07-01'", 'v.entity_id')}`,
      ),
      page: walk(
        `${probe('tier', "w.value = 'bronze'")} AND ${probe('costCenter', '1')} AND ${probe('reviewed', "w.value >= '2025-07-01'")}`,
      ),
    },
    [CASES[6]!.label]: {
      count: count(
        `SELECT COUNT(*) FROM search_values v WHERE ${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`,
      ),
      page: sorted(
        'search_values v',
        `${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`,
      ),
    },
  };
  const facet = (name: PropertyName) =>
    db.prepare(
      `SELECT v.value AS value, COUNT(*) AS count FROM search_values v WHERE v.key_id = ${keyIds[name]} AND ${scope} GROUP BY v.value ORDER BY count DESC, v.value LIMIT 20`,
    );
  return { queries, facet };
}

export async function sqliteFigures(dir: string, datasets: readonly GeneratedDataset[]): Promise<Figure[]> {
  const file = join(dir, 'search.db');
  const adapter = createSqliteAdapter({ filename: file });
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  const loaded = await load(catalog, datasets);
  await adapter.flushSearchIndex?.();
  const figures: Figure[] = [
    {
      workload: `SQLite: write ${datasets.length.toLocaleString('en-US')} datasets + 5 properties (public API, setup)`,
      unit: 'ms',
      value: loaded.ms,
      better: 'lower',
    },
  ];
  const hand = new Database(file, { readonly: true });
  try {
    const { queries, facet } = handSql(hand, loaded.keys);
    for (const c of CASES) {
      const q = queries[c.label]!;
      const input = scrollInput(c.filters);
      const library = async () => {
        const r = await catalog.search.scroll(ADMIN, input);
        return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
      };
      const baseline = () => ({ total: q.count.get() as number, urns: q.page.all() as string[] });
      sameResult(c.label, await library(), baseline());
      const runs = await interleaved(c.kind === 'and' ? 60 : 150, library, baseline);
      const [p50, hand50, p99] = [percentile(runs.library, 50), percentile(runs.baseline, 50), percentile(runs.library, 99)];
      const limit = c.kind === 'and' ? 30 : 5;
      figures.push(againstHandSql(`SQLite ${c.label}: count + first 20, p50`, p50, hand50), {
        workload: `SQLite ${c.label}: count + first 20, p99`,
        unit: 'ms',
        value: p99,
        baseline: percentile(runs.baseline, 99),
        baselineName: 'hand SQL',
        better: 'lower',
        goal: `≤ ${limit} ms`,
        met: p99 <= limit,
      });
    }
    for (const name of FACETS) {
      const input = { types: ['DATASET' as const], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } };
      const statement = facet(name);
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => (statement.all() as Array<{ value: string; count: number }>).map((r) => ({ value: r.value, count: r.count }));
      sameResult(`facet ${name}`, await library(), baseline());
      const runs = await interleaved(60, library, baseline);
      const [p50, hand50, p99] = [percentile(runs.library, 50), percentile(runs.baseline, 50), percentile(runs.library, 99)];
      figures.push(
        {
          workload: `SQLite facet ${name} over the whole corpus, p50`,
          unit: 'ms',
          value: p50,
          baseline: hand50,
          baselineName: 'hand GROUP BY',
          better: 'lower',
          goal: '≤ 1.5× hand GROUP BY',
          met: p50 <= 1.5 * hand50,
        },
        {
          workload: `SQLite facet ${name} over the whole corpus, p99`,
          unit: 'ms',
          value: p99,
          baseline: percentile(runs.baseline, 99),
          baselineName: 'hand GROUP BY',
          better: 'lower',
          goal: '≤ 50 ms',
          met: p99 <= 50,
        },
      );
    }
  } finally {
    hand.close();
    await catalog.close();
  }
  return figures;
}
