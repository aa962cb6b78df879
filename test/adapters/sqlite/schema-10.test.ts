import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import { createCatalog, type Catalog } from '../../../src';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-schema-10-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const ADMIN = 'urn:li:corpuser:admin';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,schema10.t${i},PROD)`;
const COLUMNS = 'entity_id, name_id, version, created_time, created_actor, modified_time, modified_actor, value, system_metadata';

function open(filename: string, adapter = createSqliteAdapter({ filename })): Catalog {
  let now = 1_700_000_000_000;
  return createCatalog({ adapter, superUsers: [ADMIN], clock: () => (now += 1000), jobs: { background: false } });
}

function raw<T>(filename: string, read: (db: Database.Database) => T): T {
  const db = new Database(filename, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The table's DDL and the indexes on it. */
function layout(filename: string): { sql: string; indexes: string[] } {
  return raw(filename, (db) => ({
    sql: db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'aspect_versions'").pluck().get() as string,
    indexes: db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'aspect_versions'").pluck().all() as string[],
  }));
}

const keptRows = (filename: string) =>
  raw(filename, (db) => db.prepare(`SELECT ${COLUMNS} FROM aspect_versions ORDER BY entity_id, name_id, version`).all());

/** Turns the file into what schema version 9 wrote: kept versions in a rowid table with a unique index on their key. */
function downgradeToVersion9(filename: string): void {
  const db = new Database(filename);
  try {
    db.transaction(() => {
      db.exec(`
        CREATE TABLE aspect_versions_old (
          id INTEGER PRIMARY KEY,
          entity_id INTEGER NOT NULL,
          name_id INTEGER NOT NULL,
          version INTEGER NOT NULL,
          created_time INTEGER,
          created_actor INTEGER,
          modified_time INTEGER NOT NULL,
          modified_actor INTEGER NOT NULL,
          value TEXT NOT NULL,
          system_metadata TEXT
        );
        INSERT INTO aspect_versions_old (${COLUMNS}) SELECT ${COLUMNS} FROM aspect_versions ORDER BY modified_time;
        DROP TABLE aspect_versions;
        ALTER TABLE aspect_versions_old RENAME TO aspect_versions;
        CREATE UNIQUE INDEX aspect_versions_by_aspect ON aspect_versions (entity_id, name_id, version);
      `);
      db.pragma('user_version = 9');
    })();
  } finally {
    db.close();
  }
}

async function writeVersions(catalog: Catalog, round: string): Promise<void> {
  for (const description of ['one', 'two', 'three'])
    for (let i = 0; i < 3; i++)
      await catalog.entities.upsertAspect(ADMIN, urnOf(i), 'datasetProperties', { name: `t${i}`, description: `${round} ${description}` });
}

describe('SQLite schema version 10: kept versions keyed by entity, aspect and version', () => {
  it('a new file keeps versions in a WITHOUT ROWID table with no index of its own', async () => {
    const filename = join(directory, 'new.db');
    const catalog = open(filename);
    try {
      await writeVersions(catalog, 'a');
    } finally {
      await catalog.close();
    }
    const { sql, indexes } = layout(filename);
    expect(sql).toMatch(/PRIMARY KEY \(entity_id, name_id, version\)\s*\)\s*WITHOUT ROWID/);
    expect(indexes).toEqual([]);
    expect(raw(filename, (db) => db.prepare("SELECT name FROM pragma_table_info('aspect_versions')").pluck().all())).not.toContain('id');
  });

  it('converts a version 9 file: the same history, writes, entity deletion and retention after it; running it again changes nothing', async () => {
    const filename = join(directory, 'old.db');
    const catalog = open(filename);
    let history;
    let rows;
    try {
      await writeVersions(catalog, 'a');
      history = await catalog.entities.history(ADMIN, urnOf(0), 'datasetProperties');
    } finally {
      await catalog.close();
    }
    downgradeToVersion9(filename);
    rows = keptRows(filename);
    expect(rows).toHaveLength(6);
    expect(layout(filename).indexes).toEqual(['aspect_versions_by_aspect']);

    const adapter = createSqliteAdapter({ filename });
    const reopened = open(filename, adapter);
    try {
      expect(raw(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
      expect(layout(filename).indexes).toEqual([]);
      expect(layout(filename).sql).toMatch(/WITHOUT ROWID/);
      expect(keptRows(filename)).toEqual(rows);
      expect(await reopened.entities.history(ADMIN, urnOf(0), 'datasetProperties')).toEqual(history);

      // Writes after it keep versions under the key; a replaced version of the same key is replaced.
      await writeVersions(reopened, 'b');
      const after = await reopened.entities.history(ADMIN, urnOf(0), 'datasetProperties');
      expect(after.map((a) => (a.value as { description: string }).description)).toEqual([
        'b three',
        'b two',
        'b one',
        'a three',
        'a two',
        'a one',
      ]);

      // Deleting an entity deletes its kept versions.
      await reopened.entities.delete(ADMIN, urnOf(2));
      const entityIds = raw(filename, (db) => db.prepare('SELECT DISTINCT entity_id FROM aspect_versions').pluck().all() as number[]);
      expect(entityIds).toHaveLength(2);

      // Retention by count and by age, by the key.
      const byCount = await adapter.pruneChanges!({ keepVersions: 2, limit: 1000 });
      expect(byCount.versions).toBe(2 * (5 - 2));
      const counts = raw(filename, (db) => db.prepare('SELECT COUNT(*) FROM aspect_versions GROUP BY entity_id, name_id').pluck().all());
      expect(counts).toEqual([2, 2]);
      const byAge = await adapter.pruneChanges!({ versionsBefore: Number.MAX_SAFE_INTEGER, limit: 1000 });
      expect(byAge.versions).toBe(4);
      expect(keptRows(filename)).toEqual([]);
    } finally {
      await reopened.close();
    }

    // Running the migration again (the version number set back) changes nothing.
    const reopenedOnce = open(filename);
    try {
      await writeVersions(reopenedOnce, 'c');
    } finally {
      await reopenedOnce.close();
    }
    rows = keptRows(filename);
    const db = new Database(filename);
    db.pragma('user_version = 9');
    db.close();
    const again = open(filename);
    try {
      await again.entities.get(ADMIN, urnOf(0));
      expect(raw(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
      expect(keptRows(filename)).toEqual(rows);
      expect(layout(filename).indexes).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
