import { changesMigration } from './changes';
import { compactMigration } from './compact-migration';
import { formatKeyIds, parseKeyIds } from './search-store';
import type { Database } from 'better-sqlite3';

/**
 * Schema migrations, keyed on `PRAGMA user_version`: migration i brings the file from version i to
 * i + 1, each in its own transaction (a new file: all of them in one). Append new migrations; never edit a released one.
 */
const MIGRATIONS: ReadonlyArray<(db: Database) => void> = [
  (db) => {
    db.exec(`
      CREATE TABLE entities (
        id INTEGER PRIMARY KEY,
        urn TEXT NOT NULL UNIQUE,
        entity_type TEXT NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE INDEX entities_by_type ON entities (entity_type, urn);

      CREATE TABLE aspects (
        entity_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_time INTEGER NOT NULL,
        created_actor TEXT NOT NULL,
        modified_time INTEGER NOT NULL,
        modified_actor TEXT NOT NULL,
        system_metadata TEXT,
        PRIMARY KEY (entity_id, name)
      ) WITHOUT ROWID;
      CREATE INDEX aspects_by_name ON aspects (name, entity_id);

      -- Search documents: one row per entity, its typed values (standard fields and structured
      -- properties alike, one row per distinct value: no DDL per property) and its text.
      CREATE TABLE search_docs (
        entity_id INTEGER PRIMARY KEY,
        urn TEXT NOT NULL,
        entity_type TEXT NOT NULL,
        removed INTEGER NOT NULL,
        -- The search_keys ids this document has values under, space-separated, an asterisk after the id when
        -- it has several values under it: what to delete and uncount on change.
        key_ids TEXT NOT NULL DEFAULT ''
      );
      -- URN order for keyset pages, and the scope (removed, type) for counts; both covering.
      CREATE INDEX search_docs_by_urn ON search_docs (urn, removed, entity_type);
      CREATE INDEX search_docs_by_scope ON search_docs (removed, entity_type, urn);

      -- A searchable key: a standard field ('field', name, '') or a structured property under one
      -- definition key ('property', property URN, definition key). Rows are never deleted. Kept by
      -- every write: entities, the documents with a value under the key (to choose how to run a
      -- filter); multi, those with more than one (none: a count needs no de-duplication).
      CREATE TABLE search_keys (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        def_key TEXT NOT NULL,
        entities INTEGER NOT NULL DEFAULT 0,
        multi INTEGER NOT NULL DEFAULT 0,
        UNIQUE (kind, name, def_key)
      );

      -- value has no declared type (no affinity): numbers stay REAL, strings TEXT, and SQLite orders
      -- every number before every string. The primary key keeps each key's rows in entity order, so a
      -- probe "does entity e match" is a seek next to the previous one. removed and entity_type repeat
      -- the document's, so that a filter or a facet is answered from search_values_by_value alone.
      -- flags, per (entity, key): 1 = smallest value of its type, 2 = largest of its type, 4 = the
      -- entity's first value; they let a range or EXISTS count one row per entity without DISTINCT.
      CREATE TABLE search_values (
        key_id INTEGER NOT NULL,
        entity_id INTEGER NOT NULL,
        value NOT NULL,
        removed INTEGER NOT NULL,
        entity_type TEXT NOT NULL,
        flags INTEGER NOT NULL,
        PRIMARY KEY (key_id, entity_id, value)
      ) WITHOUT ROWID;
      CREATE INDEX search_values_by_value ON search_values (key_id, removed, value, entity_id, flags, entity_type);

      -- Full-text rows wait here and are moved into search_text in one batch before the next text query
      -- (flushSearchText): an FTS5 write per small transaction costs more than the rest of the write.
      CREATE TABLE search_text_pending (
        entity_id INTEGER PRIMARY KEY,
        name TEXT,
        description TEXT,
        urn_key TEXT,
        deleted INTEGER NOT NULL
      );
      -- Holds the terms of src/adapter/text-analysis.ts (folded, stop words out, stemmed), written
      -- with spaces between them: the ascii tokenizer then keeps each term as it is.
      CREATE VIRTUAL TABLE search_text USING fts5 (
        name, description, urn_key,
        content = '', contentless_delete = 1,
        tokenize = 'ascii'
      );

      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        run_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        locked_by TEXT,
        locked_until INTEGER,
        last_error TEXT,
        state TEXT NOT NULL DEFAULT 'pending',
        dedupe_key TEXT
      );
      CREATE INDEX jobs_claimable ON jobs (state, run_at, id);
      CREATE UNIQUE INDEX jobs_dedupe ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL AND state = 'pending';

      -- One table per timeseries index, named like the index; this lists them.
      CREATE TABLE timeseries_indexes (
        index_name TEXT PRIMARY KEY,
        entity_type TEXT NOT NULL,
        aspect TEXT NOT NULL
      );
    `);
  },
  (db) => {
    // Timeseries sizes kept exact per write (page deltas inside each write transaction), so that
    // reading them never walks a table; NULL means "measure with dbstat on the next read".
    db.exec(`
      ALTER TABLE timeseries_indexes ADD COLUMN pages INTEGER;
      ALTER TABLE timeseries_indexes ADD COLUMN row_count INTEGER;
    `);
  },
  (db) => {
    // The entity type of every document with values under a key: NULL when there is none, the type
    // when they all have one, '*' when they have several. A filter whose scope names that type can
    // leave the per-row type test out (for a value held by half of 100k datasets, 3.6 → 2.1 ms).
    // Re-running over a file that has the column already (its version number set back) only refills it.
    const columns = db.prepare("SELECT name FROM pragma_table_info('search_keys')").pluck().all() as string[];
    if (!columns.includes('entity_type')) db.exec('ALTER TABLE search_keys ADD COLUMN entity_type TEXT');
    db.exec(`
      UPDATE search_keys SET entity_type = (
        SELECT CASE WHEN COUNT(*) = 0 THEN NULL WHEN MIN(v.entity_type) = MAX(v.entity_type) THEN MIN(v.entity_type) ELSE '*' END
        FROM search_values v WHERE v.key_id = search_keys.id
      );
    `);
  },
  // Change feed and aspect history (adapters/sqlite/changes.ts): change_events, aspect_versions.
  changesMigration,
  // The compact layout (adapters/sqlite/compact-migration.ts): dictionary, packed aspects, events by reference.
  compactMigration,
  (db) => {
    // search_values.entity_type holds the type's dictionary id (in decimal, the column keeps its TEXT
    // affinity) instead of its name: a byte or two instead of seven or more, in the table and again in
    // its value index, on every value row (about 140 bytes per dataset with five structured properties).
    // Type names start with a letter, keys are digits: only names are converted, so running it again
    // (a file whose version number was set back) changes nothing.
    db.exec(`
      INSERT OR IGNORE INTO dictionary (text) SELECT DISTINCT entity_type FROM search_values WHERE entity_type GLOB '[A-Za-z]*';
      UPDATE search_values SET entity_type = (SELECT CAST(d.id AS TEXT) FROM dictionary d WHERE d.text = search_values.entity_type)
        WHERE entity_type GLOB '[A-Za-z]*';
    `);
    // The statistics keep type names: migration 3 run again over converted rows read keys there.
    db.exec(`
      UPDATE search_keys SET entity_type = (SELECT d.text FROM dictionary d WHERE CAST(d.id AS TEXT) = search_keys.entity_type)
        WHERE entity_type GLOB '[0-9]*';
    `);
  },
  (db) => {
    // Per-value document counts of the keys with few distinct values (adapters/sqlite/value-counts.ts):
    // an EQUAL or a range is then counted from a few rows instead of every matching value row.
    // value_counts is the number of the key's rows there, NULL when they are not kept; recheck_at the
    // document count at which a key without them is looked at again. Re-running over a file that has
    // them already (its version number set back) recounts everything.
    db.exec(`
      CREATE TABLE IF NOT EXISTS search_value_counts (
        key_id INTEGER NOT NULL,
        value NOT NULL,
        live INTEGER NOT NULL,
        removed INTEGER NOT NULL,
        PRIMARY KEY (key_id, value)
      ) WITHOUT ROWID;
      DELETE FROM search_value_counts;
    `);
    const columns = db.prepare("SELECT name FROM pragma_table_info('search_keys')").pluck().all() as string[];
    if (!columns.includes('value_counts')) db.exec('ALTER TABLE search_keys ADD COLUMN value_counts INTEGER DEFAULT 0');
    if (!columns.includes('recheck_at')) db.exec('ALTER TABLE search_keys ADD COLUMN recheck_at INTEGER NOT NULL DEFAULT 0');
    const keys = db.prepare('SELECT id, entities FROM search_keys').all() as Array<{ id: number; entities: number }>;
    for (const key of keys) countValuesOrGiveUp(db, key.id, key.entities);
  },
  (db) => {
    // Fewer bytes per entity (docs/adapters.md), the tables unchanged:
    // - search_values.flags becomes flags_off, the flags a row does NOT have (7 - flags): a key's only
    //   value, the common case, then holds 0, which SQLite stores in no bytes (a byte less per value
    //   row, in the table and again in its value index);
    // - entities.key_ids writes runs of consecutive key ids as ranges ('1-9'; parseKeyIds reads both);
    // - packed documents write an element equal to the one before it as a repeat mark (packing.ts),
    //   which a release before this one could not read: hence the version.
    // Re-running over a file converted already (its version number set back) finds no `flags` column.
    const columns = db.prepare("SELECT name FROM pragma_table_info('search_values')").pluck().all() as string[];
    if (columns.includes('flags')) {
      db.exec('UPDATE search_values SET flags = 7 - flags; ALTER TABLE search_values RENAME COLUMN flags TO flags_off');
    }
    db.function('metacatalog_key_ids', { deterministic: true }, (text: unknown) => formatKeyIds(parseKeyIds(String(text))));
    db.exec("UPDATE entities SET key_ids = metacatalog_key_ids(key_ids) WHERE key_ids LIKE '% %'");
  },
  () => {
    // A replaced value is stored once (adapters/sqlite/changes.ts): the event of the write that replaced an
    // aspect row holds it as its previous value, and the row's older event, left as it was, reads it there
    // instead of getting a copy. The tables are unchanged and a file of version 8 reads as before (its
    // older events hold their copies), so there is nothing to convert and running it again does nothing;
    // the version keeps a release before this one from opening a file whose older events have no copy.
  },
  keyVersionsByAspect,
];

