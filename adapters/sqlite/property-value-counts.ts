/** The property-value questions answered from the search keys and values tables (property-values.ts). */
import type { SeveralValuesRequest, SeveralValuesResponse } from '../../src/adapter/types';
import { findKeyId, keyStats } from './search-store';
import { params, type SqliteHandle } from './statements';

export function findEntitiesWithPropertyValues(
  h: SqliteHandle,
  request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number },
): string[] {
  const rows = h
    .stmt(
      `SELECT DISTINCT d.urn AS urn FROM search_keys k
         JOIN search_values v ON v.key_id = k.id
         JOIN entities d ON d.entity_id = v.entity_id
       WHERE k.kind = 'property' AND k.name = @p1 AND (@p2 IS NULL OR k.def_key <> @p2) AND d.urn > @p3
       ORDER BY d.urn LIMIT @p4`,
    )
    .all(params(request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit)) as Array<{ urn: string }>;
  return rows.map((r) => r.urn);
}

export function countEntitiesWithPropertyValues(h: SqliteHandle, propertyUrn: string, definitionKey?: string): number {
  if (definitionKey !== undefined) {
    // One key: its document count, kept by every write.
    const id = findKeyId(h, 'property', propertyUrn, definitionKey);
    return id === undefined ? 0 : keyStats(h, id).entities;
  }
  const row = h
    .stmt(
      `SELECT COUNT(DISTINCT v.entity_id) AS n FROM search_keys k JOIN search_values v ON v.key_id = k.id
       WHERE k.kind = 'property' AND k.name = ?`,
    )
    .get(propertyUrn) as { n: number };
  return row.n;
}

/** Probes a URN walk may spend to find a page before grouping the key's rows is cheaper. */
const SEVERAL_WALK_LIMIT = 20_000;

/**
 * Documents with several values under one key: the count is the key's `multi`, kept by every write.
 * The page walks the URN index and probes each entity's rows under the key (two at most) while the
 * documents with several values are common enough to fill it in fewer probes than the key has documents
 * (or SEVERAL_WALK_LIMIT); else it groups the key's rows (its primary-key range, in entity order) and
 * sorts what it found. Both read
 * in one transaction, so they agree.
 */
export function findEntitiesWithSeveralPropertyValues(h: SqliteHandle, request: SeveralValuesRequest): SeveralValuesResponse {
  return h.db.transaction((): SeveralValuesResponse => {
    const id = findKeyId(h, 'property', request.propertyUrn, request.definitionKey);
    if (id === undefined) return { total: 0, urns: [] };
    const stats = keyStats(h, id);
    const total = stats.multi;
    if (total === 0 || request.limit <= 0) return { total, urns: [] };
    const size = (h.stmt('SELECT MAX(entity_id) AS n FROM entities').get() as { n: number | null }).n ?? 0;
    // Probes the walk expects against the rows grouping reads (each document under the key has one or more).
    const walk = (request.limit * size) / total <= Math.max(SEVERAL_WALK_LIMIT, stats.entities);
    const sql = walk
      ? `SELECT d.urn AS urn FROM entities d
         WHERE d.urn > @p2 AND (SELECT COUNT(*) FROM (SELECT 1 FROM search_values v WHERE v.key_id = @p1 AND v.entity_id = d.entity_id LIMIT 2)) = 2
         ORDER BY d.urn LIMIT @p3`
      : `SELECT d.urn AS urn FROM (SELECT entity_id FROM search_values WHERE key_id = @p1 GROUP BY entity_id HAVING COUNT(*) > 1) m
           JOIN entities d ON d.entity_id = m.entity_id
         WHERE d.urn > @p2 ORDER BY d.urn LIMIT @p3`;
    const rows = h.stmt(sql).all(params(id, request.afterUrn ?? '', request.limit)) as Array<{ urn: string }>;
    return { total, urns: rows.map((r) => r.urn) };
  })();
}
