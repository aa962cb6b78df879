import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openConnection } from '../../../adapters/sqlite/connection';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../../src';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'hot-plans-signing-key-0123456789abcdef-xyz';
const TIER = 'urn:li:structuredProperty:io.test.tier';
const SIZE = 'urn:li:structuredProperty:io.test.size';
const ENTITIES = 3_000;
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,db.t${i},PROD)`;

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function open(filename: string, options: { syncOffEventLoop?: boolean } = {}): Catalog {
  return createCatalog({
    adapter: createSqliteAdapter({ filename, ...options }),
    tokenSigningKey: KEY,
    superUsers: [ADMIN],
    jobs: { background: false },
    onError: () => undefined,
  });
}

/** Every SQL text prepared on any better-sqlite3 connection of this process while `work` runs. */
async function preparedDuring(work: () => Promise<void>): Promise<Set<string>> {
  const seen = new Set<string>();
  const prototype = Database.prototype as unknown as { prepare(this: Database.Database, sql: string): Database.Statement };
  const original = prototype.prepare;
  prototype.prepare = function (this: Database.Database, sql: string) {
    seen.add(sql);
    return original.call(this, sql);
  };
  try {
    await work();
  } finally {
    prototype.prepare = original;
  }
  return seen;
}

/** What a tiny file's ANALYZE leaves behind: every table and index says it holds one row. */
function plantTinyStatistics(filename: string): void {
  const db = new Database(filename);
  try {
    db.exec('ANALYZE sqlite_schema');
    db.exec('DELETE FROM sqlite_stat1');
    const indexes = db
      .prepare(
        `SELECT m.name AS tbl, i.name AS idx, (SELECT COUNT(*) FROM pragma_index_info(i.name)) AS columns
         FROM sqlite_schema m JOIN pragma_index_list(m.name) i WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`,
      )
      .all() as Array<{ tbl: string; idx: string; columns: number }>;
    const insert = db.prepare('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)');
    const tables = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'")
      .pluck()
      .all() as string[];
    for (const table of tables) insert.run(table, null, '1');
    for (const { tbl, idx, columns } of indexes) insert.run(tbl, idx, ['1', ...Array(columns).fill('1')].join(' '));
  } finally {
    db.close();
  }
}

/** Tables that grow with the catalog: a statement on a hot path must never read one of them whole. */
const LARGE_TABLES = ['entities', 'aspects', 'aspect_versions', 'search_values', 'change_events', 'dictionary', 'search_text_pending'];

/**
 * The one exception, said plainly: a page of the change feed is a rowid range of change_events
 * (`c.id > @after ORDER BY c.id LIMIT n`), and no SQL text can make SQLite prefer a rowid range to a scan
 * of a table its statistics say holds one row (INDEXED BY names indexes, not the rowid). That statement
 * relies on the statistics being right, which the test below checks the adapter keeps them.
 */
const CHANGE_FEED_PAGE = /FROM change_events c\s.*WHERE c\.id > @after/s;

function fullScans(plan: Array<{ detail: string }>): string[] {
  return plan
    .map((row) => row.detail)
    .filter((detail) => {
      const match = /^SCAN (\w+)(?: AS \w+)?(?: USING (?:COVERING )?INDEX \w+)?$/.exec(detail) ?? /^SCAN (\w+)\b/.exec(detail);
      if (!match) return false;
      return LARGE_TABLES.includes(match[1]!) || /^SCAN [a-z]\b/.test(detail);
    });
}

/** Parameters for EXPLAIN (never run): a null for each `?`, and an object with null for each `@name`. */
function unboundParameters(sql: string): unknown[] {
  const outsideLiterals = sql.replace(/'(?:[^']|'')*'/g, '');
  const positional = (outsideLiterals.match(/\?/g) ?? []).map(() => null);
  const names = [...outsideLiterals.matchAll(/[@:$](\w+)/g)].map((m) => m[1]!);
  const named = names.length ? [Object.fromEntries(names.map((name) => [name, null]))] : [];
  return [...positional, ...named];
}

describe('hot statements on SQLite keep their indexes whatever the statistics say', () => {
  it('plans every statement of reads, token checks, value and aspect writes and the change log without a full scan', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-hot-plans-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');

    // A populated catalog: property definitions, values, aspects with kept versions and change events.
    const seed = open(filename);
    await seed.properties.create(ADMIN, {
      qualifiedName: 'io.test.tier',
      valueType: 'string',
      entityTypes: ['dataset'],
      allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
    });
    await seed.properties.create(ADMIN, { qualifiedName: 'io.test.size', valueType: 'number', entityTypes: ['dataset'] });
    for (let start = 0; start < ENTITIES; start += 500) {
      const items = [];
      for (let i = start; i < start + 500; i++) {
        items.push({
          urn: dataset(i),
          aspects: {
            datasetProperties: { name: `t${i}`, description: `table ${i}` },
            structuredProperties: {
              properties: [
                { propertyUrn: TIER, values: [{ string: i % 2 ? 'gold' : 'silver' }] },
                { propertyUrn: SIZE, values: [{ double: i }] },
              ],
            },
          },
        });
      }
      await seed.entities.upsertMany(ADMIN, items);
    }
    await seed.close();

    // Every statement the hot paths prepare, recorded on a fresh connection. Commits run on this thread
    // (the commit thread would prepare the same texts out of reach of preparedDuring's patch).
    let bearer = '';
    const statements = await preparedDuring(async () => {
      const catalog = open(filename, { syncOffEventLoop: false });
      try {
        bearer = (await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN })).accessToken;
        await catalog.tokens.verify(bearer);
        await catalog.entities.get(ADMIN, dataset(7));
        await catalog.entities.getMany(ADMIN, [dataset(1), dataset(2), dataset(3)]);
        await catalog.entities.getAspect(ADMIN, dataset(8), 'datasetProperties');
        await catalog.entities.upsertAspect(ADMIN, dataset(9), 'datasetProperties', { name: 'renamed', description: 'again' });
        await catalog.entities.upsertAspect(ADMIN, dataset(ENTITIES + 1), 'datasetProperties', { name: 'new one' });
        await catalog.properties.upsertValues(ADMIN, dataset(10), {
          properties: [
            { propertyUrn: TIER, values: [{ string: 'gold' }] },
            { propertyUrn: SIZE, values: [{ double: 12 }] },
          ],
        });
        await catalog.properties.removeValues(ADMIN, dataset(11), [SIZE]);
        await catalog.properties.getValues(ADMIN, dataset(10));
        await catalog.properties.valueHistory(ADMIN, dataset(10));
        await catalog.entities.history(ADMIN, dataset(9), 'datasetProperties');
        await catalog.entities.deleteAspect(ADMIN, dataset(12), 'datasetProperties');
        await catalog.entities.delete(ADMIN, dataset(13), { hard: true });
        await catalog.changes.read(ADMIN, { limit: 10 });
        await catalog.settle();
      } finally {
        await catalog.close();
      }
    });
    expect(bearer).not.toBe('');

    // Statistics as closing a near-empty catalog leaves them, on the populated file.
    plantTinyStatistics(filename);
    const db = new Database(filename, { readonly: true });
    db.function('mc_lower', { deterministic: true }, (value: unknown) => value);
    try {
      expect(db.prepare("SELECT stat FROM sqlite_stat1 WHERE tbl = 'aspects' AND idx IS NULL").pluck().get()).toBe('1');
      const checked: string[] = [];
      const scans: string[] = [];
      for (const sql of statements) {
        if (!/^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|REPLACE)\b/i.test(sql)) continue;
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...unboundParameters(sql)) as Array<{ detail: string }>;
        checked.push(sql);
        if (CHANGE_FEED_PAGE.test(sql)) {
          expect(plan.map((row) => row.detail).filter((detail) => /^SCAN (?!c$)/.test(detail))).toEqual([]);
          continue;
        }
        for (const scan of fullScans(plan)) scans.push(`${scan}  <-  ${sql.replace(/\s+/g, ' ')}`);
      }
      // The statements that matter most are among those checked.
      const all = checked.join('\n');
      expect(all).toMatch(/LEFT JOIN aspects/);
      expect(all).toMatch(/INSERT INTO change_events/);
      expect(all).toMatch(/search_values/);
      expect(checked.length).toBeGreaterThan(20);
      expect(scans).toEqual([]);
    } finally {
      db.close();
    }
  }, 60_000);

  it('keeps no statistics from near-empty tables: a tiny catalog closes without them, a grown file loses planted ones at open', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-hot-plans-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    const statistics = () => {
      const db = new Database(filename, { readonly: true });
      try {
        const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get() !== undefined;
        return exists ? (db.prepare('SELECT tbl, idx, stat FROM sqlite_stat1').all() as Array<{ tbl: string; stat: string }>) : [];
      } finally {
        db.close();
      }
    };

    // What a CLI command does on a new file: a token, a definition, then close.
    const tiny = open(filename);
    await tiny.tokens.issueBootstrapToken({ actorUrn: ADMIN });
    await tiny.properties.create(ADMIN, { qualifiedName: 'io.test.tier', valueType: 'string', entityTypes: ['dataset'] });
    await tiny.close();
    expect(statistics().filter((row) => parseInt(row.stat, 10) < 1_000)).toEqual([]);

    // The file grows; then statistics saying "one row" are planted, as an older release would have left them.
    const grow = open(filename);
    for (let start = 0; start < 2_000; start += 500) {
      const items = [];
      for (let i = start; i < start + 500; i++) items.push({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } });
      await grow.entities.upsertMany(ADMIN, items);
    }
    await grow.close();
    plantTinyStatistics(filename);
    expect(
      statistics()
        .filter((row) => row.tbl === 'aspects')
        .map((row) => row.stat),
    ).toContain('1');

    // Opening it (as serve does) re-analyses what grew and forgets the rest.
    const served = open(filename);
    await served.entities.get(ADMIN, dataset(1));
    const atOpen = statistics();
    await served.close();
    expect(atOpen.filter((row) => parseInt(row.stat, 10) < 1_000)).toEqual([]);
    const aspectsRows = atOpen.find((row) => row.tbl === 'aspects');
    expect(aspectsRows && parseInt(aspectsRows.stat, 10)).toBeGreaterThanOrEqual(1_000);
  }, 60_000);

  it('samples whenever it analyses (analysis_limit), on a file the connection created as on one it reopened', () => {
    // A full ANALYZE of a catalog that grew holds every commit behind it: the periodic PRAGMA optimize and an initial
    // load's statistics sample on every connection, including the one that created the file.
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-hot-plans-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    for (const moment of ['created', 'reopened']) {
      const db = openConnection({ filename }, 'normal');
      try {
        expect({ moment, limit: db.pragma('analysis_limit', { simple: true }) }).toEqual({ moment, limit: 1000 });
      } finally {
        db.close();
      }
    }
  });
});