/**
 * Migration 10: `aspect_versions` keyed by (entity, aspect, version), WITHOUT ROWID, instead of a rowid
 * table with a unique index on those three. Keeping a replaced value then writes one b-tree page, not two
 * (the table's last page and an index leaf): a replacement with the change feed on put 7.6 pages into the
 * WAL, now 6.6 (docs/changes.md). Every read and delete of versions is by that key; retention deletes by
 * it too. A file converted already (its version number set back) has no `id` column: nothing to do.
 */
function keyVersionsByAspect(db: Database): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('aspect_versions')").pluck().all() as string[];
  if (!columns.includes('id')) return;
  const kept = 'entity_id, name_id, version, created_time, created_actor, modified_time, modified_actor, value, system_metadata';
  db.exec(`
    CREATE TABLE aspect_versions_keyed (
      entity_id INTEGER NOT NULL,
      name_id INTEGER NOT NULL,
      version INTEGER NOT NULL,
      -- NULL when equal to the last-modified stamp (a first write).
      created_time INTEGER,
      created_actor INTEGER,
      modified_time INTEGER NOT NULL,
      modified_actor INTEGER NOT NULL,
      value TEXT NOT NULL,
      system_metadata TEXT,
      PRIMARY KEY (entity_id, name_id, version)
    ) WITHOUT ROWID;
    INSERT INTO aspect_versions_keyed (${kept}) SELECT ${kept} FROM aspect_versions ORDER BY entity_id, name_id, version;
    DROP TABLE aspect_versions;
    ALTER TABLE aspect_versions_keyed RENAME TO aspect_versions;
  `);
}

