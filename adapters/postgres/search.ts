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
  const onStrings = (build: (param: string) => string): void => {
    if (strings.length > 0) tests.push(build(p.add(strings, 'text[]')));
  };
  const anyString = (predicate: (w: string) => string): void => {
    if (strings.length === 1) tests.push(predicate(p.add(strings[0], 'text')));
    else if (strings.length > 1) tests.push(`EXISTS (SELECT 1 FROM unnest(${p.add(strings, 'text[]')}) AS w(value) WHERE ${predicate('w.value')})`);
  };
  const onNumbers = (build: (param: string) => string): void => {
    if (numbers.length > 0 && columns.num) tests.push(build(p.add(numbers, 'float8[]')));
  };
  switch (operator) {
    case 'EQUAL':
    case 'IN':
      onStrings((w) => `${columns.str} = ANY(${w})`);
      onNumbers((w) => `${columns.num} = ANY(${w})`);
      break;
    case 'IEQUAL':
      if (strings.length > 0) tests.push(`COALESCE(${columns.lower}, ${columns.str}) = ANY(${p.add(strings.map(lowerCase), 'text[]')})`);
      onNumbers((w) => `${columns.num} = ANY(${w})`);
      break;
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
      onStrings((w) => `${columns.str} > ANY(${w})`);
      onNumbers((w) => `${columns.num} > ANY(${w})`);
      break;
    case 'GREATER_THAN_OR_EQUAL_TO':
      onStrings((w) => `${columns.str} >= ANY(${w})`);
      onNumbers((w) => `${columns.num} >= ANY(${w})`);
      break;
    case 'LESS_THAN':
      onStrings((w) => `${columns.str} < ANY(${w})`);
      onNumbers((w) => `${columns.num} < ANY(${w})`);
      break;
    case 'LESS_THAN_OR_EQUAL_TO':
      onStrings((w) => `${columns.str} <= ANY(${w})`);
      onNumbers((w) => `${columns.num} <= ANY(${w})`);
      break;
    case 'EXISTS':
      return 'TRUE';
  }
  if (tests.length === 0) return 'FALSE';
  return tests.length === 1 ? tests[0]! : `(${tests.join(' OR ')})`;
}

/** One condition over the search document `d`. */
function conditionSql(s: string, p: Params, condition: SearchCondition): string {
  const { field, operator, values } = condition;
  let matched: string;
  switch (field.kind) {
    case 'entityType':
      matched = valueTest(p, operator, values, { str: 'd.entity_type', lower: 'd.entity_type_lower' });
      break;
    case 'urn':
      matched = valueTest(p, operator, values, { str: 'd.urn', lower: 'd.urn_lower' });
      break;
    case 'field': {
      const test = valueTest(p, operator, values, { str: 'f.value', lower: 'f.value_lower' });
      matched =
        test === 'FALSE'
          ? 'FALSE'
          : `EXISTS (SELECT 1 FROM ${s}.search_fields f WHERE f.entity_id = d.entity_id AND f.field = ${p.add(field.name, 'text')}${test === 'TRUE' ? '' : ` AND ${test}`})`;
      break;
    }
    case 'property': {
      const test = valueTest(p, operator, values, { str: 'v.str_value', lower: 'v.str_lower', num: 'v.num_value' });
      matched =
        test === 'FALSE'
          ? 'FALSE'
          : `EXISTS (SELECT 1 FROM ${s}.property_values v WHERE v.entity_id = d.entity_id AND v.property = ${p.add(field.propertyUrn, 'text')} AND v.def_key = ${p.add(field.definitionKey, 'text')}${test === 'TRUE' ? '' : ` AND ${test}`})`;
      break;
    }
  }
  return condition.negated ? `NOT ${wrap(matched)}` : matched;
}

function wrap(sql: string): string {
  return /^[A-Z]+$/.test(sql) || sql.startsWith('EXISTS (') || sql.startsWith('(') ? sql : `(${sql})`;
}

interface Scope {
  where: string;
  /** The tsquery placeholder when the scope has a full-text query. */
  tsquery?: string;
}

/** The WHERE clause over `search_docs d` for a scope: type, removed, full text, then the OR of ANDs. */
function scopeSql(s: string, p: Params, scope: SearchScope): Scope {
  const parts: string[] = [];
  if (!scope.includeRemoved) parts.push('NOT d.removed');
  if (scope.entityTypes.length > 0) parts.push(`d.entity_type = ANY(${p.add([...new Set(scope.entityTypes)], 'text[]')})`);
  let tsquery: string | undefined;
  const text = textQuery(scope.text);
  if (text !== undefined) {
    if (text === null) parts.push('FALSE');
    else {
      tsquery = p.add(text, 'tsquery');
      parts.push(`d.tsv @@ ${tsquery}`);
    }
  }
  if (scope.filter.length > 0) {
    const groups = scope.filter.map((group) => (group.length === 0 ? 'TRUE' : group.map((c) => conditionSql(s, p, c)).join(' AND ')));
    parts.push(groups.length === 1 ? wrap(groups[0]!) : `(${groups.map((g) => `(${g})`).join(' OR ')})`);
  }
  return { where: parts.length > 0 ? parts.join(' AND ') : 'TRUE', ...(tsquery ? { tsquery } : {}) };
}

