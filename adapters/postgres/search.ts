import type {
  AggregateRequest,
  FacetBucket,
  FacetResult,
  SearchCondition,
  SearchField,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchScope,
} from '../../src/adapter/types';
import type { PgHandle } from './database';
import type { PropertyKeys } from './property-keys';
import { textQuery } from './text';

/** Collects query parameters and hands out their placeholders. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

const lowerCase = (value: string): string => value.toLowerCase();

/**
 * The SQL test of one value column against the condition's values ("any of"). String columns only
 * match string values and number columns number values, as in the contract; `lower` is the column of
 * JavaScript-lower-cased values (NULL when equal to the value).
 */
function valueTest(
  p: Params,
  operator: SearchCondition['operator'],
  values: ReadonlyArray<string | number>,
  columns: { str: string; lower: string; num?: string },
): string {
  const strings = values.filter((v): v is string => typeof v === 'string');
  const numbers = values.filter((v): v is number => typeof v === 'number');
  const tests: string[] = [];
  // One value: a plain comparison with a scalar, which the planner estimates best; several: "any of".
  const compareStrings = (op: string): void => {
    if (strings.length === 1) tests.push(`${columns.str} ${op} ${p.add(strings[0], 'text')}`);
    else if (strings.length > 1) tests.push(`${columns.str} ${op} ANY(${p.add(strings, 'text[]')})`);
  };
  const compareNumbers = (op: string): void => {
    if (!columns.num || numbers.length === 0) return;
    // "Greater than any of" is "greater than the least of them", and so on.
    const bound = op === '=' ? undefined : op.startsWith('>') ? Math.min(...numbers) : Math.max(...numbers);
    if (bound !== undefined) tests.push(`${columns.num} ${op} ${p.add(bound, 'float8')}`);
    else if (numbers.length === 1) tests.push(`${columns.num} = ${p.add(numbers[0], 'float8')}`);
    else tests.push(`${columns.num} = ANY(${p.add(numbers, 'float8[]')})`);
  };
  const anyString = (predicate: (w: string) => string): void => {
    if (strings.length === 1) tests.push(predicate(p.add(strings[0], 'text')));
    else if (strings.length > 1) tests.push(`EXISTS (SELECT 1 FROM unnest(${p.add(strings, 'text[]')}) AS w(value) WHERE ${predicate('w.value')})`);
  };
  switch (operator) {
    case 'EQUAL':
    case 'IN':
      compareStrings('=');
      compareNumbers('=');
      break;
    case 'IEQUAL': {
      const lowered = [...new Set(strings.map(lowerCase))];
      const column = `COALESCE(${columns.lower}, ${columns.str})`;
      if (lowered.length === 1) tests.push(`${column} = ${p.add(lowered[0], 'text')}`);
      else if (lowered.length > 1) tests.push(`${column} = ANY(${p.add(lowered, 'text[]')})`);
      compareNumbers('=');
      break;
    }
    case 'CONTAIN':
      anyString((w) => `strpos(${columns.str}, ${w}) > 0`);
      break;
    case 'START_WITH':
      anyString((w) => `starts_with(${columns.str}, ${w})`);
      break;
    case 'END_WITH':
      anyString((w) => `right(${columns.str}, char_length(${w})) = ${w}`);
      break;
    case 'GREATER_THAN':
      compareStrings('>');
      compareNumbers('>');
      break;
    case 'GREATER_THAN_OR_EQUAL_TO':
      compareStrings('>=');
      compareNumbers('>=');
      break;
    case 'LESS_THAN':
      compareStrings('<');
      compareNumbers('<');
      break;
    case 'LESS_THAN_OR_EQUAL_TO':
      compareStrings('<=');
      compareNumbers('<=');
      break;
    case 'EXISTS':
      return 'TRUE';
  }
  if (tests.length === 0) return 'FALSE';
  return tests.length === 1 ? tests[0]! : `(${tests.join(' OR ')})`;
}

