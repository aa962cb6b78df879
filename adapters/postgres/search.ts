import type { SearchHit, SearchRequest, SearchResponse, SearchScope, SearchCondition } from '../../src/adapter/types';
import type { PgHandle } from './database';
import type { Ids, PropertyKeys } from './property-keys';
import { conditionIds, Params, requestIds, rowScopeOf, scopeSql } from './search-sql';
import { textQuery } from './text';

/**
 * One statement, one round trip: the count of the whole scope and the page, as two sub-selects over
 * the same WHERE clause, so the server plans each on its own (the page can stop after `limit` rows of
 * the URN index; the count scans what it must).
 */
export async function search(h: PgHandle, keys: PropertyKeys, request: SearchRequest): Promise<SearchResponse> {
  const ids = await requestIds(keys, request);
  const p = new Params();
  const scope = scopeSql(h.s, p, ids, request);
  const ranked = request.order === 'relevance' && scope.tsquery !== undefined;
  const pageWhere = [scope.where];
  if (request.order === 'urn' && request.afterUrn !== undefined) pageWhere.push(`d.urn > ${p.add(request.afterUrn, 'text')}`);
  const score = ranked ? `ts_rank(t.tsv, ${scope.tsquery})::float8` : 'NULL::float8';
  const order = ranked ? 'score DESC, d.urn' : 'd.urn';
  const limit = p.add(request.limit, 'bigint');
  const offset = p.add(request.offset ?? 0, 'bigint');
  const total = countFromValues(h.s, p, ids, request) ?? `SELECT count(*) FROM ${scope.from} WHERE ${scope.where}`;
  const [row] = await h.queryPlannedEachTime<{ total: string; hits: Array<[string, string, number | null]> | null }>(
    `SELECT
       (${total}) AS total,
       (SELECT json_agg(json_build_array(x.urn, x.entity_type, x.score) ORDER BY ${ranked ? 'x.score DESC, x.urn' : 'x.urn'})
        FROM (SELECT d.urn, d.entity_type, ${score} AS score FROM ${scope.from} WHERE ${pageWhere.join(' AND ')}
              ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) x) AS hits`,
    p.values,
  );
  const hits: SearchHit[] = (row?.hits ?? []).map(([urn, entityType, s]) => ({
    urn,
    entityType,
    ...(ranked && s !== null ? { score: s } : {}),
  }));
  return { total: Number(row?.total ?? 0), hits };
}

/**
 * The count of a scope without full text whose filter is one group of conditions on fields and
 * properties only (the common case), from the value tables alone: the first condition's rows, tested
 * for type and removed on the rows themselves (the value indexes include both), semi-joined with the
 * others'. A single-valued EQUAL has one row per document (the writer stores each value once per
 * document), and EXISTS reads only each document's first row, so their rows are counted as they are;
 * otherwise a document's sole row under the key counts as it is and the others are counted distinct.
 * Undefined when the scope needs `search_docs`.
 */
function countFromValues(s: string, p: Params, ids: Ids, scope: SearchScope): string | undefined {
  if (textQuery(scope.text) !== undefined || scope.filter.length !== 1) return undefined;
  const group = scope.filter[0]!;
  if (group.length === 0 || group.some((c) => c.negated || c.field.kind === 'urn' || c.field.kind === 'entityType')) return undefined;
  // Decided on scratch parameters, so that no parameter is left unused when this path is not taken.
  if (group.some((c) => conditionIds(s, new Params(), ids, c) === 'FALSE')) return undefined;
  const onePerDocument = (c: SearchCondition): boolean =>
    ((c.operator === 'EQUAL' || c.operator === 'IN') && c.values.length === 1) || c.operator === 'EXISTS';
  const driver = group.find(onePerDocument) ?? group[0]!;
  const rowScope = rowScopeOf(p, ids, scope);
  const perDocument = onePerDocument(driver);
  const first = conditionIds(s, p, ids, driver, rowScope, !perDocument) as string;
  const others = group.filter((c) => c !== driver).map((c) => `c0.entity_id IN (${conditionIds(s, p, ids, c) as string})`);
  const rows = `SELECT c0.entity_id${perDocument ? '' : ', c0.sole'} FROM (${first}) c0${others.length > 0 ? ` WHERE ${others.join(' AND ')}` : ''}`;
  // A document's only row under the key counts as it is; the rows of documents with several values
  // under it, distinct (few, usually: the sort they need stays small).
  return perDocument
    ? `SELECT count(*) FROM (${rows}) r`
    : `SELECT count(*) FILTER (WHERE r.sole) + count(DISTINCT r.entity_id) FILTER (WHERE NOT r.sole) FROM (${rows}) r`;
}
