import type {
  AggregateRequest,
  FacetResult,
  FilterOperator,
  SearchCondition,
  SearchField,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchScope,
} from '../../src/adapter/types';
import { parseTextQuery } from '../../src/adapter/text-analysis';
import { docScope, fragment, join, oneRowPerEntity, sql, valuePredicate, valueScope, type Fragment } from './search-sql';
import { findKeyId, flushSearchText, keyStats } from './search-store';
import type { SqliteHandle } from './statements';

/** A condition with its key resolved: a test on search_values, on the document row, or full text. */
type Resolved =
  | {
      kind: 'values';
      keyId: number;
      /** Documents with values under the key, and whether none has several. */
      entities: number;
      single: boolean;
      operator: FilterOperator;
      values: Array<string | number>;
      negated: boolean;
    }
  | { kind: 'doc'; column: 'entity_type' | 'urn'; operator: FilterOperator; values: Array<string | number>; negated: boolean }
  | { kind: 'text'; match: string };

/** What a request matches: nothing, everything in scope, or OR of ANDs of resolved conditions. */
type Plan = { kind: 'nothing' } | { kind: 'scope' } | { kind: 'groups'; groups: Resolved[][]; match: string | undefined };

/** The entity-id query of one group, driven by its most selective condition. */
interface GroupQuery {
  /** `FROM ... WHERE ...` without the select list. */
  body: Fragment;
  /** The tables of `body` (driver first) and its conditions. */
  from: Fragment;
  where: Fragment;
  /** Whether `from` joins the search_docs row as `d`. */
  joinsDoc: boolean;
  entity: string;
  /** With a search_values driver: the test that keeps one row per entity, if there is one. */
  unique: Fragment | undefined;
  driven: boolean;
}

function groupQueryOf(from: Fragment, where: Fragment, rest: Omit<GroupQuery, 'body' | 'from' | 'where'>): GroupQuery {
  return { body: sql`FROM ${from} WHERE ${where}`, from, where, ...rest };
}

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
/** The primary-key b-tree of search_values (a WITHOUT ROWID table): (key_id, entity_id, value). */
const PRIMARY_KEY = 'sqlite_autoindex_search_values_1';
/** Estimates of a condition's size stop counting here. */
const ESTIMATE_CAP = 1_000;

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

// --- planning ------------------------------------------------------------------------------------

function keyOf(h: SqliteHandle, field: Extract<SearchField, { kind: 'field' | 'property' }>): number | undefined {
  return field.kind === 'field' ? findKeyId(h, 'field', field.name, '') : findKeyId(h, 'property', field.propertyUrn, field.definitionKey);
}

function resolve(h: SqliteHandle, scope: SearchScope): Plan {
  const terms = parseTextQuery(scope.text);
  if (terms !== undefined && terms.length === 0) return { kind: 'nothing' };
  const match = terms?.map((t) => `"${t.term.replace(/"/g, '""')}"${t.prefix ? '*' : ''}`).join(' AND ');
  const groups: Resolved[][] = [];
  for (const group of scope.filter.length === 0 ? [[]] : scope.filter) {
    const resolved = resolveGroup(h, group);
    if (resolved === undefined) continue;
    if (resolved.length === 0 && match === undefined) return { kind: 'scope' };
    groups.push(match === undefined ? resolved : [...resolved, { kind: 'text', match }]);
  }
  if (groups.length === 0) return { kind: 'nothing' };
  // A group that is only the text query makes every other group redundant.
  const textOnly = groups.find((g) => g.length === 1 && g[0]!.kind === 'text');
  return { kind: 'groups', groups: textOnly ? [textOnly] : groups, match };
}

/** The group's conditions; undefined when one of them can never match (the group is false). */
function resolveGroup(h: SqliteHandle, group: readonly SearchCondition[]): Resolved[] | undefined {
  const out: Resolved[] = [];
  for (const condition of group) {
    const { field, operator, negated } = condition;
    const values = [...condition.values];
    const matchesNothing = operator !== 'EXISTS' && values.length === 0;
    if (field.kind === 'entityType' || field.kind === 'urn') {
      if (matchesNothing) {
        if (negated) continue;
        return undefined;
      }
      out.push({ kind: 'doc', column: field.kind === 'urn' ? 'urn' : 'entity_type', operator, values, negated });
      continue;
    }
    const keyId = keyOf(h, field);
    if (keyId === undefined || matchesNothing) {
      // No document has a value under this key (or no value is wanted): false, or true when negated.
      if (negated) continue;
      return undefined;
    }
    const stats = keyStats(h, keyId);
    out.push({ kind: 'values', keyId, entities: stats.entities, single: stats.multi === 0, operator, values, negated });
  }
  return out;
}