/** The entity ids whose document satisfies a condition (not negated), as a SELECT; FALSE when none can. */
function conditionIds(s: string, p: Params, keyOf: KeyOf, condition: SearchCondition, rowScope?: (alias: string) => string): string | 'FALSE' {
  const { field, operator, values } = condition;
  const scoped = (alias: string): string => (rowScope ? ` AND ${rowScope(alias)}` : '');
  // With a row scope (the count path), EXISTS reads each document's first row only: one per document.
  const firstOnly = (column: string): string => (rowScope && operator === 'EXISTS' ? ` AND ${column}` : '');
  switch (field.kind) {
    case 'entityType':
    case 'urn': {
      const column = field.kind === 'urn' ? 'urn' : 'entity_type';
      const test = valueTest(p, operator, values, { str: `x.${column}`, lower: `x.${column}_lower` });
      return test === 'FALSE' ? 'FALSE' : `SELECT x.entity_id FROM ${s}.search_docs x${test === 'TRUE' ? '' : ` WHERE ${test}`}`;
    }
    case 'field': {
      const test = valueTest(p, operator, values, { str: 'f.value', lower: 'f.value_lower' });
      return test === 'FALSE'
        ? 'FALSE'
        : `SELECT f.entity_id FROM ${s}.search_fields f WHERE f.field = ${p.add(field.name, 'text')}${test === 'TRUE' ? '' : ` AND ${test}`}${scoped('f')}${firstOnly('f.first_of_field')}`;
    }
    case 'property': {
      const keyId = keyOf(field.propertyUrn, field.definitionKey);
      if (keyId === undefined) return 'FALSE';
      const test = valueTest(p, operator, values, { str: 'v.str_value', lower: 'v.str_lower', num: 'v.num_value' });
      return test === 'FALSE'
        ? 'FALSE'
        : `SELECT v.entity_id FROM ${s}.property_values v WHERE v.key_id = ${p.add(keyId, 'integer')}${test === 'TRUE' ? '' : ` AND ${test}`}${scoped('v')}${firstOnly('v.first_of_key')}`;
    }
  }
}

/** One condition over the search document `d`: on its own columns, or membership in the ids that match. */
function conditionSql(s: string, p: Params, keyOf: KeyOf, condition: SearchCondition): string {
  const { field, operator, values } = condition;
  let matched: string;
  if (field.kind === 'entityType' || field.kind === 'urn') {
    const column = field.kind === 'urn' ? 'urn' : 'entity_type';
    matched = valueTest(p, operator, values, { str: `d.${column}`, lower: `d.${column}_lower` });
  } else {
    const ids = conditionIds(s, p, keyOf, condition);
    matched = ids === 'FALSE' ? 'FALSE' : `d.entity_id IN (${ids})`;
  }
  return condition.negated ? `NOT ${wrap(matched)}` : matched;
}

/**
 * Several groups (an OR): the matching ids as one set, a UNION over the groups, so the server builds
 * each group's ids once instead of testing every document against every group.
 */
function filterIds(s: string, p: Params, keyOf: KeyOf, filter: SearchCondition[][]): string | 'FALSE' {
  const groups: string[] = [];
  for (const group of filter) {
    // A group with a condition that cannot match is left out; that is decided on scratch parameters
    // first, so that no parameter is left unused in the statement.
    if (group.some((c) => !c.negated && conditionIds(s, new Params(), keyOf, c) === 'FALSE')) continue;
    const positive: string[] = [];
    const negative: string[] = [];
    for (const condition of group) {
      const ids = conditionIds(s, p, keyOf, condition);
      if (ids === 'FALSE') continue; // only a negated one can be FALSE here: NOT FALSE constrains nothing
      (condition.negated ? negative : positive).push(ids);
    }
    // The first condition's ids, semi-joined with the others' (so a multi-valued field cannot multiply
    // rows), less the negated ones' (NOT IN: each hashed once).
    const from = positive.length > 0 ? `(${positive[0]}) c0` : `${s}.search_docs c0`;
    const where = [...positive.slice(1).map((q) => `c0.entity_id IN (${q})`), ...negative.map((q) => `c0.entity_id NOT IN (${q})`)].join(' AND ');
    groups.push(`SELECT c0.entity_id FROM ${from}${where ? ` WHERE ${where}` : ''}`);
  }
  return groups.length === 0 ? 'FALSE' : groups.join(' UNION ');
}

