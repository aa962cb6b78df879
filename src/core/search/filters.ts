import type { FilterOperator, JsonObject } from '../../adapter/types';
import { FILTER_OPERATORS } from '../../adapter/types';
import { lazySchemaCheck } from '../validation';
import type { Violation } from '../../errors';

/**
 * One filter as clients send it (GraphQL `FacetFilterInput`, shared by token listing and search).
 * `values` wins over `value` when both are given; an unset `condition` means EQUAL.
 */
export interface FacetFilterInput {
  field: string;
  value?: string | null;
  values?: readonly string[] | null;
  negated?: boolean | null;
  condition?: FilterOperator | null;
}

/** A filter with its defaults applied: the operator is set and the values are one list. */
export interface FacetCondition {
  field: string;
  operator: FilterOperator;
  values: string[];
  negated: boolean;
}

/** The JSON schema of one `FacetFilterInput` (nulls accepted where GraphQL sends them). */
export const facetFilterSchema: JsonObject = {
  type: 'object',
  properties: {
    field: { type: 'string', minLength: 1 },
    value: { type: ['string', 'null'] },
    values: { type: ['array', 'null'], items: { type: 'string' } },
    negated: { type: ['boolean', 'null'] },
    condition: { type: ['string', 'null'], enum: [...FILTER_OPERATORS, null] },
  },
  required: ['field'],
  additionalProperties: false,
};

const checkFilterList = lazySchemaCheck({ type: 'array', items: facetFilterSchema });

/** Applies the defaults of one filter. */
export function normalizeFacetFilter(input: FacetFilterInput): FacetCondition {
  const values = input.values && input.values.length > 0 ? [...input.values] : typeof input.value === 'string' ? [input.value] : [];
  return { field: input.field, operator: input.condition ?? 'EQUAL', values, negated: input.negated === true };
}

/**
 * Checks a list of filters (shape, and that every condition but EXISTS has a value) and returns them
 * normalized. Problems are added to `violations` with paths under `path` (e.g. `/filters`).
 */
export function checkFacetFilters(filters: unknown, path: string, violations: Violation[]): FacetCondition[] {
  if (filters === undefined || filters === null) return [];
  const shape = checkFilterList(filters, path);
  if (shape.length) {
    violations.push(...shape);
    return [];
  }
  const out: FacetCondition[] = [];
  (filters as FacetFilterInput[]).forEach((input, i) => {
    const condition = normalizeFacetFilter(input);
    if (condition.operator !== 'EXISTS' && condition.values.length === 0) {
      violations.push({ path: `${path}/${i}`, message: `condition ${condition.operator} needs a value or values` });
    }
    out.push(condition);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluation over plain records, in the domain (for small collections such as access tokens).
// ---------------------------------------------------------------------------------------------

export type RecordFieldKind = 'string' | 'number';
export type RecordValue = string | number | null | undefined;

/** A condition whose values are typed for its field. */
export interface RecordCondition {
  field: string;
  operator: FilterOperator;
  values: Array<string | number>;
  negated: boolean;
}

/**
 * Resolves conditions against the fields a record type offers: unknown fields and values that are
 * not numbers for a number field become violations (path `${path}/<index>`).
 */
export function resolveRecordConditions(
  conditions: readonly FacetCondition[],
  fields: Readonly<Record<string, RecordFieldKind>>,
  path: string,
  violations: Violation[],
): RecordCondition[] {
  const out: RecordCondition[] = [];
  conditions.forEach((condition, i) => {
    const kind = fields[condition.field];
    if (kind === undefined) {
      violations.push({
        path: `${path}/${i}/field`,
        message: `unknown field "${condition.field}"; known fields: ${Object.keys(fields).join(', ')}`,
      });
      return;
    }
    if (kind === 'string') {
      out.push({ ...condition, values: [...condition.values] });
      return;
    }
    if (['CONTAIN', 'START_WITH', 'END_WITH', 'IEQUAL'].includes(condition.operator)) {
      violations.push({
        path: `${path}/${i}/condition`,
        message: `${condition.operator} does not apply to the number field "${condition.field}"`,
      });
      return;
    }
    const numbers: number[] = [];
    condition.values.forEach((text, j) => {
      const n = text.trim() === '' ? Number.NaN : Number(text);
      if (Number.isFinite(n)) numbers.push(n);
      else
        violations.push({
          path: `${path}/${i}/values/${j}`,
          message: `"${text}" is not a number (field "${condition.field}" holds numbers)`,
        });
    });
    out.push({ ...condition, values: numbers });
  });
  return out;
}

function compare(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function satisfies(operator: FilterOperator, actual: string | number, expected: string | number): boolean {
  switch (operator) {
    case 'EQUAL':
    case 'IN':
      return actual === expected;
    case 'IEQUAL':
      return String(actual).toLowerCase() === String(expected).toLowerCase();
    case 'CONTAIN':
      return String(actual).includes(String(expected));
    case 'START_WITH':
      return String(actual).startsWith(String(expected));
    case 'END_WITH':
      return String(actual).endsWith(String(expected));
    case 'GREATER_THAN':
      return compare(actual, expected) > 0;
    case 'GREATER_THAN_OR_EQUAL_TO':
      return compare(actual, expected) >= 0;
    case 'LESS_THAN':
      return compare(actual, expected) < 0;
    case 'LESS_THAN_OR_EQUAL_TO':
      return compare(actual, expected) <= 0;
    case 'EXISTS':
      return true;
  }
}

/**
 * Whether a record matches one condition, with the semantics of the adapter's `SearchCondition`:
 * several values mean "any of", a record without a value for the field matches only negated conditions,
 * `negated` inverts the whole condition.
 */
export function matchesRecordCondition(record: Readonly<Record<string, RecordValue>>, condition: RecordCondition): boolean {
  const actual = record[condition.field];
  const present = actual !== undefined && actual !== null && actual !== '';
  let matched: boolean;
  if (condition.operator === 'EXISTS') matched = present;
  else matched = present && condition.values.some((expected) => satisfies(condition.operator, actual, expected));
  return condition.negated ? !matched : matched;
}

/** AND of all conditions. */
export function matchesRecord(record: Readonly<Record<string, RecordValue>>, conditions: readonly RecordCondition[]): boolean {
  return conditions.every((condition) => matchesRecordCondition(record, condition));
}
