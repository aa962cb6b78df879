import type { AggregateRequest, FacetResult, SearchHit, SearchRequest, SearchResponse } from '../../src/adapter/types';
import { andOf, count, countQuery, groupQuery, keyOf, matchingSet, orOfProbes, probe, resolve, scopeIndex } from './search-plan';
import { docScope, fragment, join, sql, valueScope, type Fragment } from './search-sql';
import { flushSearchText } from './search-store';
import type { SqliteHandle } from './statements';

/**
 * The LIMIT of a page, written into the SQL text and cut to size in JavaScript: SQLite keeps only
 * that many rows while sorting when the limit is a literal, not when it is a parameter (measured: a
 * page of 20 out of a few hundred matches costs a third more). Up to 100 as asked, above that the next
 * power of two, so that the number of cached statement texts stays small.
 */
function limitBucket(limit: number): number {
  if (limit <= 100) return Math.max(limit, 1);
  let bucket = 128;
  while (bucket < limit) bucket *= 2;
  return bucket;
}

function pageLimit(limit: number, offset: number): Fragment {
  return fragment(`LIMIT ${limitBucket(limit)} OFFSET ?`, offset);
}

/** bm25() column weights (name, description, URN key); the memory adapter boosts the same way. */
const BM25 = 'bm25(search_text, 10.0, 1.0, 1.0)';

/**
 * Answers a search. Everything it reads (key statistics, the count, the page) is read in one
 * transaction, so that total and page agree even while other processes write.
 */
export function search(h: SqliteHandle, request: SearchRequest): SearchResponse {
  if (request.text !== undefined) flushSearchText(h);
  return h.db.transaction(() => searchNow(h, request))();
}

function searchNow(h: SqliteHandle, request: SearchRequest): SearchResponse {
  const plan = resolve(h, request);
  const limit = Math.max(0, Math.floor(request.limit));
  const offset = Math.max(0, Math.floor(request.offset ?? 0));
  const after = request.order === 'urn' ? (request.afterUrn ?? '') : '';
  if (plan.kind === 'nothing') return { total: 0, hits: [] };
  if (plan.kind === 'scope') {
    const total = count(h, sql`SELECT COUNT(*) AS n FROM search_docs d ${scopeIndex(request, true)} WHERE ${docScope(request)}`);
    const page = sql`SELECT d.urn AS urn, d.entity_type AS entityType FROM search_docs d ${scopeIndex(request, false)}
      WHERE d.urn > ${fragment('?', after)} AND ${docScope(request)} ORDER BY d.urn ${pageLimit(limit, offset)}`;
    return { total, hits: limit === 0 ? [] : hits(h, page, limit) };
  }
  const queries = plan.groups.map((group) => groupQuery(h, group, request));
  const total = count(h, countQuery(queries, plan.groups, request));
  if (total === 0 || limit === 0) return { total, hits: [] };

  if (request.order === 'relevance' && plan.match !== undefined) {
    const others = join(plan.groups.map((group) => andOf(group.filter((c) => c.kind !== 'text').map((c) => probe(c, 'd.entity_id', 'd')))), ' OR ');
    const page = sql`SELECT d.urn AS urn, d.entity_type AS entityType, ${fragment(BM25)} AS rank
      FROM search_text JOIN search_docs d ON d.entity_id = search_text.rowid
      WHERE search_text MATCH ${fragment('?', plan.match)} AND ${docScope(request)} AND (${others})
      ORDER BY rank, d.urn ${pageLimit(limit, offset)}`;
    const ranked = rows<{ urn: string; entityType: string; rank: number }>(h, page).slice(0, limit);
    return { total, hits: ranked.map((r) => ({ urn: r.urn, entityType: r.entityType, score: -r.rank })) };
  }

  // URN order. Walking the URN index and testing each document costs about (offset + limit) × N / total
  // probes; evaluating the matching set and sorting it costs about `total`. Take the cheaper.
  const size = (h.stmt('SELECT MAX(entity_id) AS n FROM search_docs').get() as { n: number | null }).n ?? 0;
  const walk = (offset + limit) * (size / total) * 4 < total;
  const tail = sql`ORDER BY d.urn ${pageLimit(limit, offset)}`;
  let page: Fragment;
  if (walk) {
    page = sql`SELECT d.urn AS urn, d.entity_type AS entityType FROM search_docs d ${scopeIndex(request, false)}
      WHERE d.urn > ${fragment('?', after)} AND ${docScope(request)} AND (${orOfProbes(plan.groups)}) ${tail}`;
  } else {
    const single = queries.length === 1 ? queries[0] : undefined;
    if (single?.driven && single.unique) {
      // The matches, joined to their documents in the driver's order, then sorted: one pass.
      const from = single.joinsDoc ? single.from : sql`${single.from} CROSS JOIN search_docs d ON d.entity_id = ${fragment(single.entity)}`;
      page = sql`SELECT d.urn AS urn, d.entity_type AS entityType FROM ${from}
        WHERE ${single.where} AND ${single.unique} AND d.urn > ${fragment('?', after)} ${tail}`;
    } else {
      page = sql`SELECT d.urn AS urn, d.entity_type AS entityType FROM search_docs d
        WHERE d.entity_id IN (${matchingSet(queries, plan.groups, request)}) AND d.urn > ${fragment('?', after)} ${tail}`;
    }
  }
  return { total, hits: hits(h, page, limit) };
}

