import { copyGrantsLoop } from './grants';
/**
 * Schema version 6: change events and aspects refer to rows they would otherwise copy
 * (docs/postgres.md, "Storage layout").
 *
 * - An event names its entity by id (`entity_id`) while the entity exists: `entity_urn` and
 *   `entity_type` are NULL then, read from the entity's row; they are written into the event when the
 *   entity is deleted, in the statement that deletes it.
 * - The value of an UPSERT event is the aspect row it wrote (`aspect_version`: the row's version then,
 *   `packed_aspect` NULL) until that row is replaced or deleted: the statement that does so first copies
 *   the row's packed value into the event. `change_events_by_entity` finds both kinds of event.
 * - `change_events_time` goes: retention by age walks the oldest events in id order instead.
 * - The system metadata of aspects is stored once per distinct document in `aspect_metadata` (keyed by
 *   a digest of its packed form) and referred to by `aspects.metadata_id`: the structured properties of
 *   a whole bulk call carry the same definition keys and stamps. A document no row refers to any more is
 *   removed by the commit that dropped the last reference (`aspects_by_metadata` finds references).
 *
 * Roles get on `aspect_metadata` the privileges they hold on `aspects`, so a deployment's grants keep working.
 *
 * Rows written before keep what they hold (events their URN and values, aspects their packed metadata)
 * and are read as they are; readers take whichever is set.
 */
export function referencesMigration(s: string): string {
  return `
    ALTER TABLE ${s}.change_events
      ALTER COLUMN entity_urn DROP NOT NULL,
      ALTER COLUMN entity_type DROP NOT NULL,
      ALTER COLUMN change_type DROP NOT NULL,
      ALTER COLUMN created_actor DROP NOT NULL,
      ADD COLUMN entity_id bigint,
      ADD COLUMN aspect_version integer;
    DROP INDEX ${s}.change_events_time;
    CREATE INDEX change_events_by_entity ON ${s}.change_events (entity_id, aspect_version) WHERE entity_id IS NOT NULL;
    CREATE TABLE ${s}.aspect_metadata (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      digest bytea NOT NULL UNIQUE,
      packed bytea NOT NULL
    );
    ALTER TABLE ${s}.aspect_metadata ALTER COLUMN packed SET STORAGE EXTERNAL;
    ALTER TABLE ${s}.aspects ADD COLUMN metadata_id bigint;
    CREATE INDEX aspects_by_metadata ON ${s}.aspects (metadata_id) WHERE metadata_id IS NOT NULL;
    DO $grants$
    DECLARE r record;
    BEGIN${copyGrantsLoop(`${s}.aspects`, `${s}.aspect_metadata`)}
    END
    $grants$;
  `;
}
