import type { Database } from 'better-sqlite3';

/**
 * Schema migrations, keyed on `PRAGMA user_version`: migration i brings the file from version i to
 * i + 1, each in its own transaction. Append new migrations; never edit a released one.
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

      -- Search documents: one row per entity, its standard fields, its typed property values, its text.
      CREATE TABLE search_docs (
        entity_id INTEGER PRIMARY KEY,
        urn TEXT NOT NULL UNIQUE,
        entity_type TEXT NOT NULL,
        removed INTEGER NOT NULL
      );
      CREATE INDEX search_docs_by_type ON search_docs (entity_type, urn);

      CREATE TABLE search_fields (
        field TEXT NOT NULL,
        value TEXT NOT NULL,
        entity_id INTEGER NOT NULL,
        PRIMARY KEY (field, value, entity_id)
      ) WITHOUT ROWID;
      CREATE INDEX search_fields_by_entity ON search_fields (entity_id);

      -- One row per value: no DDL per property, any number of runtime-defined properties.
      CREATE TABLE property_values (
        property TEXT NOT NULL,
        def_key TEXT NOT NULL,
        str_value TEXT,
        num_value REAL,
        entity_id INTEGER NOT NULL
      );
      CREATE INDEX property_values_str ON property_values (property, def_key, str_value, entity_id);
      CREATE INDEX property_values_num ON property_values (property, def_key, num_value, entity_id);
      CREATE INDEX property_values_by_entity ON property_values (entity_id);

      -- Full-text rows wait here and are moved into search_text in one batch before the next text query
      -- (flushSearchText): an FTS5 write per small transaction costs more than the rest of the write.
      CREATE TABLE search_text_pending (
        entity_id INTEGER PRIMARY KEY,
        name TEXT,
        description TEXT,
        urn_key TEXT,
        deleted INTEGER NOT NULL
      );
      CREATE VIRTUAL TABLE search_text USING fts5 (
        name, description, urn_key,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61'
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
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the file to the current schema. A file from a newer release is refused rather than damaged. */
export function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`the database file has schema version ${current}, newer than this release supports (${MIGRATIONS.length})`);
  }
  if (current === 0) {
    // Must precede the first table: lets a truncation by reindex give file space back.
    db.pragma('auto_vacuum = INCREMENTAL');
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      MIGRATIONS[version]!(db);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