export function aggregate(h: SqliteHandle, request: AggregateRequest): FacetResult[] {
  if (request.text !== undefined) flushSearchText(h);
  return h.db.transaction(() => aggregateNow(h, request))();
}

function aggregateNow(h: SqliteHandle, request: AggregateRequest): FacetResult[] {
  const plan = resolve(h, request);
  const maxValues = Math.max(0, Math.floor(request.maxValues));
  const set =
    plan.kind === 'groups'
      ? matchingSet(
          plan.groups.map((group) => groupQuery(h, group, request)),
          plan.groups,
          request,
        )
      : undefined;
  return request.facets.map((field) => {
    if (plan.kind === 'nothing' || maxValues === 0) return { field, buckets: [] };
    const limit = fragment(String(limitBucket(maxValues)));
    let query: Fragment;
    if (field.kind === 'entityType' || field.kind === 'urn') {
      const inSet = set ? sql`AND d.entity_id IN (${set})` : fragment('');
      query =
        field.kind === 'entityType'
          ? sql`SELECT d.entity_type AS value, COUNT(*) AS count FROM search_docs d WHERE ${docScope(request)} ${inSet}
              GROUP BY d.entity_type ORDER BY count DESC, value LIMIT ${limit}`
          : sql`SELECT d.urn AS value, 1 AS count FROM search_docs d WHERE ${docScope(request)} ${inSet} ORDER BY d.urn LIMIT ${limit}`;
    } else {
      const keyId = keyOf(h, field);
      if (keyId === undefined) return { field, buckets: [] };
      const inSet = set ? sql`AND v.entity_id IN (${set})` : fragment('');
      // (entity, key, value) is unique, so COUNT(*) per value counts entities.
      query = sql`SELECT v.value AS value, COUNT(*) AS count FROM search_values v
        WHERE v.key_id = ${fragment('?', keyId)} AND ${valueScope('v', request)} ${inSet}
        GROUP BY v.value ORDER BY count DESC, v.value LIMIT ${limit}`;
    }
    const found = rows<{ value: string | number; count: number }>(h, query).slice(0, maxValues);
    return { field, buckets: found.map((r) => ({ value: r.value, count: r.count })) };
  });
}

function rows<T>(h: SqliteHandle, query: Fragment): T[] {
  return h.stmt(query.text).all(query.params) as T[];
}

/** A page of `SELECT urn, entity_type, ...` rows as hits (rows read as arrays: no object per row from SQLite). */
function hits(h: SqliteHandle, query: Fragment, limit: number): SearchHit[] {
  const raw = h.stmt(query.text).raw(true).all(query.params) as Array<[string, string]>;
  const out: SearchHit[] = [];
  for (let i = 0; i < raw.length && i < limit; i++) out.push({ urn: raw[i]![0], entityType: raw[i]![1] });
  return out;
}
