import type {
  AggregateRequest,
  FacetResult,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchScope,
  SeveralValuesRequest,
  SeveralValuesResponse,
} from '../../src/adapter/types';
import {
  andOf,
  count,
  countFromValueCounts,
  countQuery,
  groupQuery,
  keyOf,
  matchingSet,
  orOfProbes,
  probe,
  resolve,
  scopeIndex,
  SMALL_DRIVER,
  typeImplied,
  type GroupQuery,
  type Resolved,
} from './search-plan';
import { docScope, fragment, join, oneType, sql, valueScope, type Fragment } from './search-sql';
import { findEntitiesWithSeveralPropertyValues as severalUnderKey } from './property-value-counts';
import { findKeyId, keyStats, snapshotOf, type Snapshot } from './search-store';
import { flushSearchText } from './search-text-queue';
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
  return offset > 0 ? fragment(`LIMIT ${limitBucket(limit)} OFFSET ?`, offset) : fragment(`LIMIT ${limitBucket(limit)}`);
}

/**
 * What a page selects: the URN, and the entity type unless the scope names exactly one (then it is
 * known without reading it). A narrower sort record makes the sort of a selective page cheaper.
 */
interface PageColumns {
  select: Fragment;
  /** The one entity type of the scope, when the page does not select it. */
  entityType: string | undefined;
}

function pageColumns(request: SearchRequest): PageColumns {
  const only = oneType(request.entityTypes);
  return only !== undefined
    ? { select: fragment('d.urn AS urn'), entityType: only }
    : { select: fragment('d.urn AS urn, d.entity_type AS entityType'), entityType: undefined };
}

/** bm25() column weights (name, description, URN key); the memory adapter boosts the same way. */
const BM25 = 'bm25(search_text, 10.0, 1.0, 1.0)';

/**
 * Answers a search. Everything it reads (key statistics, the count, the page) is read in one
 * transaction, so that total and page agree even while other processes write. Key statistics read
 * by an earlier search are reused while the database version has not moved (see snapshotOf).
 */
export function search(h: SqliteHandle, request: SearchRequest): SearchResponse {
  if (request.text !== undefined) flushSearchText(h);
  return searchRead(h, request);
}

/**
 * `search` without moving pending full text into FTS5 first: what a reader thread runs (its connection
 * does not write), the host having moved it before sending the request (read-pool.ts).
 */
export function searchRead(h: SqliteHandle, request: SearchRequest): SearchResponse {
  return readTransaction(h)(searchNow, h, request);
}

type Reader = <R, T>(read: (h: SqliteHandle, request: R) => T, h: SqliteHandle, request: R) => T;
const readers = new WeakMap<SqliteHandle, Reader>();

/**
 * One better-sqlite3 transaction function per connection, reused: making one per call (closures and
 * the BEGIN/COMMIT statements it looks up) cost about a tenth of a selective search.
 */
function readTransaction(h: SqliteHandle): Reader {
  let reader = readers.get(h);
  if (!reader) {
    reader = h.db.transaction((read, handle, request) => read(handle, request)) as unknown as Reader;
    readers.set(h, reader);
  }
  return reader;
}

/** The answer, with the version it was read under as its change token (see SearchResponse). */
function searchNow(h: SqliteHandle, request: SearchRequest): SearchResponse {
  const snapshot = snapshotOf(h);
  const response = answer(h, request, snapshot);
  response.changeToken = snapshot.version;
  return response;
}

