/**
 * Schema version 5: counts and facets over structured property values answered by the value indexes
 * alone (index-only scans, docs/postgres.md "Search at a million").
 *
 * - `property_values_str` and `property_values_num` carry the document's removed flag, its type and
 *   the two per-document flags as included columns, so the row scope (type, removed) and the count
 *   never visit the table; each holds only the rows of its kind (partial: a string value is never in
 *   the number index, nor the reverse), which makes them smaller than the two full indexes they replace.
 * - `sole_of_key`: the row is the document's only value under its key. A range over values counts
 *   those rows as they are and only the others distinct. Rows written before read as false (counted
 *   distinct, as before): correct, only slower until they are next written.
 */
export function valueIndexMigration(s: string): string {
  return `
    ALTER TABLE ${s}.property_values ADD COLUMN sole_of_key boolean NOT NULL DEFAULT false;
    DROP INDEX ${s}.property_values_str;
    DROP INDEX ${s}.property_values_num;
    CREATE INDEX property_values_str ON ${s}.property_values (key_id, str_value, entity_id)
      INCLUDE (removed, first_of_key, sole_of_key, entity_type) WHERE str_value IS NOT NULL;
    CREATE INDEX property_values_num ON ${s}.property_values (key_id, num_value, entity_id)
      INCLUDE (removed, first_of_key, sole_of_key, entity_type) WHERE num_value IS NOT NULL;
  `;
}
