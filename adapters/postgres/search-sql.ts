import type { SearchCondition, SearchField, SearchScope } from '../../src/adapter/types';
import type { Ids, PropertyKeys } from './property-keys';
import { textQuery } from './text';

// The SQL of search scopes and conditions, shared by search and aggregation: every value a parameter
// (placeholders with explicit types), every text column compared in the "C" collation.

/** Collects query parameters and hands out their placeholders. */
export class Params {
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
    else if (strings.length > 1)
      tests.push(`EXISTS (SELECT 1 FROM unnest(${p.add(strings, 'text[]')}) AS w(value) WHERE ${predicate('w.value')})`);
  };
  switch (operator) {
    case 'EQUAL':
    case 'IN':
      compareStrings('=');
      compareNumbers('=');
      break;
    case 'IEQUAL': {
      const lowered = [...new Set(strings.map(lowerCase))];
      // The stored lower-casing when the server's cannot give it (see storedLower), else lower() in "C" (ASCII).
      const column = `COALESCE(${columns.lower}, lower(${columns.str}))`;
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

/**
 * The value column a property's rows keep their values in. Each of the two value indexes holds only
 * the rows of its kind (partial indexes): naming the column as not null lets the planner use it, and
 * changes no answer, since every value under a key has the kind of its definition.
 */
export function propertyColumn(field: Extract<SearchField, { kind: 'property' }>, alias: string): string {
  return `${alias}.${field.valueKind === 'number' ? 'num_value' : 'str_value'}`;
}

/**
 * The entity ids whose document satisfies a condition (not negated), as a SELECT; FALSE when none can.
 * With `withSole`, a second column `sole`: the row is its document's only one for the field (always
 * false for standard fields, which do not record it).
 */
export function conditionIds(
  s: string,
  p: Params,
  ids: Ids,
  condition: SearchCondition,
  rowScope?: RowScope,
  withSole = false,
): string | 'FALSE' {
  const { field, operator, values } = condition;
  const scoped = (alias: string, table: 'fields' | 'values'): string => (rowScope ? ` AND ${rowScope(alias, table)}` : '');
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
      // A name the dictionary does not hold was never written: no row has it.
      const fieldId = ids.name(field.name);
      if (fieldId === undefined) return 'FALSE';
      const test = valueTest(p, operator, values, { str: 'f.value', lower: 'f.value_lower' });
      return test === 'FALSE'
        ? 'FALSE'
        : `SELECT f.entity_id${withSole ? ', false AS sole' : ''} FROM ${s}.search_fields f WHERE f.field_id = ${p.add(fieldId, 'smallint')}${test === 'TRUE' ? '' : ` AND ${test}`}${scoped('f', 'fields')}${firstOnly('f.first_of_field')}`;
    }
    case 'property': {
      const keyId = ids.key(field.propertyUrn, field.definitionKey);
      if (keyId === undefined) return 'FALSE';
      // Only values of the key's kind can match its rows (a number never equals a string).
      const number = field.valueKind === 'number';
      const typed = values.filter((v) => typeof v === (number ? 'number' : 'string'));
      const test = valueTest(p, operator, typed, { str: 'v.str_value', lower: 'v.str_lower', num: 'v.num_value' });
      if (test === 'FALSE') return 'FALSE';
      // A comparison of the column implies it is not null, which is what lets the planner use the
      // kind's (partial) index; said again, it would be counted twice in the row estimate. Said only
      // where nothing implies it: EXISTS, a case-insensitive match, a match of one of several substrings.
      const implied = test !== 'TRUE' && !(operator === 'IEQUAL' && !number) && !test.startsWith('EXISTS');
      const where = [
        `v.key_id = ${p.add(keyId, 'integer')}`,
        ...(implied ? [] : [`${propertyColumn(field, 'v')} IS NOT NULL`]),
        ...(test === 'TRUE' ? [] : [test]),
      ].join(' AND ');
      return `SELECT v.entity_id${withSole ? ', v.sole_of_key AS sole' : ''} FROM ${s}.property_values v WHERE ${where}${scoped('v', 'values')}${firstOnly('v.first_of_key')}`;
    }
  }
}

/** One condition over the search document `d`: on its own columns, or membership in the ids that match. */
function conditionSql(s: string, p: Params, ids: Ids, condition: SearchCondition): string {
  const { field, operator, values } = condition;
  let matched: string;
  if (field.kind === 'entityType' || field.kind === 'urn') {
    const column = field.kind === 'urn' ? 'urn' : 'entity_type';
    matched = valueTest(p, operator, values, { str: `d.${column}`, lower: `d.${column}_lower` });
  } else {
    const matching = conditionIds(s, p, ids, condition);
    matched = matching === 'FALSE' ? 'FALSE' : `d.entity_id IN (${matching})`;
  }
  return condition.negated ? `NOT ${wrap(matched)}` : matched;
}

/**
 * Several groups (an OR): the matching ids as one set, a UNION over the groups, so the server builds
 * each group's ids once instead of testing every document against every group.
 */
