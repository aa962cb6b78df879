import { changesMigration } from './changes';
import { compactMigration, entityDocumentMigration } from './migration-compact';
import { referencesMigration } from './migration-references';
import { searchNamesMigration } from './migration-search-names';
import { valueIndexMigration } from './migration-value-index';
import type { PgHandle, Queryable } from './database';

/**
 * Schema migrations. Migration i brings the schema from version i to i + 1, in its own transaction,
 * recorded in `metacatalog_schema_version`. Every migration transaction first takes a transaction-level
 * advisory lock, so that two processes starting at once on a fresh database do not both create the
 * tables: the second waits, then finds the version moved and skips what is done.
 * Append new migrations; never edit a released one.
 *
 * Text columns that are compared or ordered (URNs, field values, string property values) use
 * `COLLATE "C"`: the contract orders by code units, whatever the database's default collation is.
 */
const MIGRATIONS: ReadonlyArray<(s: string) => string> = [
  (s) => `
    CREATE TABLE ${s}.entities (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      urn text COLLATE "C" NOT NULL UNIQUE,
      entity_type text COLLATE "C" NOT NULL,
      version integer NOT NULL
    );
    CREATE INDEX entities_by_type ON ${s}.entities (entity_type, urn);

    CREATE TABLE ${s}.aspects (
      entity_id bigint NOT NULL,
      name text COLLATE "C" NOT NULL,
      value text NOT NULL,
      version integer NOT NULL,
      created_time bigint NOT NULL,
      created_actor text NOT NULL,
      modified_time bigint NOT NULL,
      modified_actor text NOT NULL,
      system_metadata text,
      PRIMARY KEY (entity_id, name)
    );
    CREATE INDEX aspects_by_name ON ${s}.aspects (name, entity_id);

    -- Search documents: one narrow row per entity (scans and joins stay cheap), its full-text vector
    -- beside it, its standard fields and its typed property values below.
    -- The *_lower columns hold JavaScript's toLowerCase() of the value when it differs (else NULL), so
    -- that IEQUAL means exactly what the contract says, whatever the server's collations can do.
    CREATE TABLE ${s}.search_docs (
      entity_id bigint PRIMARY KEY,
      urn text COLLATE "C" NOT NULL UNIQUE,
      entity_type text COLLATE "C" NOT NULL,
      removed boolean NOT NULL,
      urn_lower text COLLATE "C",
      entity_type_lower text COLLATE "C"
    );
    CREATE INDEX search_docs_by_type ON ${s}.search_docs (entity_type, urn);

    -- Terms of name, URN key and description, analysed by the library (see adapters/postgres/text.ts).
    CREATE TABLE ${s}.search_text (
      entity_id bigint PRIMARY KEY,
      tsv tsvector NOT NULL
    );
    CREATE INDEX search_text_terms ON ${s}.search_text USING gin (tsv);

    -- No unique key: a commit deletes a document's old rows and inserts its new ones in one statement
    -- (the writer puts each value once per field and document).
    -- The document's type and removed flag are repeated on every value row (the writer replaces all of
    -- a document's rows whenever it changes), so a facet over a whole type reads one table.
    CREATE TABLE ${s}.search_fields (
      field text COLLATE "C" NOT NULL,
      value text COLLATE "C" NOT NULL,
      entity_id bigint NOT NULL,
      value_lower text COLLATE "C",
      entity_type text COLLATE "C" NOT NULL,
      removed boolean NOT NULL,
      -- True on the document's first row for this field: counting documents that have the field is a plain count.
      first_of_field boolean NOT NULL
    );
    CREATE INDEX search_fields_by_value ON ${s}.search_fields (field, value, entity_id);
    CREATE INDEX search_fields_by_entity ON ${s}.search_fields (entity_id);
    CREATE STATISTICS ${s}.search_fields_field_value (mcv, dependencies) ON field, value FROM ${s}.search_fields;

    -- A dictionary of (property, definition key) pairs: each value row carries a 4-byte id instead of
    -- two long texts. Rows are never deleted, so an id once read stays valid.
    CREATE TABLE ${s}.property_keys (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      property text COLLATE "C" NOT NULL,
      def_key text COLLATE "C" NOT NULL,
      UNIQUE (property, def_key)
    );

    -- One typed row per structured property value: no DDL per property, any number of runtime-defined
    -- properties. The statistics on (key, value) let the planner see how common a value is for one property.
    CREATE TABLE ${s}.property_values (
      key_id integer NOT NULL,
      str_value text COLLATE "C",
      num_value double precision,
      entity_id bigint NOT NULL,
      str_lower text COLLATE "C",
      entity_type text COLLATE "C" NOT NULL,
      removed boolean NOT NULL,
      -- True on the document's first row for this key: counting documents that have the property is a plain count.
      first_of_key boolean NOT NULL
    );
    CREATE INDEX property_values_str ON ${s}.property_values (key_id, str_value, entity_id);
    CREATE INDEX property_values_num ON ${s}.property_values (key_id, num_value, entity_id);
    CREATE INDEX property_values_by_entity ON ${s}.property_values (entity_id);
    CREATE STATISTICS ${s}.property_values_key_str (mcv, dependencies) ON key_id, str_value FROM ${s}.property_values;
    CREATE STATISTICS ${s}.property_values_key_num (mcv, dependencies) ON key_id, num_value FROM ${s}.property_values;

    CREATE TABLE ${s}.jobs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      type text NOT NULL,
      payload text NOT NULL,
      run_at bigint NOT NULL,
      created_at bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      locked_by text,
      locked_until bigint,
      last_error text,
      state text NOT NULL DEFAULT 'pending',
      dedupe_key text
    );
    CREATE INDEX jobs_claimable ON ${s}.jobs (state, run_at, id);
    CREATE UNIQUE INDEX jobs_dedupe ON ${s}.jobs (dedupe_key) WHERE dedupe_key IS NOT NULL AND state = 'pending';

    -- One table per timeseries index, named like the index; this lists them.
    CREATE TABLE ${s}.timeseries_indexes (
      index_name text PRIMARY KEY,
      entity_type text COLLATE "C" NOT NULL,
      aspect text NOT NULL
    );
  `,
  // Change feed and aspect history (adapters/postgres/changes.ts): change_counter, change_events, aspect_versions.
  changesMigration,
  // Compact storage: packed documents, audit stamps stored once (adapters/postgres/migration-compact.ts).
  compactMigration,
  // Search documents on the entity row, `search_docs` a view (adapters/postgres/migration-compact.ts).
  entityDocumentMigration,
  // Value indexes that answer counts and facets alone (adapters/postgres/migration-value-index.ts).
  valueIndexMigration,
  // Events and aspects refer to entity rows, aspect rows and shared metadata (adapters/postgres/migration-references.ts).
  referencesMigration,
  // Standard field rows name their field and type by dictionary ids (adapters/postgres/migration-search-names.ts).
  searchNamesMigration,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Constant first key of the advisory lock; the second is the schema's hash, so catalogs in other schemas do not wait. */
const MIGRATION_LOCK = 0x6d657461; // "meta"

async function lockAndReadVersion(tx: Queryable, h: PgHandle): Promise<number> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, h.schemaName]);
  // Created only when missing: CREATE ... IF NOT EXISTS would still need the right to create, which a
  // role that only uses an existing schema may not have.
  const [state] = await tx.query<{ has_schema: boolean; has_table: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS has_schema,
            to_regclass($2) IS NOT NULL AS has_table`,
    [h.schemaName, `${h.s}.metacatalog_schema_version`],
  );
  if (!state?.has_schema) await tx.script(`CREATE SCHEMA ${h.s}`);
  if (!state?.has_table) {
    await tx.script(
      `CREATE TABLE ${h.s}.metacatalog_schema_version (version integer NOT NULL); INSERT INTO ${h.s}.metacatalog_schema_version (version) VALUES (0)`,
    );
    return 0;
  }
  const rows = await tx.query<{ version: number }>(`SELECT version FROM ${h.s}.metacatalog_schema_version`);
  return rows[0]?.version ?? 0;
}

/**
 * Brings the schema to the current version (or to `target`, for tests that build a schema as an
 * earlier release left it). A schema from a newer release is refused rather than damaged.
 */
export async function migrate(h: PgHandle, target: number = MIGRATIONS.length): Promise<void> {
  for (;;) {
    const done = await h.transaction(async (tx) => {
      const current = await lockAndReadVersion(tx, h);
      if (current > MIGRATIONS.length) {
        throw new Error(
          `the PostgreSQL schema ${h.schemaName} has metacatalog schema version ${current}, newer than this release supports (${MIGRATIONS.length})`,
        );
      }
      if (current >= target) return true;
      // A new schema is made in one transaction, every migration in one script: nothing half-made is ever seen,
      // and one round trip instead of six per migration. An existing schema moves one migration per transaction.
      const last = current === 0 ? target : current + 1;
      // Multi-statement scripts, sent with the simple query protocol, inside the transaction.
      await tx.script(
        MIGRATIONS.slice(current, last)
          .map((migration) => migration(h.s))
          .join(';\n'),
      );
      await tx.execute(`UPDATE ${h.s}.metacatalog_schema_version SET version = $1`, [last]);
      return last >= target;
    });
    if (done) return;
  }
}
