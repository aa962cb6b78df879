import type { FilterOperator, SearchCondition, SearchField, SearchScope } from '../../src/adapter/types';
import { parseTextQuery } from '../../src/adapter/text-analysis';
import { docScope, fragment, join, oneRowPerEntity, oneType, sql, valuePredicate, valueScope, type Fragment } from './search-sql';
import { findKeyId, keyStats, type KeyStats, type Snapshot } from './search-store';
import type { SqliteHandle } from './statements';

/**
 * Planning of the SQLite search: conditions resolved to keys, the driving condition of each group
 * chosen by estimated size, and the SQL of counts, matching sets and probes.
 */

/** A condition with its key resolved: a test on search_values, on the document row, or full text. */
export type Resolved =
  | {
      kind: 'values';
      keyId: number;
      /** Documents with values under the key, and whether none has several. */
      entities: number;
      single: boolean;
      /** Every document with values under the key has a type the scope asks for (no type test needed). */
      typeImplied: boolean;
      /** The key keeps per-value document counts (value-counts.ts). */
      valueCounts: boolean;
      operator: FilterOperator;
      values: Array<string | number>;
      negated: boolean;
    }
  | { kind: 'doc'; column: 'entity_type' | 'urn'; operator: FilterOperator; values: Array<string | number>; negated: boolean }
  | { kind: 'text'; match: string };

/** What a request matches: nothing, everything in scope, or OR of ANDs of resolved conditions. */
export type Plan = { kind: 'nothing' } | { kind: 'scope' } | { kind: 'groups'; groups: Resolved[][]; match: string | undefined };

/** The entity-id query of one group, driven by its most selective condition. */
export interface GroupQuery {
  /** `FROM ... WHERE ...` without the select list. */
  body: Fragment;
  /** The tables of `body` (driver first) and its conditions. */
  from: Fragment;
  where: Fragment;
  /** Whether `from` joins the entities row as `d`. */
  joinsDoc: boolean;
  entity: string;
  /** With a search_values driver: the test that keeps one row per entity, if there is one. */
  unique: Fragment | undefined;
  driven: boolean;
  /** At most this many entities match, when planning found out (counting the driver's rows). */
  atMost?: number;
}

function groupQueryOf(from: Fragment, where: Fragment, rest: Omit<GroupQuery, 'body' | 'from' | 'where'>): GroupQuery {
  return { body: sql`FROM ${from} WHERE ${where}`, from, where, ...rest };
}

/** The primary-key b-tree of search_values (a WITHOUT ROWID table): (key_id, entity_id, value). */
const PRIMARY_KEY = 'sqlite_autoindex_search_values_1';
/** Estimates of a condition's size stop counting here. */
const ESTIMATE_CAP = 1_000;
/**
 * A driver this small is kept without estimating the other candidates: the whole query then reads
 * a few hundred rows, less than one more estimate statement costs to prepare, run and read.
 */
export const SMALL_DRIVER = 256;

/** The id of a field's or property's key; undefined when nothing was ever written under it. */
export function keyOf(h: SqliteHandle, field: Extract<SearchField, { kind: 'field' | 'property' }>): number | undefined {
  return field.kind === 'field' ? findKeyId(h, 'field', field.name, '') : findKeyId(h, 'property', field.propertyUrn, field.definitionKey);
}

/**
 * What the scope matches: its text query as an FTS5 expression and its groups with keys resolved.
 * `snapshot`: the read transaction's (key statistics cached while the database version holds).
 */