/**
 * One statement, one round trip: the count of the whole scope and the page, as two sub-selects over
 * the same WHERE clause, so the server plans each on its own (the page can stop after `limit` rows of
 * the URN index; the count scans what it must).
 */
export async function search(h: PgHandle, request: SearchRequest): Promise<SearchResponse> {
  const p = new Params();
  const scope = scopeSql(h.s, p, request);
  const ranked = request.order === 'relevance' && scope.tsquery !== undefined;
  const pageWhere = [scope.where];
  if (request.order === 'urn' && request.afterUrn !== undefined) pageWhere.push(`d.urn > ${p.add(request.afterUrn, 'text')}`);
  const score = ranked ? `ts_rank(d.tsv, ${scope.tsquery})` : 'NULL::real';
  const order = ranked ? 'score DESC, d.urn' : 'd.urn';
  const limit = p.add(request.limit, 'bigint');
  const offset = p.add(request.offset ?? 0, 'bigint');
  const [row] = await h.query<{ total: string; hits: Array<[string, string, number | null]> | null }>(
    `SELECT
       (SELECT count(*) FROM ${h.s}.search_docs d WHERE ${scope.where}) AS total,
       (SELECT json_agg(json_build_array(x.urn, x.entity_type, x.score) ORDER BY ${ranked ? 'x.score DESC, x.urn' : 'x.urn'})
        FROM (SELECT d.urn, d.entity_type, ${score} AS score FROM ${h.s}.search_docs d WHERE ${pageWhere.join(' AND ')}
              ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}) x) AS hits`,
    p.values,
  );
  const hits: SearchHit[] = (row?.hits ?? []).map(([urn, entityType, s]) => ({ urn, entityType, ...(ranked && s !== null ? { score: s } : {}) }));
  return { total: Number(row?.total ?? 0), hits };
}

/** Facet buckets by GROUP BY over the scope, one sub-select per facet, in one statement. */
export async function aggregate(h: PgHandle, request: AggregateRequest): Promise<FacetResult[]> {
  if (request.facets.length === 0) return [];
  const p = new Params();
  const scope = scopeSql(h.s, p, request);
  const max = p.add(request.maxValues, 'bigint');
  const selects = request.facets.map((field, i) => `SELECT ${i} AS facet, b.str, b.num, b.n FROM (${facetSql(h.s, p, field, max)}) b`);
  const rows = await h.query<{ facet: number; str: string | null; num: number | null; n: string }>(
    `WITH scope AS MATERIALIZED (SELECT d.entity_id, d.urn, d.entity_type FROM ${h.s}.search_docs d WHERE ${scope.where})
     ${selects.map((sql) => `(${sql})`).join('\nUNION ALL\n')}`,
    p.values,
  );
  const buckets: FacetBucket[][] = request.facets.map(() => []);
  for (const row of rows) buckets[row.facet]!.push({ value: row.num !== null ? row.num : row.str!, count: Number(row.n) });
  return request.facets.map((field, i) => ({ field, buckets: buckets[i]! }));
}

/**
 * Buckets of one facet: value, number of documents in scope; count descending, then numbers before
 * strings, numbers ascending, strings in code-unit order.
 */
function facetSql(s: string, p: Params, field: SearchField, max: string): string {
  switch (field.kind) {
    case 'entityType':
      return `SELECT sc.entity_type AS str, NULL::float8 AS num, count(*) AS n FROM scope sc GROUP BY sc.entity_type ORDER BY n DESC, sc.entity_type LIMIT ${max}`;
    case 'urn':
      return `SELECT sc.urn AS str, NULL::float8 AS num, count(*) AS n FROM scope sc GROUP BY sc.urn ORDER BY n DESC, sc.urn LIMIT ${max}`;
    case 'field':
      // (field, value, entity_id) is the primary key: each document counts once per value.
      return `SELECT f.value AS str, NULL::float8 AS num, count(*) AS n
        FROM ${s}.search_fields f JOIN scope sc ON sc.entity_id = f.entity_id
        WHERE f.field = ${p.add(field.name, 'text')}
        GROUP BY f.value ORDER BY n DESC, f.value LIMIT ${max}`;
    case 'property':
      return `SELECT v.str_value AS str, v.num_value AS num, count(DISTINCT v.entity_id) AS n
        FROM ${s}.property_values v JOIN scope sc ON sc.entity_id = v.entity_id
        WHERE v.property = ${p.add(field.propertyUrn, 'text')} AND v.def_key = ${p.add(field.definitionKey, 'text')}
        GROUP BY v.str_value, v.num_value ORDER BY n DESC, v.num_value NULLS LAST, v.str_value LIMIT ${max}`;
  }
}
