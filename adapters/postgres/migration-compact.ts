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