export function resolve(h: SqliteHandle, scope: SearchScope, snapshot: Snapshot): Plan {
  const terms = parseTextQuery(scope.text);
  if (terms !== undefined && terms.length === 0) return { kind: 'nothing' };
  const match = terms?.map((t) => `"${t.term.replace(/"/g, '""')}"${t.prefix ? '*' : ''}`).join(' AND ');
  const groups: Resolved[][] = [];
  for (const group of scope.filter.length === 0 ? [[]] : scope.filter) {
    const resolved = resolveGroup(h, group, scope, snapshot);
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
function resolveGroup(h: SqliteHandle, group: readonly SearchCondition[], scope: SearchScope, snapshot: Snapshot): Resolved[] | undefined {
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
    const stats = keyStats(h, keyId, snapshot);
    out.push({
      kind: 'values',
      keyId,
      entities: stats.entities,
      single: stats.multi === 0,
      typeImplied: typeImplied(stats, scope),
      valueCounts: stats.valueCounts !== null,
      operator,
      values,
      negated,
    });
  }
  return out;
}

/** Whether every document under a key (per its statistics) has one of the scope's entity types (any, when it names none). */
export function typeImplied(stats: KeyStats, scope: SearchScope): boolean {
  return (
    scope.entityTypes.length === 0 ||
    stats.entityType === null ||
    (stats.entityType !== '*' && scope.entityTypes.includes(stats.entityType))
  );
}

/** One condition as a test of the entity `entity` (with the entities row as `doc`, when joined). */
export function probe(c: Resolved, entity: string, doc: string): Fragment {
  let test: Fragment;
  if (c.kind === 'text') return fragment(`${entity} IN (SELECT rowid FROM search_text WHERE search_text MATCH ?)`, c.match);
  if (c.kind === 'doc') {
    test = valuePredicate(`${doc}.${c.column}`, c.operator, c.values);
  } else {
    test = sql`EXISTS (SELECT 1 FROM search_values w WHERE w.key_id = ${fragment('?', c.keyId)} AND w.entity_id = ${fragment(entity)}
      AND ${valuePredicate('w.value', c.operator, c.values)})`;
  }
  return c.negated ? sql`NOT (${test})` : test;
}

export function andOf(parts: readonly Fragment[]): Fragment {
  return parts.length === 0 ? fragment('1') : sql`(${join(parts, ' AND ')})`;
}

/** Every group as tests of the entities row `d`, ORed. */
export function orOfProbes(groups: readonly Resolved[][]): Fragment {
  return join(
    groups.map((group) => andOf(group.map((c) => probe(c, 'd.entity_id', 'd')))),
    ' OR ',
  );
}

/**
 * Size of a positive condition. EXISTS reads its key's document count; a condition its key's per-value
 * counts answer sums them (exact up to `limit`). Others step over the rows: at
 * most SMALL_DRIVER of them is all the caller needs to know (it stops there); otherwise they are
 * counted up to `limit`, and past it half of the key's documents is the guess. `bound`: the size is
 * at least the number of entities the condition matches. Stepping with OFFSET costs a third of
 * counting in a subquery (`COUNT(*) FROM (... LIMIT n)`).
 */
function estimate(h: SqliteHandle, c: Resolved, scope: SearchScope, limit: number): { size: number; bound: boolean } {
  if (c.kind === 'text') {
    const counted = count(
      h,
      sql`SELECT COUNT(*) AS n FROM (SELECT 1 FROM search_text WHERE search_text MATCH ${fragment('?', c.match)} LIMIT ${fragment('?', limit)})`,
    );
    return { size: counted, bound: counted < limit };
  }
  if (c.kind !== 'values' || c.negated) return { size: Number.POSITIVE_INFINITY, bound: false };
  if (c.operator === 'EXISTS') return { size: c.entities, bound: true };
  const summed = countFromValueCounts(c, scope);
  if (summed) {
    // Past `limit`, the same guess as below: a large range driver reads its key's rows, not its matches.
    const n = count(h, summed);
    return n <= limit ? { size: n, bound: true } : { size: Math.max(limit, Math.floor(c.entities / 2)), bound: false };
  }
  const rows = sql`FROM search_values v WHERE v.key_id = ${fragment('?', c.keyId)} AND ${valueScope(h, 'v', scope, c.typeImplied)}
      AND ${valuePredicate('v.value', c.operator, c.values)}`;
  const moreThan = (n: number): boolean => {
    const q = sql`SELECT 1 ${rows} LIMIT 1 OFFSET ${fragment('?', n)}`;
    return h.stmt(q.text).get(q.params) !== undefined;
  };
  if (limit > SMALL_DRIVER && !moreThan(SMALL_DRIVER)) return { size: SMALL_DRIVER, bound: true };
  if (moreThan(limit)) return { size: Math.max(limit, Math.floor(c.entities / 2)), bound: false };
  return { size: count(h, sql`SELECT COUNT(*) AS n ${rows}`), bound: true };
}

/**
 * Picks the group's driver, its smallest positive value or text condition, and orders the other
 * tests most selective first (each probe then runs on fewer candidates).
 */
export function groupQuery(h: SqliteHandle, group: readonly Resolved[], scope: SearchScope): GroupQuery {
  // Likely-small first (one wanted value, then ranges, then the rest), so that the running best
  // bounds how far each later estimate counts.
  const guess = (c: Resolved): number =>
    c.kind !== 'values'
      ? 3
      : (c.operator === 'EQUAL' || c.operator === 'IN') && c.values.length === 1
        ? 0
        : c.operator === 'EXISTS'
          ? 2
          : 1;
  const candidates = group.filter((c) => c.kind === 'text' || (c.kind === 'values' && !c.negated)).sort((a, b) => guess(a) - guess(b));
  const sizes = new Map<Resolved, number>();
  /** Candidates whose size is an upper bound of the entities they match. */
  const bounds = new Set<Resolved>();
  let driver: Resolved | undefined = candidates[0];
  if (candidates.length > 1) {
    let best = Number.POSITIVE_INFINITY;
    for (const candidate of candidates) {
      if (best <= SMALL_DRIVER) break;
      const { size, bound } = estimate(h, candidate, scope, Math.min(best, ESTIMATE_CAP));
      sizes.set(candidate, size);
      if (bound) bounds.add(candidate);
      if (size < best) {
        best = size;
        driver = candidate;
      }
    }
  }
  const rank = (c: Resolved): number => sizes.get(c) ?? Number.POSITIVE_INFINITY;
  const others = group.filter((c) => c !== driver).sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) < rank(b) ? -1 : 1));
  if (driver?.kind === 'values') {
    // URN and entity type conditions read the entities row (value rows hold a type key, not the name).
    const joinsDoc = others.some((c) => c.kind === 'doc');
    // With probes to run, read the driver in entity order (the primary key): each probe then lands
    // next to the previous one. One wanted value comes in entity order from the value index already.
    const probes = others.some((c) => c.kind !== 'doc');
    const oneValue = (driver.operator === 'EQUAL' || driver.operator === 'IN') && new Set(driver.values).size === 1;
    const table = probes && !oneValue ? `search_values v INDEXED BY ${PRIMARY_KEY}` : 'search_values v';
    const from = fragment(joinsDoc ? `${table} CROSS JOIN entities d ON d.entity_id = v.entity_id` : table);
    const tests = others.map((c) => probe(c, 'v.entity_id', 'd'));
    const where = sql`v.key_id = ${fragment('?', driver.keyId)} AND ${valueScope(h, 'v', scope, driver.typeImplied)}
        AND ${valuePredicate('v.value', driver.operator, driver.values)} AND ${andOf(tests)}`;
    // A key no document has several values under needs no de-duplication at all.
    const unique = driver.single ? fragment('1') : oneRowPerEntity('v', driver.operator, driver.values);
    const atMost = bounds.has(driver) ? sizes.get(driver) : undefined;
    return groupQueryOf(from, where, {
      joinsDoc,
      entity: 'v.entity_id',
      unique,
      driven: true,
      ...(atMost !== undefined ? { atMost } : {}),
    });
  }
  if (driver?.kind === 'text') {
    const from = fragment('search_text CROSS JOIN entities d ON d.entity_id = search_text.rowid');
    const where = sql`search_text MATCH ${fragment('?', driver.match)} AND ${docScope(scope)} AND ${andOf(others.map((c) => probe(c, 'd.entity_id', 'd')))}`;
    return groupQueryOf(from, where, { joinsDoc: true, entity: 'd.entity_id', unique: fragment('1'), driven: true });
  }
  const from = sql`entities d ${scopeIndex(scope, true)}`;
  const where = sql`${docScope(scope)} AND ${andOf(group.map((c) => probe(c, 'd.entity_id', 'd')))}`;
  return groupQueryOf(from, where, { joinsDoc: true, entity: 'd.entity_id', unique: fragment('1'), driven: false });
}