function answer(h: SqliteHandle, request: SearchRequest, snapshot: Snapshot): SearchResponse {
  const plan = resolve(h, request, snapshot);
  const limit = Math.max(0, Math.floor(request.limit));
  const offset = Math.max(0, Math.floor(request.offset ?? 0));
  const afterUrn = request.order === 'urn' ? request.afterUrn : undefined;
  // `AND d.urn > ?` only when there is a previous page: the first page needs no bound.
  const after = afterUrn ? fragment('AND d.urn > ?', afterUrn) : fragment('');
  const columns = pageColumns(request);
  if (plan.kind === 'nothing') return { total: 0, hits: [] };
  if (plan.kind === 'scope') {
    const total = count(h, sql`SELECT COUNT(*) AS n FROM entities d ${scopeIndex(request, true)} WHERE ${docScope(request)}`);
    const page = sql`SELECT ${columns.select} FROM entities d ${scopeIndex(request, false)}
      WHERE ${docScope(request)} ${after} ORDER BY d.urn ${pageLimit(limit, offset)}`;
    return { total, hits: limit === 0 ? [] : hits(h, page, limit, columns) };
  }
  const queries = plan.groups.map((group) => groupQuery(h, group, request));
  const single = queries.length === 1 ? queries[0] : undefined;
  const ranked = request.order === 'relevance' && plan.match !== undefined;
  if (!ranked && single?.driven && single.unique && single.atMost !== undefined && single.atMost <= SMALL_DRIVER) {
    return smallSet(h, single, single.unique, columns, afterUrn, offset, limit);
  }
  // The size of the document table comes with the count: the page strategy below needs both.
  const sizeColumn = fragment(', (SELECT MAX(entity_id) FROM entities) AS size');
  const counted = keyCount(h, plan.groups, request, sizeColumn) ?? one<Counted>(h, countQuery(queries, plan.groups, request, sizeColumn));
  const total = counted.n;
  if (total === 0 || limit === 0) return { total, hits: [] };

  if (request.order === 'relevance' && plan.match !== undefined) {
    const others = join(
      plan.groups.map((group) => andOf(group.filter((c) => c.kind !== 'text').map((c) => probe(c, 'd.entity_id', 'd')))),
      ' OR ',
    );
    const page = sql`SELECT d.urn AS urn, d.entity_type AS entityType, ${fragment(BM25)} AS rank
      FROM search_text JOIN entities d ON d.entity_id = search_text.rowid
      WHERE search_text MATCH ${fragment('?', plan.match)} AND ${docScope(request)} AND (${others})
      ORDER BY rank, d.urn ${pageLimit(limit, offset)}`;
    const ranked = rows<{ urn: string; entityType: string; rank: number }>(h, page).slice(0, limit);
    return { total, hits: ranked.map((r) => ({ urn: r.urn, entityType: r.entityType, score: -r.rank })) };
  }

  // URN order. Walking the URN index and testing each document costs about (offset + limit) × N / total
  // probes; evaluating the matching set and sorting it costs about `total`. Take the cheaper.
  const size = counted.size ?? 0;
  const walk = (offset + limit) * (size / total) * 4 < total;
  const tail = sql`ORDER BY d.urn ${pageLimit(limit, offset)}`;
  let page: Fragment;
  if (walk) {
    page = sql`SELECT ${columns.select} FROM entities d ${scopeIndex(request, false)}
      WHERE ${docScope(request)} ${after} AND (${orOfProbes(plan.groups)}) ${tail}`;
  } else {
    if (single?.driven && single.unique) {
      // The matches, joined to their documents in the driver's order, then sorted: one pass.
      page = sql`SELECT ${columns.select} FROM ${withDocs(single)}
        WHERE ${single.where} AND ${single.unique} ${after} ${tail}`;
    } else {
      page = sql`SELECT ${columns.select} FROM entities d
        WHERE d.entity_id IN (${matchingSet(queries, plan.groups, request)}) ${after} ${tail}`;
    }
  }
  return { total, hits: hits(h, page, limit, columns) };
}

interface Counted {
  n: number;
  size: number | null;
}

/**
 * The count of a lone value condition from its key's statistics, when they answer it. EXISTS: the
 * documents with a value under the key (kept exact by every commit, and read in this transaction)
 * less the removed ones among them, which the value index finds in one seek (`removed` is its
 * second column), when every document under the key has a type of the scope and one value (one row
 * per document). Other operators: the sum of the key's per-value counts over the values matched
 * (countFromValueCounts). Otherwise, and with full text, undefined: the rows are counted.
 */
