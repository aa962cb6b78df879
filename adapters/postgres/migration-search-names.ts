import { copyGrantsLoop } from './grants';
/**
 * Schema version 7: standard field rows name their field and their document's type by a small id
 * (docs/postgres.md, "Storage layout and size").
 *
 * - `search_names` is a dictionary of names (standard field names and entity types, the entity
 *   registry's: never values), `smallint` ids; rows are never deleted, so an id once read stays valid.
 * - `search_fields` is rewritten with `field_id` and `type_id` instead of the two texts, its columns in
 *   an order that packs them (fixed-width first). Its value index keys on
 *   `(field_id, value, type_id, removed, first_of_field)`, without the entity id: equal entries share one
 *   index tuple (B-tree deduplication), so a field whose values repeat (platform, origin, a true/false
 *   field) costs a few bytes an entry, and a count or a facet over a set of types reads the index alone.
 *   The entity id comes from the row, which conditions that need it read anyway to test the scope.
 *
 * Roles get on the new table the privileges they held on the old one, and the same on `search_names`
 * (a role that writes fields may have to add a name), so a deployment's grants keep working.
 */
export function searchNamesMigration(s: string): string {
  // Writes to the old table wait until the migration commits (then fail, as the table is gone): none is
  // lost between the copy and the drop.
  return `
    LOCK TABLE ${s}.search_fields IN SHARE ROW EXCLUSIVE MODE;
    CREATE TABLE ${s}.search_names (
      id smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text COLLATE "C" NOT NULL UNIQUE
    );
    INSERT INTO ${s}.search_names (name)
      SELECT n.name FROM (SELECT field FROM ${s}.search_fields UNION SELECT entity_type FROM ${s}.search_fields) AS n(name) ORDER BY n.name;
    CREATE TABLE ${s}.search_fields_v7 (
      entity_id bigint NOT NULL,
      field_id smallint NOT NULL,
      type_id smallint NOT NULL,
      removed boolean NOT NULL,
      -- True on the document's first row for this field: counting documents that have the field is a plain count.
      first_of_field boolean NOT NULL,
      value text COLLATE "C" NOT NULL,
      value_lower text COLLATE "C"
    );
    INSERT INTO ${s}.search_fields_v7 (entity_id, field_id, type_id, removed, first_of_field, value, value_lower)
      SELECT f.entity_id, n.id, t.id, f.removed, f.first_of_field, f.value, f.value_lower
      FROM ${s}.search_fields f
      JOIN ${s}.search_names n ON n.name = f.field
      JOIN ${s}.search_names t ON t.name = f.entity_type
      ORDER BY f.entity_id;
    DO $grants$
    DECLARE r record;
    BEGIN${copyGrantsLoop(`${s}.search_fields`, `${s}.search_fields_v7`)}${copyGrantsLoop(`${s}.search_fields`, `${s}.search_names`)}
    END
    $grants$;
    DROP TABLE ${s}.search_fields;
    ALTER TABLE ${s}.search_fields_v7 RENAME TO search_fields;
    CREATE INDEX search_fields_by_value ON ${s}.search_fields (field_id, value, type_id, removed, first_of_field);
    CREATE INDEX search_fields_by_entity ON ${s}.search_fields (entity_id);
    CREATE STATISTICS ${s}.search_fields_field_value (mcv, dependencies) ON field_id, value FROM ${s}.search_fields;
  `;
}
