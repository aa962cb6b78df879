import type { SearchDocument } from '../../src/adapter/types';
import { params, type SqliteHandle } from './statements';

/** Writes and removes search documents inside the caller's transaction. */
export function removeSearchDocument(h: SqliteHandle, entityId: number): void {
  h.stmt('DELETE FROM search_fields WHERE entity_id = ?').run(entityId);
  h.stmt('DELETE FROM property_values WHERE entity_id = ?').run(entityId);
  h.stmt('INSERT OR REPLACE INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, NULL, NULL, NULL, 1)').run(entityId);
  h.stmt('DELETE FROM search_docs WHERE entity_id = ?').run(entityId);
}

export function writeSearchDocument(h: SqliteHandle, entityId: number, doc: SearchDocument, existed: boolean): void {
  if (existed) {
    h.stmt('DELETE FROM search_fields WHERE entity_id = ?').run(entityId);
    h.stmt('DELETE FROM property_values WHERE entity_id = ?').run(entityId);
  }
  h.stmt(
    `INSERT INTO search_docs (entity_id, urn, entity_type, removed) VALUES (?, ?, ?, ?)
     ON CONFLICT (entity_id) DO UPDATE SET removed = excluded.removed`,
  ).run(entityId, doc.urn, doc.entityType, doc.removed ? 1 : 0);
  const insertField = h.stmt('INSERT OR IGNORE INTO search_fields (field, value, entity_id) VALUES (?, ?, ?)');
  for (const [field, values] of Object.entries(doc.fields)) for (const value of values) insertField.run(field, value, entityId);
  const insertValue = h.stmt('INSERT INTO property_values (property, def_key, str_value, num_value, entity_id) VALUES (?, ?, ?, ?, ?)');
  for (const property of doc.properties) {
    for (const value of property.values) {
      if (typeof value === 'number') insertValue.run(property.propertyUrn, property.definitionKey, null, value, entityId);
      else insertValue.run(property.propertyUrn, property.definitionKey, value, null, entityId);
    }
  }
  h.stmt('INSERT OR REPLACE INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, ?, ?, ?, 0)').run(
    entityId,
    doc.text.name ?? '',
    doc.text.description ?? '',
    doc.text.urnKey,
  );
}

/**
 * Moves pending full-text rows into the FTS5 index in one transaction. Called before every query that
 * uses full text, so a query always sees every committed write.
 */
export function flushSearchText(h: SqliteHandle): number {
  const pending = h.stmt('SELECT COUNT(*) AS n FROM search_text_pending').get() as { n: number };
  if (pending.n === 0) return 0;
  return h.db
    .transaction(() => {
      const rows = h.stmt('SELECT entity_id, name, description, urn_key, deleted FROM search_text_pending').all() as Array<{
        entity_id: number;
        name: string | null;
        description: string | null;
        urn_key: string | null;
        deleted: number;
      }>;
      const remove = h.stmt('DELETE FROM search_text WHERE rowid = ?');
      const insert = h.stmt('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)');
      for (const row of rows) {
        remove.run(row.entity_id);
        if (!row.deleted) insert.run(row.entity_id, row.name ?? '', row.description ?? '', row.urn_key ?? '');
      }
      h.stmt('DELETE FROM search_text_pending').run();
      return rows.length;
    })
    .immediate();
}

export function findEntitiesWithPropertyValues(
  h: SqliteHandle,
  request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number },
): string[] {
  const rows = h
    .stmt(
      `SELECT DISTINCT d.urn AS urn FROM property_values v JOIN search_docs d ON d.entity_id = v.entity_id
       WHERE v.property = @p1 AND (@p2 IS NULL OR v.def_key <> @p2) AND d.urn > @p3
       ORDER BY d.urn LIMIT @p4`,
    )
    .all(params(request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit)) as Array<{ urn: string }>;
  return rows.map((r) => r.urn);
}

export function countEntitiesWithPropertyValues(h: SqliteHandle, propertyUrn: string, definitionKey?: string): number {
  const row = h
    .stmt('SELECT COUNT(DISTINCT entity_id) AS n FROM property_values WHERE property = @p1 AND (@p2 IS NULL OR def_key = @p2)')
    .get(params(propertyUrn, definitionKey ?? null)) as { n: number };
  return row.n;
}
