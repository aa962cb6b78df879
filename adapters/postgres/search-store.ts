import type { SeveralValuesRequest, SeveralValuesResponse } from '../../src/adapter/types';
import type { PgHandle } from './database';
import type { PropertyKeys } from './property-keys';
import { Params, requestIds, scopeSql } from './search-sql';

/** What `lower()` does to a text in the "C" collation: ASCII letters only. */
const asciiLower = (value: string): string => value.replace(/[A-Z]+/g, (m) => m.toLowerCase());
/** Anything but printable ASCII (control characters too: they only take the longer way). */
const NOT_PRINTABLE_ASCII = /[^ -~]/;

/**
 * The `*_lower` column of a value: JavaScript's lower-casing (the contract's IEQUAL), stored only when
 * the server cannot compute it, that is when it differs from `lower()` in the "C" collation (which
 * lower-cases ASCII letters only). Readers compare `COALESCE(x_lower, lower(x))`. Rows written before
 * schema version 4 hold the lower-casing whenever it differed from the value: the same comparison.
 */
export function storedLower(value: string): string | null {
  // Printable ASCII only (URNs, most names): JavaScript lower-cases exactly the letters `lower()` does.
  if (!NOT_PRINTABLE_ASCII.test(value)) return null;
  const lower = value.toLowerCase();
  if (lower === value) return null;
  return lower === asciiLower(value) ? null : lower;
}

/**
 * The entity ids of the value rows under the keys `keys` (a condition on `k`, the key's row): the two
 * value indexes each hold one kind of value (partial), so each is asked for its own kind.
 */
const valueRowsUnder = (s: string, keys: string): string =>
  ['str_value', 'num_value']
    .map(
      (column) =>
        `SELECT v.entity_id FROM ${s}.property_values v WHERE v.${column} IS NOT NULL AND v.key_id IN (SELECT k.id FROM ${s}.property_keys k WHERE ${keys})`,
    )
    .join(' UNION ALL ');

export async function findEntitiesWithPropertyValues(
  h: PgHandle,
  request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number },
): Promise<string[]> {
  const rows = await h.query<{ urn: string }>(
    `SELECT d.urn FROM ${h.s}.search_docs d
     WHERE d.urn > $3 AND d.entity_id IN (${valueRowsUnder(h.s, 'k.property = $1 AND ($2::text IS NULL OR k.def_key <> $2)')})
     ORDER BY d.urn LIMIT $4`,
    [request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit],
  );
  return rows.map((r) => r.urn);
}

/**
 * Documents with several values under one key, counted and listed in one statement (one snapshot).
 * With a filter, the documents must also match it, tested as a search tests its scope (search-sql.ts).
 */
export async function findEntitiesWithSeveralPropertyValues(
  h: PgHandle,
  keys: PropertyKeys,
  request: SeveralValuesRequest,
): Promise<SeveralValuesResponse> {
  const filter = request.filter ?? [];
  const ids = await requestIds(keys, { entityTypes: [], filter, includeRemoved: true });
  const p = new Params();
  const key = `k.property = ${p.add(request.propertyUrn, 'text')} AND k.def_key = ${p.add(request.definitionKey, 'text')}`;
  const scope = filter.length ? scopeSql(h.s, p, ids, { entityTypes: [], filter, includeRemoved: true }).where : undefined;
  const after = p.add(request.afterUrn ?? '', 'text');
  const limit = p.add(Math.max(0, request.limit), 'bigint');
  const several = `SELECT r.entity_id FROM (${valueRowsUnder(h.s, key)}) r GROUP BY r.entity_id HAVING count(*) > 1`;
  const [row] = await h.query<{ total: string; urns: string[] }>(
    scope === undefined
      ? `WITH m AS (${several})
         SELECT (SELECT count(*) FROM m) AS total,
           ARRAY(SELECT d.urn FROM ${h.s}.search_docs d WHERE d.entity_id IN (SELECT entity_id FROM m) AND d.urn > ${after}
                 ORDER BY d.urn LIMIT ${limit}) AS urns`
      : `WITH m AS MATERIALIZED (SELECT d.urn FROM ${h.s}.search_docs d WHERE d.entity_id IN (${several}) AND ${scope})
         SELECT (SELECT count(*) FROM m) AS total,
           ARRAY(SELECT m.urn FROM m WHERE m.urn > ${after} ORDER BY m.urn LIMIT ${limit}) AS urns`,
    p.values,
  );
  return { total: Number(row?.total ?? 0), urns: row?.urns ?? [] };
}

export async function countEntitiesWithPropertyValues(h: PgHandle, propertyUrn: string, definitionKey?: string): Promise<number> {
  const [row] = await h.query<{ n: string }>(
    `SELECT count(DISTINCT r.entity_id) AS n FROM (${valueRowsUnder(h.s, 'k.property = $1 AND ($2::text IS NULL OR k.def_key = $2)')}) r`,
    [propertyUrn, definitionKey ?? null],
  );
  return Number(row?.n ?? 0);
}