/** One condition as a test of the entity `entity` (with the search_docs row as `doc`, when joined). */
function probe(c: Resolved, entity: string, doc: string | undefined, valueAlias?: string): Fragment {
  let test: Fragment;
  if (c.kind === 'text') return fragment(`${entity} IN (SELECT rowid FROM search_text WHERE search_text MATCH ?)`, c.match);
  if (c.kind === 'doc') {
    const column = c.column === 'entity_type' && valueAlias ? `${valueAlias}.entity_type` : `${doc}.${c.column}`;
    test = valuePredicate(column, c.operator, c.values);
  } else {
    test = sql`EXISTS (SELECT 1 FROM search_values w WHERE w.key_id = ${fragment('?', c.keyId)} AND w.entity_id = ${fragment(entity)}
      AND ${valuePredicate('w.value', c.operator, c.values)})`;
  }
  return c.negated ? sql`NOT (${test})` : test;
}

function andOf(parts: readonly Fragment[]): Fragment {
  return parts.length === 0 ? fragment('1') : sql`(${join(parts, ' AND ')})`;
}

/** Every group as tests of the search_docs row `d`, ORed. */
function orOfProbes(groups: readonly Resolved[][]): Fragment {
  return join(groups.map((group) => andOf(group.map((c) => probe(c, 'd.entity_id', 'd')))), ' OR ');
}

/**
 * Size of a positive condition: EXISTS reads its key's document count; others count up to `limit`
 * and, past it, guess half of the key's documents (nothing better is known without counting them).
 */
function estimate(h: SqliteHandle, c: Resolved, scope: SearchScope, limit: number): number {
  if (c.kind === 'text') {
    return count(h, sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM search_text WHERE search_text MATCH ${fragment('?', c.match)} LIMIT ${fragment('?', limit)})`);
  }
  if (c.kind !== 'values' || c.negated) return Number.POSITIVE_INFINITY;
  if (c.operator === 'EXISTS') return c.entities;
  const counted = count(
    h,
    sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM search_values v WHERE v.key_id = ${fragment('?', c.keyId)} AND ${valueScope('v', scope)}
      AND ${valuePredicate('v.value', c.operator, c.values)} LIMIT ${fragment('?', limit)})`,
  );
  return counted < limit ? counted : Math.max(limit, Math.floor(c.entities / 2));
}

/**
 * Picks the group's driver, its smallest positive value or text condition, and orders the other
 * tests most selective first (each probe then runs on fewer candidates).
 */