/**
 * Schema version 7, one key: its per-value counts from its rows when it has at most
 * `max(64, entities / 4)` distinct values, else none (looked at again at twice as many documents).
 * Frozen with the migration: the adapter's own recount is in value-counts.ts.
 */
function countValuesOrGiveUp(db: Database, keyId: number, entities: number): void {
  const limit = Math.max(64, Math.floor(entities / 4));
  const distinct = db
    .prepare('SELECT COUNT(*) FROM (SELECT DISTINCT value FROM search_values WHERE key_id = ? LIMIT ?)')
    .pluck()
    .get(keyId, limit + 1) as number;
  if (distinct > limit) {
    db.prepare('UPDATE search_keys SET value_counts = NULL, recheck_at = ? WHERE id = ?').run(2 * entities, keyId);
    return;
  }
  db.prepare(
    `INSERT INTO search_value_counts (key_id, value, live, removed)
       SELECT key_id, value, SUM(removed = 0), SUM(removed = 1) FROM search_values WHERE key_id = ? GROUP BY value`,
  ).run(keyId);
  db.prepare('UPDATE search_keys SET value_counts = ?, recheck_at = 0 WHERE id = ?').run(distinct, keyId);
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the file to the current schema. A file from a newer release is refused rather than damaged. True when
 * the file was new (its tables were created now, empty).
 */
export function migrate(db: Database): boolean {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`the database file has schema version ${current}, newer than this release supports (${MIGRATIONS.length})`);
  }
  if (current === 0) {
    // Must precede the first table: lets a truncation by reindex give file space back.
    db.pragma('auto_vacuum = INCREMENTAL');
    // A new file: every migration in one transaction (one commit and sync instead of one per migration; a
    // crash leaves the file empty, as before its first migration). The version is read again under the write
    // lock: another process opening the same new file may have migrated it meanwhile.
    const created = db
      .transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) !== 0) return false;
        for (const step of MIGRATIONS) step(db);
        db.pragma(`user_version = ${MIGRATIONS.length}`);
        return true;
      })
      .immediate();
    if (created) return true;
    return migrate(db);
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      MIGRATIONS[version]!(db);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
  // Tables rebuilt by a migration leave free pages: give them back to the file system.
  if (current > 0 && current < MIGRATIONS.length) db.pragma('incremental_vacuum');
  return false;
}
