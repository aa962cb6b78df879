import { copyGrantsLoop, GRANTEE } from './grants';
/**
 * Schema version 3: compact storage (docs/postgres.md, "Storage layout").
 *
 * - Aspect values, system metadata and change-event payloads go to `bytea` columns in packed form
 *   (adapters/postgres/packing.ts); the JSON columns stay for rows written before, and readers take
 *   whichever is set. Existing rows are not rewritten: they shrink when next written.
 * - `modified_time` and `modified_actor` of aspects and kept versions are NULL when equal to the
 *   creation stamp (readers fall back to it).
 * - `aspects_by_name` goes: no query reads aspects by name alone (the primary key serves by entity).
 * - The packed columns are stored without compression: they are compressed already.
 */
export function compactMigration(s: string): string {
  return `
    DROP INDEX IF EXISTS ${s}.aspects_by_name;
    ALTER TABLE ${s}.aspects
      ALTER COLUMN value DROP NOT NULL,
      ALTER COLUMN modified_time DROP NOT NULL,
      ALTER COLUMN modified_actor DROP NOT NULL,
      ADD COLUMN packed bytea,
      ADD COLUMN packed_metadata bytea;
    ALTER TABLE ${s}.aspects ALTER COLUMN packed SET STORAGE EXTERNAL, ALTER COLUMN packed_metadata SET STORAGE EXTERNAL;
    ALTER TABLE ${s}.aspect_versions
      ALTER COLUMN value DROP NOT NULL,
      ALTER COLUMN modified_time DROP NOT NULL,
      ALTER COLUMN modified_actor DROP NOT NULL,
      ADD COLUMN packed bytea,
      ADD COLUMN packed_metadata bytea;
    ALTER TABLE ${s}.aspect_versions ALTER COLUMN packed SET STORAGE EXTERNAL, ALTER COLUMN packed_metadata SET STORAGE EXTERNAL;
    ALTER TABLE ${s}.change_events
      ADD COLUMN packed_aspect bytea,
      ADD COLUMN packed_previous bytea,
      ADD COLUMN packed_metadata bytea;
    ALTER TABLE ${s}.change_events
      ALTER COLUMN packed_aspect SET STORAGE EXTERNAL, ALTER COLUMN packed_previous SET STORAGE EXTERNAL, ALTER COLUMN packed_metadata SET STORAGE EXTERNAL;
  `;
}

/**
 * Schema version 4: the search document's own columns move onto the entity's row, and `search_docs`
 * becomes a view of the entities that have a document (`removed` is NULL for those that have none).
 * The URN and type were stored twice, each with its own unique and by-type indexes; now once. Readers
 * keep reading `search_docs`. The `*_lower` columns are stored only when `lower()` in the "C" collation
 * cannot compute them (adapters/postgres/search-store.ts); values stored before stay valid.
 * New entity ids are drawn by the writer with `nextval`, which (unlike an identity default) needs USAGE
 * on the sequence: roles that could insert entities get it here; docs/postgres.md says so for new roles.
 */
export function entityDocumentMigration(s: string): string {
  // Privileges granted on the old table go to the view; roles that may insert entities get USAGE on
  // the identity's sequence, from which the writer now draws new ids itself (adapters/postgres/entities.ts).
  return `
    ALTER TABLE ${s}.entities
      ADD COLUMN removed boolean,
      ADD COLUMN urn_lower text COLLATE "C",
      ADD COLUMN entity_type_lower text COLLATE "C";
    UPDATE ${s}.entities e SET removed = d.removed, urn_lower = d.urn_lower, entity_type_lower = d.entity_type_lower
      FROM ${s}.search_docs d WHERE d.entity_id = e.id;
    CREATE VIEW ${s}.search_docs_view AS
      SELECT id AS entity_id, urn, entity_type, removed, urn_lower, entity_type_lower FROM ${s}.entities WHERE removed IS NOT NULL;
    DO $grants$
    DECLARE r record;
    BEGIN${copyGrantsLoop(`${s}.search_docs`, `${s}.search_docs_view`)}
      FOR r IN SELECT DISTINCT ${GRANTEE} AS who
               FROM pg_class c, aclexplode(c.relacl) a
               WHERE c.oid = '${s}.entities'::regclass AND a.grantee <> c.relowner AND a.privilege_type = 'INSERT' LOOP
        EXECUTE format('GRANT USAGE ON SEQUENCE %s TO %s', pg_get_serial_sequence('${s}.entities', 'id'), r.who);
      END LOOP;
    END
    $grants$;
    DROP TABLE ${s}.search_docs;
    ALTER VIEW ${s}.search_docs_view RENAME TO search_docs;
  `;
}