function keyCount(h: SqliteHandle, groups: readonly Resolved[][], request: SearchRequest, also: Fragment): Counted | undefined {
  const c = groups.length === 1 && groups[0]!.length === 1 ? groups[0]![0]! : undefined;
  if (c?.kind === 'values' && c.operator !== 'EXISTS') {
    const summed = countFromValueCounts(c, request, also);
    return summed && one<Counted>(h, summed);
  }
  if (c?.kind !== 'values' || c.negated || !c.typeImplied || !c.single) return undefined;
  if (request.includeRemoved) return one<Counted>(h, sql`SELECT ${fragment(String(c.entities))} AS n ${also}`);
  const removed = one<Counted>(
    h,
    sql`SELECT COUNT(*) AS n ${also} FROM search_values v WHERE v.key_id = ${fragment('?', c.keyId)} AND v.removed = 1`,
  );
  return { n: c.entities - removed.n, size: removed.size };
}

/** A driven group's tables with its matches' entities rows joined as `d`, in the driver's order. */
function withDocs(single: GroupQuery): Fragment {
  return single.joinsDoc ? single.from : sql`${single.from} CROSS JOIN entities d ON d.entity_id = ${fragment(single.entity)}`;
}

/**
 * A group that planning found matches at most SMALL_DRIVER entities: every match, sorted, in one
 * statement, so that the probes run once (not once for the count and again for the page).
 */
function smallSet(
  h: SqliteHandle,
  single: GroupQuery,
  unique: Fragment,
  columns: PageColumns,
  afterUrn: string | undefined,
  offset: number,
  limit: number,
): SearchResponse {
  const query = sql`SELECT ${columns.select} FROM ${withDocs(single)} WHERE ${single.where} AND ${unique} ORDER BY d.urn`;
  const all = pageRows(h, query, columns);
  let start = 0;
  if (afterUrn) {
    // SQLite's order of text is the order of its UTF-8 bytes; compare the same way.
    const bound = Buffer.from(afterUrn, 'utf8');
    while (start < all.length && Buffer.compare(Buffer.from(urnOf(all[start]!), 'utf8'), bound) <= 0) start++;
  }
  return { total: all.length, hits: toHits(all.slice(start + offset, start + offset + limit), limit, columns) };
}

/**
 * Documents with several values under a key (see SearchIndex). Without a filter, from the key's
 * statistics (search-store.ts); with one, the filter's matching set is resolved as a search resolves
 * it and each member is probed for a second row under the key: the work grows with the filter's
 * matches, not with the key's documents. Count and page are read in one transaction.
 */
export function findEntitiesWithSeveralPropertyValues(h: SqliteHandle, request: SeveralValuesRequest): SeveralValuesResponse {
  if (!request.filter?.length) return severalUnderKey(h, request);
  return readTransaction(h)(severalMatching, h, request);
}

function severalMatching(h: SqliteHandle, request: SeveralValuesRequest): SeveralValuesResponse {
  const keyId = findKeyId(h, 'property', request.propertyUrn, request.definitionKey);
  if (keyId === undefined) return { total: 0, urns: [] };
  const scope: SearchScope = { entityTypes: [], filter: request.filter ?? [], includeRemoved: true };
  const plan = resolve(h, scope, snapshotOf(h));
  if (plan.kind === 'nothing') return { total: 0, urns: [] };
  if (plan.kind === 'scope') return severalUnderKey(h, { ...request, filter: undefined });
  const matching = matchingSet(
    plan.groups.map((group) => groupQuery(h, group, scope)),
    plan.groups,
    scope,
  );
  const secondRow = fragment(
    '(SELECT COUNT(*) FROM (SELECT 1 FROM search_values v WHERE v.key_id = ? AND v.entity_id = d.entity_id LIMIT 2)) = 2',
    keyId,
  );
  const total = count(h, sql`SELECT COUNT(*) AS n FROM entities d WHERE d.entity_id IN (${matching}) AND ${secondRow}`);
  if (total === 0 || request.limit <= 0) return { total, urns: [] };
  const page = sql`SELECT d.urn FROM entities d WHERE d.entity_id IN (${matching}) AND ${secondRow}
    AND d.urn > ${fragment('?', request.afterUrn ?? '')} ORDER BY d.urn ${fragment('LIMIT ?', request.limit)}`;
  return { total, urns: h.stmt(page.text).pluck(true).all(page.params) as string[] };
}