function groupQuery(h: SqliteHandle, group: readonly Resolved[], scope: SearchScope): GroupQuery {
  // Likely-small first (one wanted value, then ranges, then the rest), so that the running best
  // bounds how far each later estimate counts.
  const guess = (c: Resolved): number =>
    c.kind !== 'values' ? 3 : (c.operator === 'EQUAL' || c.operator === 'IN') && c.values.length === 1 ? 0 : c.operator === 'EXISTS' ? 2 : 1;
  const candidates = group.filter((c) => c.kind === 'text' || (c.kind === 'values' && !c.negated)).sort((a, b) => guess(a) - guess(b));
  const sizes = new Map<Resolved, number>();
  let driver: Resolved | undefined = candidates[0];
  if (candidates.length > 1) {
    let best = Number.POSITIVE_INFINITY;
    for (const candidate of candidates) {
      const size = estimate(h, candidate, scope, Math.min(best, ESTIMATE_CAP));
      sizes.set(candidate, size);
      if (size < best) {
        best = size;
        driver = candidate;
      }
    }
  }
  const rank = (c: Resolved): number => sizes.get(c) ?? Number.POSITIVE_INFINITY;
  const others = group.filter((c) => c !== driver).sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) < rank(b) ? -1 : 1));
  if (driver?.kind === 'values') {
    const joinsDoc = others.some((c) => c.kind === 'doc' && c.column === 'urn');
    // With probes to run, read the driver in entity order (the primary key): each probe then lands
    // next to the previous one. One wanted value comes in entity order from the value index already.
    const probes = others.some((c) => c.kind !== 'doc');
    const oneValue = (driver.operator === 'EQUAL' || driver.operator === 'IN') && new Set(driver.values).size === 1;
    const table = probes && !oneValue ? `search_values v INDEXED BY ${PRIMARY_KEY}` : 'search_values v';
    const from = fragment(joinsDoc ? `${table} CROSS JOIN search_docs d ON d.entity_id = v.entity_id` : table);
    const tests = others.map((c) => probe(c, 'v.entity_id', 'd', 'v'));
    const where = sql`v.key_id = ${fragment('?', driver.keyId)} AND ${valueScope('v', scope)}
        AND ${valuePredicate('v.value', driver.operator, driver.values)} AND ${andOf(tests)}`;
    // A key no document has several values under needs no de-duplication at all.
    const unique = driver.single ? fragment('1') : oneRowPerEntity('v', driver.operator, driver.values);
    return groupQueryOf(from, where, { joinsDoc, entity: 'v.entity_id', unique, driven: true });
  }
  if (driver?.kind === 'text') {
    const from = fragment('search_text CROSS JOIN search_docs d ON d.entity_id = search_text.rowid');
    const where = sql`search_text MATCH ${fragment('?', driver.match)} AND ${docScope(scope)} AND ${andOf(others.map((c) => probe(c, 'd.entity_id', 'd')))}`;
    return groupQueryOf(from, where, { joinsDoc: true, entity: 'd.entity_id', unique: fragment('1'), driven: true });
  }
  const from = sql`search_docs d ${scopeIndex(scope, true)}`;
  const where = sql`${docScope(scope)} AND ${andOf(group.map((c) => probe(c, 'd.entity_id', 'd')))}`;
  return groupQueryOf(from, where, { joinsDoc: true, entity: 'd.entity_id', unique: fragment('1'), driven: false });
}

function countQuery(queries: readonly GroupQuery[], groups: readonly Resolved[][], scope: SearchScope): Fragment {
  if (queries.length === 1) {
    const q = queries[0]!;
    return q.unique ? sql`SELECT COUNT(*) AS n ${q.body} AND ${q.unique}` : sql`SELECT COUNT(DISTINCT ${fragment(q.entity)}) AS n ${q.body}`;
  }
  if (queries.every((q) => q.driven)) {
    return sql`SELECT COUNT(*) AS n FROM (${join(queries.map((q) => sql`SELECT ${fragment(q.entity)} ${q.body}`), ' UNION ')})`;
  }
  // Some group has nothing to start from (only negations or URN tests): one pass over the scope.
  return sql`SELECT COUNT(*) AS n FROM search_docs d ${scopeIndex(scope, true)} WHERE ${docScope(scope)} AND (${orOfProbes(groups)})`;
}

/** A query of the matching entity ids (duplicates possible). */
function matchingSet(queries: readonly GroupQuery[], groups: readonly Resolved[][], scope: SearchScope): Fragment {
  if (queries.every((q) => q.driven)) return join(queries.map((q) => sql`SELECT ${fragment(q.entity)} ${q.body}`), ' UNION ALL ');
  return sql`SELECT d.entity_id FROM search_docs d WHERE ${docScope(scope)} AND (${orOfProbes(groups)})`;
}

/**
 * Which search_docs index to read in URN order (`ordered`) or for a count: one entity type without
 * removed documents is a contiguous, URN-ordered range of the scope index; anything else walks URNs.
 */
function scopeIndex(scope: SearchScope, forCount: boolean): Fragment {
  const oneType = new Set(scope.entityTypes).size === 1;
  if (!scope.includeRemoved && (oneType || forCount)) return fragment('INDEXED BY search_docs_by_scope');
  return fragment('INDEXED BY search_docs_by_urn');
}

function count(h: SqliteHandle, query: Fragment): number {
  return (h.stmt(query.text).get(query.params) as { n: number }).n;
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
