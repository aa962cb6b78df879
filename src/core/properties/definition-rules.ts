import type { Violation } from '../../errors';
import type { EntityRegistry } from '../entities/registry';
import {
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
  STRUCTURED_PROPERTY_ENTITY,
  VALUE_TYPE_NAMES,
  VALUES_ASPECT,
  type AllowedValue,
  type PropertyCardinality,
  type PropertyValue,
  type StructuredPropertyDefinition,
  type ValueTypeName,
} from './types';
import { entityTypeOf, urnKey, urnProblem } from '../urn';

/**
 * The meaning of a definition: identity (URN, id, qualified name), value type, entity types, allowed
 * values typed to the value type, cardinality, version; and what makes a change breaking. Every rule
 * adds violations instead of throwing, so that one error lists them all.
 */

/** A definition as read from any input shape, before its names are checked and normalized. */
export interface DefinitionDraft {
  /** The URN the definition is written to (REST path, YAML `urn`), when the input names one. */
  urn?: string;
  id?: string;
  qualifiedName?: string;
  displayName?: string;
  description?: string;
  valueType: string;
  allowedTypes?: string[];
  allowedValues?: Array<{ value: string | number; description?: string }>;
  cardinality?: PropertyCardinality;
  entityTypes: string[];
  immutable?: boolean;
  version?: string;
}

/** Where each field lives in the input shape, for error paths. */
export interface DraftPaths {
  urn: string;
  id: string;
  qualifiedName: string;
  valueType: string;
  allowedTypes: string;
  allowedValues: string;
  allowedValue(index: number): string;
  cardinality: string;
  entityTypes: string;
  version: string;
}

const VERSION_PATTERN = /^\d{14}$/;

function valueTypeUrn(name: ValueTypeName): string {
  return `${DATA_TYPE_URN_PREFIX}${name}`;
}

/** `urn:li:dataType:datahub.number` → `number`; undefined for anything else. */
export function valueTypeNameOf(valueType: string): ValueTypeName | undefined {
  const name = valueType.startsWith(DATA_TYPE_URN_PREFIX) ? valueType.slice(DATA_TYPE_URN_PREFIX.length) : undefined;
  return (VALUE_TYPE_NAMES as readonly string[]).includes(name ?? '') ? (name as ValueTypeName) : undefined;
}

/** Accepts `number`, `datahub.number` or `urn:li:dataType:datahub.number`. */
export function parseValueType(input: string): ValueTypeName | undefined {
  const name = input.startsWith(DATA_TYPE_URN_PREFIX) ? input.slice(DATA_TYPE_URN_PREFIX.length) : input.replace(/^datahub\./, '');
  return (VALUE_TYPE_NAMES as readonly string[]).includes(name) ? (name as ValueTypeName) : undefined;
}

/** Entity types a structured property may be attached to: those that carry the values aspect. */
export function attachableEntityTypes(registry: EntityRegistry): string[] {
  return registry.entityTypeNames().filter((name) => registry.entityType(name).aspects.includes(VALUES_ASPECT));
}

/** Short names (`dataset`) and `urn:li:entityType:datahub.<name>` → full URNs; every bad entry is a violation. */
export function normalizeEntityTypes(
  inputs: readonly string[],
  path: string,
  validNames: readonly string[],
  violations: Violation[],
  what: string,
): string[] {
  const out: string[] = [];
  inputs.forEach((input, i) => {
    let name: string | undefined;
    if (validNames.includes(input)) name = input;
    else if (input.startsWith(ENTITY_TYPE_URN_PREFIX) && validNames.includes(input.slice(ENTITY_TYPE_URN_PREFIX.length))) {
      name = input.slice(ENTITY_TYPE_URN_PREFIX.length);
    }
    if (name === undefined) {
      violations.push({
        path: `${path}/${i}`,
        message: `unknown ${what} "${input}"; use one of ${validNames.join(', ')} (or ${ENTITY_TYPE_URN_PREFIX}<name>)`,
      });
      return;
    }
    const urn = `${ENTITY_TYPE_URN_PREFIX}${name}`;
    if (out.includes(urn)) violations.push({ path: `${path}/${i}`, message: `"${input}" is listed twice` });
    else out.push(urn);
  });
  return out;
}