function wrap(sql: string): string {
  return /^[A-Z]+$/.test(sql) || sql.startsWith('(') ? sql : `(${sql})`;
}

/** The dictionary id of a (property, definition key) pair; undefined when no value was ever written under it. */
type KeyOf = (property: string, definitionKey: string) => number | undefined;

interface Scope {
  /** `search_docs d`, joined with `search_text t` when there is a full-text query. */
  from: string;
  where: string;
  /** The tsquery placeholder when the scope has a full-text query. */
  tsquery?: string;
}

/** FROM and WHERE over `search_docs d` for a scope: type, removed, full text, then the OR of ANDs. */
function scopeSql(s: string, p: Params, keyOf: KeyOf, scope: SearchScope): Scope {
  const parts: string[] = [];
  let from = `${s}.search_docs d`;
  if (!scope.includeRemoved) parts.push('NOT d.removed');
  const types = [...new Set(scope.entityTypes)];
  if (types.length === 1) parts.push(`d.entity_type = ${p.add(types[0], 'text')}`);
  else if (types.length > 1) parts.push(`d.entity_type = ANY(${p.add(types, 'text[]')})`);
  let tsquery: string | undefined;
  const text = textQuery(scope.text);
  if (text !== undefined) {
    if (text === null) parts.push('FALSE');
    else {
      tsquery = p.add(text, 'tsquery');
      from = `${s}.search_docs d JOIN ${s}.search_text t ON t.entity_id = d.entity_id`;
      parts.push(`t.tsv @@ ${tsquery}`);
    }
  }
  // An empty group matches everything, and so does a filter that has one.
  if (scope.filter.length > 0 && !scope.filter.some((group) => group.length === 0)) {
    if (scope.filter.length === 1) {
      parts.push(scope.filter[0]!.map((c) => conditionSql(s, p, keyOf, c)).join(' AND '));
    } else {
      const ids = filterIds(s, p, keyOf, scope.filter);
      parts.push(ids === 'FALSE' ? 'FALSE' : `d.entity_id IN (${ids})`);
    }
  }
  return { from, where: parts.length > 0 ? parts.join(' AND ') : 'TRUE', ...(tsquery ? { tsquery } : {}) };
}

/** The (property, definition key) pairs a request names, resolved to dictionary ids. */
function propertyPairs(scope: SearchScope, facets: readonly SearchField[] = []): Array<{ property: string; definitionKey: string }> {
  const fields = [...scope.filter.flat().map((c) => c.field), ...facets];
  return fields.flatMap((f) => (f.kind === 'property' ? [{ property: f.propertyUrn, definitionKey: f.definitionKey }] : []));
}

/**
 * One statement, one round trip: the count of the whole scope and the page, as two sub-selects over
 * the same WHERE clause, so the server plans each on its own (the page can stop after `limit` rows of
 * the URN index; the count scans what it must).
 */
