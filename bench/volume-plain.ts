/**
 * The plain design the volume workload measures the catalog against: what a person would write by
 * hand for these data and these questions, on better-sqlite3. One row per dataset (URN, name,
 * description), a typed property-value table with three covering indexes (by value, by entity, by
 * property and entity), FTS5 over name and description (external content), loaded in one transaction.
 * It keeps no aspect documents, audit stamps, change feed or history: what the catalog keeps beyond it
 * is the price of those.
 */
import Database from 'better-sqlite3';
import type { FacetFilterInput } from '../src';
import type { GeneratedDataset } from './generator';
import { NAMES, type PropertyName } from './search-cases';

const PREFIX = 'structuredProperties.bench.';

export interface PlainDatabase {
  readonly db: Database.Database;
  /** Inserts datasets (call inside `load`'s transaction, or alone: each call is one transaction). */
  insert(datasets: readonly GeneratedDataset[]): void;
  /** Runs `fn` in one transaction. */
  load(fn: () => void): void;
  /** Count and first 20 URNs of the datasets matching all the filters (EQUAL, range, EXISTS). */
  filter(filters: readonly FacetFilterInput[]): { total: number; urns: string[] };
  /** Count and first 20 URNs (best match first) of a full-text query. */
  text(query: string): { total: number; urns: string[] };
  close(): void;
}

const OPERATORS: Record<string, string> = {
  EQUAL: '=',
  GREATER_THAN: '>',
  GREATER_THAN_OR_EQUAL_TO: '>=',
  LESS_THAN: '<',
  LESS_THAN_OR_EQUAL_TO: '<=',
};

export function createPlainDatabase(file: string): PlainDatabase {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS datasets (id INTEGER PRIMARY KEY, urn TEXT NOT NULL UNIQUE, name TEXT NOT NULL, description TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS properties (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE IF NOT EXISTS property_values (dataset_id INTEGER NOT NULL, property_id INTEGER NOT NULL, value NOT NULL);
    CREATE INDEX IF NOT EXISTS property_values_by_value ON property_values (property_id, value, dataset_id);
    CREATE INDEX IF NOT EXISTS property_values_by_dataset ON property_values (dataset_id, property_id, value);
    CREATE INDEX IF NOT EXISTS property_values_by_property ON property_values (property_id, dataset_id, value);
    CREATE VIRTUAL TABLE IF NOT EXISTS datasets_text USING fts5 (name, description, content = 'datasets', content_rowid = 'id');
  `);
  const ids = {} as Record<PropertyName, number>;
  for (const name of NAMES) {
    db.prepare('INSERT OR IGNORE INTO properties (name) VALUES (?)').run(name);
    ids[name] = (db.prepare('SELECT id FROM properties WHERE name = ?').get(name) as { id: number }).id;
  }
  const insertDataset = db.prepare('INSERT INTO datasets (urn, name, description) VALUES (?, ?, ?)');
  const insertValue = db.prepare('INSERT INTO property_values (dataset_id, property_id, value) VALUES (?, ?, ?)');
  const insertText = db.prepare('INSERT INTO datasets_text (rowid, name, description) VALUES (?, ?, ?)');
  const statements = new Map<
    string,
    { count: Database.Statement; countValues: unknown[]; walk: Database.Statement; walkValues: unknown[]; sorted: Database.Statement }
  >();

  /** One filter as a test of the property_values row `alias` (the value test alone, on its property). */
  function test(f: FacetFilterInput, alias: string): { sql: string; values: unknown[] } {
    const name = f.field.slice(PREFIX.length) as PropertyName;
    const property = `${alias}.property_id = ${ids[name]}`;
    if (f.condition === 'EXISTS') return { sql: property, values: [] };
    const op = OPERATORS[f.condition ?? 'EQUAL'];
    if (!op) throw new Error(`the plain baseline does not know ${f.condition}`);
    const raw = f.values?.[0] ?? f.value ?? '';
    return { sql: `${property} AND ${alias}.value ${op} ?`, values: [name === 'score' ? Number(raw) : raw] };
  }

  function probe(f: FacetFilterInput, entity: string, i: number): { sql: string; values: unknown[] } {
    const t = test(f, `p${i}`);
    return { sql: `EXISTS (SELECT 1 FROM property_values p${i} WHERE p${i}.dataset_id = ${entity} AND ${t.sql})`, values: t.values };
  }

  /**
   * What a person would write: the count driven by the first filter's rows (property_values_by_value)
   * with the others probed (property_values_by_dataset); the page either walks the URN index probing
   * every filter (many matches) or sorts the matches (few: under 5% of the datasets).
   */
  function prepared(filters: readonly FacetFilterInput[]) {
    const key = JSON.stringify(filters);
    let s = statements.get(key);
    if (!s) {
      const [first, ...rest] = filters;
      const driver = test(first!, 'v');
      const others = rest.map((f, i) => probe(f, 'v.dataset_id', i + 1));
      const all = filters.map((f, i) => probe(f, 'd.id', i + 1));
      const where = [driver.sql, ...others.map((o) => o.sql)].join(' AND ');
      s = {
        count: db.prepare(`SELECT COUNT(*) FROM property_values v WHERE ${where}`).pluck(),
        countValues: [...driver.values, ...others.flatMap((o) => o.values)],
        walk: db.prepare(`SELECT d.urn FROM datasets d WHERE ${all.map((a) => a.sql).join(' AND ')} ORDER BY d.urn LIMIT 20`).pluck(),
        walkValues: all.flatMap((a) => a.values),
        sorted: db
          .prepare(`SELECT d.urn FROM property_values v JOIN datasets d ON d.id = v.dataset_id WHERE ${where} ORDER BY d.urn LIMIT 20`)
          .pluck(),
      };
      statements.set(key, s);
    }
    return s;
  }
  let datasetCount: number | undefined;
  const textCount = () => db.prepare('SELECT COUNT(*) FROM datasets_text WHERE datasets_text MATCH ?').pluck();
  const textPage = () =>
    db
      .prepare(
        'SELECT d.urn FROM datasets_text t JOIN datasets d ON d.id = t.rowid WHERE datasets_text MATCH ? ORDER BY bm25(datasets_text, 10, 1), d.urn LIMIT 20',
      )
      .pluck();
  let text: { count: Database.Statement; page: Database.Statement } | undefined;

  return {
    db,
    insert(datasets) {
      for (const d of datasets) {
        const id = Number(insertDataset.run(d.urn, d.name, d.description).lastInsertRowid);
        insertText.run(id, d.name, d.description);
        insertValue.run(id, ids.tier, d.tier);
        insertValue.run(id, ids.owner, d.owner);
        insertValue.run(id, ids.score, d.score);
        insertValue.run(id, ids.reviewed, d.reviewed);
        if (d.costCenter !== undefined) insertValue.run(id, ids.costCenter, d.costCenter);
      }
    },
    load(fn) {
      db.transaction(fn)();
    },
    filter(filters) {
      const s = prepared(filters);
      datasetCount ??= db.prepare('SELECT COUNT(*) FROM datasets').pluck().get() as number;
      const total = s.count.get(...s.countValues) as number;
      const urns = (total < datasetCount / 20 ? s.sorted.all(...s.countValues) : s.walk.all(...s.walkValues)) as string[];
      return { total, urns };
    },
    text(query) {
      text ??= { count: textCount(), page: textPage() };
      return { total: text.count.get(query) as number, urns: text.page.all(query) as string[] };
    },
    close() {
      db.close();
    },
  };
}