/** A calendar date `YYYY-MM-DD` that exists (no 2023-02-30). */
function isRealDate(text: string): boolean {
  // Read in place (every date value of every write comes here): the shape `YYYY-MM-DD` in ASCII digits, then the calendar.
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return false;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  if (year < 0 || month < 0 || day < 0) return false;
  // Years below 100 are refused, as a JavaScript Date would read them as 19xx.
  return year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** The number written by `length` ASCII digits at `start`; -1 when one is not a digit. */
function digitsAt(text: string, start: number, length: number): number {
  let n = 0;
  for (let i = start; i < start + length; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Why a value does not fit the value type (undefined when it does). */
export function typedValueProblem(
  type: ValueTypeName,
  allowedTypes: readonly string[] | undefined,
  value: string | number,
): string | undefined {
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value) ? undefined : 'should be a number';
  if (typeof value !== 'string') return `should be a string (the property's type is ${type})`;
  if (type === 'date' && !isRealDate(value)) return 'should be a real date written YYYY-MM-DD';
  if (type === 'urn') {
    const problem = urnProblem(value);
    if (problem) return `should be a URN: ${problem}`;
    if (allowedTypes?.length && !allowedTypes.includes(`${ENTITY_TYPE_URN_PREFIX}${entityTypeOf(value)}`)) {
      const names = allowedTypes.map((t) => t.slice(ENTITY_TYPE_URN_PREFIX.length));
      return `should be a URN of type ${names.join(' or ')}`;
    }
  }
  return undefined;
}

export function toPropertyValue(value: string | number): PropertyValue {
  return typeof value === 'number' ? { double: value } : { string: value };
}

export function fromPropertyValue(value: PropertyValue): string | number {
  return 'double' in value ? value.double : value.string;
}

export function formatValue(value: string | number): string {
  return JSON.stringify(value);
}

export function normalizeAllowedValues(
  entries: ReadonlyArray<{ value: string | number; description?: string }>,
  type: ValueTypeName,
  allowedTypes: readonly string[] | undefined,
  pathOf: (index: number) => string,
  violations: Violation[],
): AllowedValue[] {
  const out: AllowedValue[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const { value } = entry;
    const problem = typedValueProblem(type, allowedTypes, value);
    if (problem) {
      violations.push({ path: pathOf(i), message: `allowed value ${formatValue(value)} ${problem}` });
      return;
    }
    const key = formatValue(value);
    if (seen.has(key)) {
      violations.push({ path: pathOf(i), message: `allowed value ${key} is listed twice` });
      return;
    }
    seen.add(key);
    out.push({ value: toPropertyValue(value), ...(entry.description !== undefined ? { description: entry.description } : {}) });
  });
  return out;
}

/** A name (qualified name, id) is not empty and has no spaces. */
export function checkName(value: string | undefined, path: string, violations: Violation[]): void {
  if (value === undefined) return;
  if (value === '') violations.push({ path, message: 'must not be empty' });
  else if (/\s/.test(value)) violations.push({ path, message: `"${value}" must not contain spaces` });
}

export function checkVersionFormat(version: string | undefined, path: string, violations: Violation[]): void {
  if (version !== undefined && !VERSION_PATTERN.test(version)) {
    violations.push({ path, message: `"${version}" must be exactly 14 digits (yyyyMMddhhmmss)` });
  }
}

/** Turns a draft into the stored shape; undefined (with violations) when it is not valid. */
export function normalizeDraft(
  draft: DefinitionDraft,
  registry: EntityRegistry,
  paths: DraftPaths,
  violations: Violation[],
): { urn: string; definition: StructuredPropertyDefinition } | undefined {
  const before = violations.length;
  let keyFromUrn: string | undefined;
  if (draft.urn !== undefined) {
    const problem = urnProblem(draft.urn);
    if (problem) violations.push({ path: paths.urn, message: problem });
    else if (entityTypeOf(draft.urn) !== STRUCTURED_PROPERTY_ENTITY) {
      violations.push({ path: paths.urn, message: `"${draft.urn}" is not a urn:li:${STRUCTURED_PROPERTY_ENTITY}:<id> URN` });
    } else keyFromUrn = urnKey(draft.urn);
  }
  const beforeNames = violations.length;
  checkName(draft.id, paths.id, violations);
  checkName(draft.qualifiedName, paths.qualifiedName, violations);
  const namesValid = violations.length === beforeNames;
  const { id, qualifiedName } = draft;
  if (id !== undefined && qualifiedName !== undefined && id !== qualifiedName) {
    violations.push({ path: paths.id, message: `id "${id}" and qualified name "${qualifiedName}" must match when both are given` });
  }
  if (keyFromUrn !== undefined && id !== undefined && keyFromUrn !== id) {
    violations.push({ path: paths.id, message: `id "${id}" does not match the URN ${draft.urn}` });
  }
  if (keyFromUrn !== undefined && qualifiedName !== undefined && keyFromUrn !== qualifiedName) {
    violations.push({ path: paths.qualifiedName, message: `qualified name "${qualifiedName}" does not match the URN ${draft.urn}` });
  }
  const name = qualifiedName ?? id ?? keyFromUrn;
  if (name === undefined) violations.push({ path: paths.qualifiedName, message: 'is required (or an id)' });
  const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${name ?? ''}`;
  if (name && namesValid) {
    const problem = urnProblem(urn);
    if (problem) violations.push({ path: paths.qualifiedName, message: `does not make a valid URN: ${problem}` });
  }

  const type = parseValueType(draft.valueType);
  if (!type) {
    violations.push({
      path: paths.valueType,
      message: `unknown value type "${draft.valueType}"; use one of ${VALUE_TYPE_NAMES.join(', ')} (or ${DATA_TYPE_URN_PREFIX}<name>)`,
    });
  }
  const entityTypes = normalizeEntityTypes(
    draft.entityTypes,
    paths.entityTypes,
    attachableEntityTypes(registry),
    violations,
    'entity type',
  );
  if (draft.entityTypes.length === 0) violations.push({ path: paths.entityTypes, message: 'must name at least one entity type' });

  let allowedTypes: string[] | undefined;
  if (draft.allowedTypes !== undefined) {
    if (type && type !== 'urn') {
      violations.push({ path: paths.allowedTypes, message: `applies only to urn properties, not to ${type}` });
    } else {
      allowedTypes = normalizeEntityTypes(draft.allowedTypes, paths.allowedTypes, registry.entityTypeNames(), violations, 'entity type');
      if (draft.allowedTypes.length === 0) allowedTypes = undefined;
    }
  }
  const allowedValues =
    type && draft.allowedValues?.length
      ? normalizeAllowedValues(draft.allowedValues, type, allowedTypes, paths.allowedValue, violations)
      : undefined;
  checkVersionFormat(draft.version, paths.version, violations);
  if (violations.length > before || !type || !name) return undefined;
  const definition: StructuredPropertyDefinition = {
    qualifiedName: name,
    ...(draft.displayName !== undefined ? { displayName: draft.displayName } : {}),
    ...(draft.description !== undefined ? { description: draft.description } : {}),
    valueType: valueTypeUrn(type),
    ...(allowedTypes ? { typeQualifier: { allowedTypes } } : {}),
    ...(allowedValues ? { allowedValues } : {}),
    cardinality: draft.cardinality ?? 'SINGLE',
    entityTypes,
    immutable: draft.immutable ?? false,
    ...(draft.version !== undefined ? { version: draft.version } : {}),
  };
  return { urn, definition };
}