/** The count of a plan's matches as `n`; `also` adds columns to the same row (one statement fewer). */
export function countQuery(
  queries: readonly GroupQuery[],
  groups: readonly Resolved[][],
  scope: SearchScope,
  also = fragment(''),
): Fragment {
  if (queries.length === 1) {
    const q = queries[0]!;
    return q.unique
      ? sql`SELECT COUNT(*) AS n ${also} ${q.body} AND ${q.unique}`
      : sql`SELECT COUNT(DISTINCT ${fragment(q.entity)}) AS n ${also} ${q.body}`;
  }
  if (queries.every((q) => q.driven)) {
    return sql`SELECT COUNT(*) AS n ${also} FROM (${join(
      queries.map((q) => sql`SELECT ${fragment(q.entity)} ${q.body}`),
      ' UNION ',
    )})`;
  }
  // Some group has nothing to start from (only negations or URN tests): one pass over the scope.
  return sql`SELECT COUNT(*) AS n ${also} FROM entities d ${scopeIndex(scope, true)} WHERE ${docScope(scope)} AND (${orOfProbes(groups)})`;
}

/** A query of the matching entity ids (duplicates possible). */
export function matchingSet(queries: readonly GroupQuery[], groups: readonly Resolved[][], scope: SearchScope): Fragment {
  if (queries.every((q) => q.driven))
    return join(
      queries.map((q) => sql`SELECT ${fragment(q.entity)} ${q.body}`),
      ' UNION ALL ',
    );
  return sql`SELECT d.entity_id FROM entities d WHERE ${docScope(scope)} AND (${orOfProbes(groups)})`;
}