function filterIds(s: string, p: Params, ids: Ids, filter: SearchCondition[][]): string | 'FALSE' {
  const groups: string[] = [];
  for (const group of filter) {
    // A group with a condition that cannot match is left out; that is decided on scratch parameters
    // first, so that no parameter is left unused in the statement.
    if (group.some((c) => !c.negated && conditionIds(s, new Params(), ids, c) === 'FALSE')) continue;
    const positive: string[] = [];
    const negative: string[] = [];
    for (const condition of group) {
      const matching = conditionIds(s, p, ids, condition);
      if (matching === 'FALSE') continue; // only a negated one can be FALSE here: NOT FALSE constrains nothing
      (condition.negated ? negative : positive).push(matching);
    }
    // The first condition's ids, semi-joined with the others' (so a multi-valued field cannot multiply
    // rows), less the negated ones' (NOT IN: each hashed once).
    const from = positive.length > 0 ? `(${positive[0]}) c0` : `${s}.search_docs c0`;
    const where = [...positive.slice(1).map((q) => `c0.entity_id IN (${q})`), ...negative.map((q) => `c0.entity_id NOT IN (${q})`)].join(
      ' AND ',
    );
    groups.push(`SELECT c0.entity_id FROM ${from}${where ? ` WHERE ${where}` : ''}`);
  }
  return groups.length === 0 ? 'FALSE' : groups.join(' UNION ');
}

function wrap(sql: string): string {
  return /^[A-Z]+$/.test(sql) || sql.startsWith('(') ? sql : `(${sql})`;
}

/**
 * Types and removed flag tested on a row itself: of `search_docs` and `property_values` (which name
 * the type), or of `search_fields` (which carry the type's id in the `search_names` dictionary).
 */
export type RowScope = (alias: string, table: 'docs' | 'fields' | 'values') => string;

export interface Scope {
  /** `search_docs d`, joined with `search_text t` when there is a full-text query. */
  from: string;
  where: string;
  /** The tsquery placeholder when the scope has a full-text query. */
  tsquery?: string;
}

/** FROM and WHERE over `search_docs d` for a scope: type, removed, full text, then the OR of ANDs. */
export function scopeSql(s: string, p: Params, ids: Ids, scope: SearchScope): Scope {
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
      parts.push(scope.filter[0]!.map((c) => conditionSql(s, p, ids, c)).join(' AND '));
    } else {
      const matching = filterIds(s, p, ids, scope.filter);
      parts.push(matching === 'FALSE' ? 'FALSE' : `d.entity_id IN (${matching})`);
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
 * The standard field names a request names, and its entity types when it reads standard field rows:
 * resolved to `search_names` ids (only field rows carry them).
 */
function searchNames(scope: SearchScope, facets: readonly SearchField[] = []): string[] {
  const fields = [...scope.filter.flat().map((c) => c.field), ...facets].flatMap((f) => (f.kind === 'field' ? [f.name] : []));
  return fields.length > 0 ? [...fields, ...scope.entityTypes] : [];
}

/** The ids a request needs from both dictionaries. */
export function requestIds(keys: PropertyKeys, scope: SearchScope, facets: readonly SearchField[] = []): Promise<Ids> {
  return keys.lookupIds(propertyPairs(scope, facets), searchNames(scope, facets));
}

/**
 * Types and removed flag tested on a row itself (`search_docs`, and the value rows of `search_fields`
 * and `property_values`, which carry them). A type the dictionary does not name has no field rows.
 */
export function rowScopeOf(p: Params, ids: Ids, scope: SearchScope): RowScope {
  const types = [...new Set(scope.entityTypes)];
  const typeIds = types.flatMap((t) => ids.name(t) ?? []);
  let typeParam: string | undefined;
  let typeIdParam: string | undefined;
  // Parameters are added on first use only: an unused parameter has no type the server can infer.
  const typesParam = (): string => (typeParam ??= types.length === 1 ? p.add(types[0], 'text') : p.add(types, 'text[]'));
  const typeIdsParam = (): string => (typeIdParam ??= typeIds.length === 1 ? p.add(typeIds[0], 'smallint') : p.add(typeIds, 'smallint[]'));
  const typeTest = (alias: string, table: 'docs' | 'fields' | 'values'): string => {
    if (table !== 'fields')
      return types.length === 1 ? `${alias}.entity_type = ${typesParam()}` : `${alias}.entity_type = ANY(${typesParam()})`;
    if (typeIds.length === 0) return 'FALSE';
    return typeIds.length === 1 ? `${alias}.type_id = ${typeIdsParam()}` : `${alias}.type_id = ANY(${typeIdsParam()})`;
  };
  return (alias, table) =>
    [...(scope.includeRemoved ? [] : [`NOT ${alias}.removed`]), ...(types.length === 0 ? [] : [typeTest(alias, table)])].join(' AND ') ||
    'TRUE';
}