export function aggregate(h: SqliteHandle, request: AggregateRequest): FacetResult[] {
  if (request.text !== undefined) flushSearchText(h);
  return aggregateRead(h, request);
}

/** `aggregate` without moving pending full text first (see searchRead). */
export function aggregateRead(h: SqliteHandle, request: AggregateRequest): FacetResult[] {
  return readTransaction(h)(aggregateNow, h, request);
}

function aggregateNow(h: SqliteHandle, request: AggregateRequest): FacetResult[] {
  const snapshot = snapshotOf(h);
  const plan = resolve(h, request, snapshot);
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
          ? sql`SELECT d.entity_type AS value, COUNT(*) AS count FROM entities d WHERE ${docScope(request)} ${inSet}
              GROUP BY d.entity_type ORDER BY count DESC, value LIMIT ${limit}`
          : sql`SELECT d.urn AS value, 1 AS count FROM entities d WHERE ${docScope(request)} ${inSet} ORDER BY d.urn LIMIT ${limit}`;
    } else {
      const keyId = keyOf(h, field);
      if (keyId === undefined) return { field, buckets: [] };
      const implied = typeImplied(keyStats(h, keyId, snapshot), request);
      const inSet = set ? sql`AND v.entity_id IN (${set})` : fragment('');
      // (entity, key, value) is unique, so COUNT(*) per value counts entities.
      query = sql`SELECT v.value AS value, COUNT(*) AS count FROM search_values v
        WHERE v.key_id = ${fragment('?', keyId)} AND ${valueScope(h, 'v', request, implied)} ${inSet}
        GROUP BY v.value ORDER BY count DESC, v.value LIMIT ${limit}`;
    }
    const found = rows<{ value: string | number; count: number }>(h, query).slice(0, maxValues);
    return { field, buckets: found.map((r) => ({ value: r.value, count: r.count })) };
  });
}

function one<T>(h: SqliteHandle, query: Fragment): T {
  return h.stmt(query.text).get(query.params) as T;
}

function rows<T>(h: SqliteHandle, query: Fragment): T[] {
  return h.stmt(query.text).all(query.params) as T[];
}

/** A page row: the URN alone (plucked) when the scope names one entity type, else `[urn, entityType]`. */
type PageRow = string | [string, string];

const urnOf = (row: PageRow): string => (typeof row === 'string' ? row : row[0]);

/** Rows of a page query, read without an object (or, for one column, an array) per row. */
function pageRows(h: SqliteHandle, query: Fragment, columns: PageColumns): PageRow[] {
  const statement = h.stmt(query.text);
  return (columns.entityType !== undefined ? statement.pluck(true) : statement.raw(true)).all(query.params) as PageRow[];
}

/** A page of `SELECT urn[, entity_type]` rows as hits. */
function hits(h: SqliteHandle, query: Fragment, limit: number, columns: PageColumns): SearchHit[] {
  return toHits(pageRows(h, query, columns), limit, columns);
}

function toHits(rows: readonly PageRow[], limit: number, columns: PageColumns): SearchHit[] {
  const out: SearchHit[] = [];
  const known = columns.entityType;
  for (let i = 0; i < rows.length && i < limit; i++) {
    const row = rows[i]!;
    out.push(typeof row === 'string' ? { urn: row, entityType: known! } : { urn: row[0], entityType: known ?? row[1] });
  }
  return out;
}