/**
 * Which entities index to read in URN order (`ordered`) or for a count: one entity type without
 * removed documents is a contiguous, URN-ordered range of the scope index; anything else walks URNs.
 */
export function scopeIndex(scope: SearchScope, forCount: boolean): Fragment {
  if (!scope.includeRemoved && (oneType(scope.entityTypes) !== undefined || forCount)) return fragment('INDEXED BY entities_by_scope');
  return fragment('INDEXED BY entities_by_urn');
}

/**
 * The count of a positive value condition (not EXISTS) as `n`, from its key's per-value counts: the
 * sum over the values it matches. Exact when the counts are kept, every document under the key has
 * a type of the scope, and no document can match twice (one value per document, or one wanted
 * value: a document holds a value once). Otherwise undefined: the rows are counted.
 */
export function countFromValueCounts(c: Resolved, scope: SearchScope, also = fragment('')): Fragment | undefined {
  if (c.kind !== 'values' || c.negated || c.operator === 'EXISTS' || !c.valueCounts || !c.typeImplied) return undefined;
  const oneValue = (c.operator === 'EQUAL' || c.operator === 'IN') && new Set(c.values).size === 1;
  if (!c.single && !oneValue) return undefined;
  const counted = fragment(scope.includeRemoved ? 'c.live + c.removed' : 'c.live');
  return sql`SELECT COALESCE(SUM(${counted}), 0) AS n ${also} FROM search_value_counts c
    WHERE c.key_id = ${fragment('?', c.keyId)} AND ${valuePredicate('c.value', c.operator, c.values)}`;
}

/** Runs a `SELECT COUNT(*) AS n` statement. */
export function count(h: SqliteHandle, query: Fragment): number {
  return (h.stmt(query.text).get(query.params) as { n: number }).n;
}