export async function search(h: PgHandle, keys: PropertyKeys, request: SearchRequest): Promise<SearchResponse> {
  const keyOf = await keys.lookup(propertyPairs(request));
  const p = new Params();
  const scope = scopeSql(h.s, p, keyOf, request);
  const ranked = request.order === 'relevance' && scope.tsquery !== undefined;
  const pageWhere = [scope.where];
  if (request.order === 'urn' && request.afterUrn !== undefined) pageWhere.push(`d.urn > ${p.add(request.afterUrn, 'text')}`);
  const score = ranked ? `ts_rank(t.tsv, ${scope.tsquery})::float8` : 'NULL::float8';
  const order = ranked ? 'score DESC, d.urn' : 'd.urn';
  const limit = p.add(request.limit, 'bigint');
  const offset = p.add(request.offset ?? 0, 'bigint');
  const total = countFromValues(h.s, p, keyOf, request) ?? `SELECT count(*) FROM ${scope.from} WHERE ${scope.where}`;
  const [row] = await h.queryPlannedEachTime<{ total: string; hits: Array<[string, string, number | null]> | null }>(
    `SELECT
       (${total}) AS total,
       (SELECT json_agg(json_build_array(x.urn, x.entity_type, x.score) ORDER BY ${ranked ? 'x.score DESC, x.urn' : 'x.urn'})
        FROM (SELECT d.urn, d.entity_type, ${score} AS score FROM ${scope.from} WHERE ${pageWhere.join(' AND ')}
              ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) x) AS hits`,
    p.values,
  );
  const hits: SearchHit[] = (row?.hits ?? []).map(([urn, entityType, s]) => ({ urn, entityType, ...(ranked && s !== null ? { score: s } : {}) }));
  return { total: Number(row?.total ?? 0), hits };
}

/** Types and removed flag tested on a value row itself (`search_fields` and `property_values` carry them). */
function rowScopeOf(p: Params, scope: SearchScope): (alias: string) => string {
  const types = [...new Set(scope.entityTypes)];
  let typeParam: string | undefined;
  // The parameter is added on first use only: an unused parameter has no type the server can infer.
  const typesParam = (): string => (typeParam ??= types.length === 1 ? p.add(types[0], 'text') : p.add(types, 'text[]'));
  return (alias) =>
    [
      ...(scope.includeRemoved ? [] : [`NOT ${alias}.removed`]),
      ...(types.length === 0 ? [] : [types.length === 1 ? `${alias}.entity_type = ${typesParam()}` : `${alias}.entity_type = ANY(${typesParam()})`]),
    ].join(' AND ') || 'TRUE';
}

/**
 * The count of a scope without full text whose filter is one group of conditions on fields and
 * properties only (the common case), from the value tables alone: the first condition's rows, tested
 * for type and removed on the rows themselves, semi-joined with the others'. A single-valued EQUAL has
 * one row per document (the writer stores each value once per document), and EXISTS reads only each
 * document's first row, so their rows are counted as they are; otherwise the documents are counted
 * distinct. Undefined when the scope needs `search_docs`.
 */
function countFromValues(s: string, p: Params, keyOf: KeyOf, scope: SearchScope): string | undefined {
  if (textQuery(scope.text) !== undefined || scope.filter.length !== 1) return undefined;
  const group = scope.filter[0]!;
  if (group.length === 0 || group.some((c) => c.negated || c.field.kind === 'urn' || c.field.kind === 'entityType')) return undefined;
  // Decided on scratch parameters, so that no parameter is left unused when this path is not taken.
  if (group.some((c) => conditionIds(s, new Params(), keyOf, c) === 'FALSE')) return undefined;
  const onePerDocument = (c: SearchCondition): boolean => ((c.operator === 'EQUAL' || c.operator === 'IN') && c.values.length === 1) || c.operator === 'EXISTS';
  const driver = group.find(onePerDocument) ?? group[0]!;
  const rowScope = rowScopeOf(p, scope);
  const first = conditionIds(s, p, keyOf, driver, rowScope) as string;
  const others = group.filter((c) => c !== driver).map((c) => `c0.entity_id IN (${conditionIds(s, p, keyOf, c) as string})`);
  const rows = `SELECT c0.entity_id FROM (${first}) c0${others.length > 0 ? ` WHERE ${others.join(' AND ')}` : ''}`;
  return onePerDocument(driver) ? `SELECT count(*) FROM (${rows}) r` : `SELECT count(*) FROM (SELECT DISTINCT r.entity_id FROM (${rows}) r) u`;
}

