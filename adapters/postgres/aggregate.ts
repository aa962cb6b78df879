import type { AggregateRequest, FacetBucket, FacetResult, SearchField } from '../../src/adapter/types';
import type { PgHandle } from './database';
import type { Ids, PropertyKeys } from './property-keys';
import { Params, propertyColumn, requestIds, rowScopeOf, scopeSql, type RowScope } from './search-sql';
import { textQuery } from './text';

/** Facet buckets by GROUP BY over the scope, one sub-select per facet, in one statement. */
export async function aggregate(h: PgHandle, keys: PropertyKeys, request: AggregateRequest): Promise<FacetResult[]> {
  if (request.facets.length === 0) return [];
  const ids = await requestIds(keys, request, request.facets);
  const p = new Params();
  const max = p.add(request.maxValues, 'bigint');
  const filtered =
    textQuery(request.text) !== undefined || (request.filter.length > 0 && !request.filter.some((group) => group.length === 0));
  let sql: string;
  if (!filtered) {
    // The scope is a set of types (and removed or not): each facet reads its own table alone, with
    // the type and removed flag the value rows carry.
    const scopeOf = rowScopeOf(p, ids, request);
    sql = request.facets
      .map((field, i) => `(SELECT ${i} AS facet, b.str, b.num, b.n FROM (${facetSql(h.s, p, ids, field, max, scopeOf)}) b)`)
      .join('\nUNION ALL\n');
  } else {
    const scope = scopeSql(h.s, p, ids, request);
    // One facet: the scope inline, so the planner can join it the best way; several: computed once.
    const materialized = request.facets.length > 1 ? 'MATERIALIZED' : 'NOT MATERIALIZED';
    // Only the columns the facets read: a narrower scope is cheaper to materialize and to hash.
    const columns = [
      'd.entity_id',
      ...(request.facets.some((f) => f.kind === 'urn') ? ['d.urn'] : []),
      ...(request.facets.some((f) => f.kind === 'entityType') ? ['d.entity_type'] : []),
    ];
    const selects = request.facets.map(
      (field, i) => `(SELECT ${i} AS facet, b.str, b.num, b.n FROM (${facetSql(h.s, p, ids, field, max)}) b)`,
    );
    sql = `WITH scope AS ${materialized} (SELECT ${columns.join(', ')} FROM ${scope.from} WHERE ${scope.where})\n${selects.join('\nUNION ALL\n')}`;
  }
  const rows = await h.queryPlannedEachTime<{ facet: number; str: string | null; num: number | null; n: string }>(sql, p.values);
  const buckets: FacetBucket[][] = request.facets.map(() => []);
  for (const row of rows) buckets[row.facet]!.push({ value: row.num !== null ? row.num : row.str!, count: Number(row.n) });
  return request.facets.map((field, i) => ({ field, buckets: buckets[i]! }));
}

/**
 * Buckets of one facet: value, number of documents in scope; count descending, then numbers before
 * strings, numbers ascending, strings in code-unit order.
 */
function facetSql(s: string, p: Params, ids: Ids, field: SearchField, max: string, typesOnly?: RowScope): string {
  // With `typesOnly`, the scope is tested on the rows themselves; otherwise they join the `scope` CTE.
  const scoped = (alias: string, table: 'fields' | 'values'): { join: string; where: string } =>
    typesOnly
      ? { join: '', where: ` AND ${typesOnly(alias, table)}` }
      : { join: ` JOIN scope sc ON sc.entity_id = ${alias}.entity_id`, where: '' };
  switch (field.kind) {
    case 'entityType':
    case 'urn': {
      const column = field.kind === 'urn' ? 'urn' : 'entity_type';
      const from = typesOnly ? `${s}.search_docs sc WHERE ${typesOnly('sc', 'docs')}` : 'scope sc';
      return `SELECT sc.${column} AS str, NULL::float8 AS num, count(*) AS n FROM ${from} GROUP BY sc.${column} ORDER BY n DESC, sc.${column} LIMIT ${max}`;
    }
    case 'field': {
      const fieldId = ids.name(field.name);
      // No row was ever written with this field. (`max` is still referenced: every parameter must be.)
      if (fieldId === undefined) return `SELECT NULL::text AS str, NULL::float8 AS num, 0::bigint AS n WHERE FALSE LIMIT ${max}`;
      // The writer stores each value once per field and document: count(*) counts documents.
      const { join, where } = scoped('f', 'fields');
      return `SELECT f.value AS str, NULL::float8 AS num, count(*) AS n
        FROM ${s}.search_fields f${join}
        WHERE f.field_id = ${p.add(fieldId, 'smallint')}${where}
        GROUP BY f.value ORDER BY n DESC, f.value LIMIT ${max}`;
    }
    case 'property': {
      const keyId = ids.key(field.propertyUrn, field.definitionKey);
      // No value was ever written under this key. (`max` is still referenced: every parameter must be.)
      if (keyId === undefined) return `SELECT NULL::text AS str, NULL::float8 AS num, 0::bigint AS n WHERE FALSE LIMIT ${max}`;
      // The writer stores each value once per key and document: count(*) counts documents.
      const { join, where } = scoped('v', 'values');
      return `SELECT v.str_value AS str, v.num_value AS num, count(*) AS n
        FROM ${s}.property_values v${join}
        WHERE v.key_id = ${p.add(keyId, 'integer')} AND ${propertyColumn(field, 'v')} IS NOT NULL${where}
        GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT ${max}`;
    }
  }
}