/** Facet buckets by GROUP BY over the scope, one sub-select per facet, in one statement. */
export async function aggregate(h: PgHandle, keys: PropertyKeys, request: AggregateRequest): Promise<FacetResult[]> {
  if (request.facets.length === 0) return [];
  const keyOf = await keys.lookup(propertyPairs(request, request.facets));
  const p = new Params();
  const max = p.add(request.maxValues, 'bigint');
  const filtered = textQuery(request.text) !== undefined || (request.filter.length > 0 && !request.filter.some((group) => group.length === 0));
  let sql: string;
  if (!filtered) {
    // The scope is a set of types (and removed or not): each facet reads its own table alone, with
    // the type and removed flag the value rows carry.
    const scopeOf = rowScopeOf(p, request);
    sql = request.facets.map((field, i) => `(SELECT ${i} AS facet, b.str, b.num, b.n FROM (${facetSql(h.s, p, keyOf, field, max, scopeOf)}) b)`).join('\nUNION ALL\n');
  } else {
    const scope = scopeSql(h.s, p, keyOf, request);
    // One facet: the scope inline, so the planner can join it the best way; several: computed once.
    const materialized = request.facets.length > 1 ? 'MATERIALIZED' : 'NOT MATERIALIZED';
    // Only the columns the facets read: a narrower scope is cheaper to materialize and to hash.
    const columns = ['d.entity_id', ...(request.facets.some((f) => f.kind === 'urn') ? ['d.urn'] : []), ...(request.facets.some((f) => f.kind === 'entityType') ? ['d.entity_type'] : [])];
    const selects = request.facets.map((field, i) => `(SELECT ${i} AS facet, b.str, b.num, b.n FROM (${facetSql(h.s, p, keyOf, field, max)}) b)`);
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
function facetSql(s: string, p: Params, keyOf: KeyOf, field: SearchField, max: string, typesOnly?: (alias: string) => string): string {
  // With `typesOnly`, the scope is tested on the rows themselves; otherwise they join the `scope` CTE.
  const scoped = (alias: string): { join: string; where: string } =>
    typesOnly ? { join: '', where: ` AND ${typesOnly(alias)}` } : { join: ` JOIN scope sc ON sc.entity_id = ${alias}.entity_id`, where: '' };
  switch (field.kind) {
    case 'entityType':
    case 'urn': {
      const column = field.kind === 'urn' ? 'urn' : 'entity_type';
      const from = typesOnly ? `${s}.search_docs sc WHERE ${typesOnly('sc')}` : 'scope sc';
      return `SELECT sc.${column} AS str, NULL::float8 AS num, count(*) AS n FROM ${from} GROUP BY sc.${column} ORDER BY n DESC, sc.${column} LIMIT ${max}`;
    }
    case 'field': {
      // The writer stores each value once per field and document: count(*) counts documents.
      const { join, where } = scoped('f');
      return `SELECT f.value AS str, NULL::float8 AS num, count(*) AS n
        FROM ${s}.search_fields f${join}
        WHERE f.field = ${p.add(field.name, 'text')}${where}
        GROUP BY f.value ORDER BY n DESC, f.value LIMIT ${max}`;
    }
    case 'property': {
      const keyId = keyOf(field.propertyUrn, field.definitionKey);
      // No value was ever written under this key. (`max` is still referenced: every parameter must be.)
      if (keyId === undefined) return `SELECT NULL::text AS str, NULL::float8 AS num, 0::bigint AS n WHERE FALSE LIMIT ${max}`;
      // The writer stores each value once per key and document: count(*) counts documents.
      const { join, where } = scoped('v');
      return `SELECT v.str_value AS str, v.num_value AS num, count(*) AS n
        FROM ${s}.property_values v${join}
        WHERE v.key_id = ${p.add(keyId, 'integer')}${where}
        GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT ${max}`;
    }
  }
}
