import type { Violation } from '../../errors';
import { checkSchema } from '../validation';
import {
  graphqlAssignmentSchema,
  graphqlCreateDefinitionSchema,
  graphqlUpdateDefinitionSchema,
} from '../validation/schemas/structured-properties';
import { checkName } from './definition-rules';
import { dropNulls, graphqlScalars } from './definition-shapes';
import type { StructuredPropertySettingsInput } from './settings';
import type {
  AllowedValue,
  CreateStructuredPropertyInput,
  DefinitionUpdate,
  GraphqlPropertyAssignmentInput,
  PropertyAssignment,
  PropertyValue,
  RestPropertyDefinitionInput,
  UpdateStructuredPropertyInput,
} from './types';

/**
 * The GraphQL spelling of structured property values, decoded into the one canonical input (the
 * `structuredProperties` aspect: `{ properties: [{ propertyUrn, values: [{ string } | { double }] }] }`)
 * before the rules see it, and the way back from a canonical violation path to the GraphQL input's.
 * Nothing here decides what a value means: it only translates.
 */

/** What the decoder already reported, under canonical paths: the rules check only the property of a `malformed` element. */
export interface DecoderReport {
  violations: Violation[];
  malformed: ReadonlySet<number>;
}

const ARRAY_SCHEMA = { type: 'array' } as const;

/** `structuredPropertyInputParams` → `{ properties }`, one canonical element per GraphQL element (same index). */
export function decodeGraphqlAssignments(input: unknown): { input: { properties: PropertyAssignment[] }; report: DecoderReport } {
  const value = dropNulls(input);
  const violations: Violation[] = [];
  const malformed = new Set<number>();
  const properties: PropertyAssignment[] = [];
  const envelope = checkSchema(ARRAY_SCHEMA, value, '/properties');
  violations.push(...envelope);
  if (envelope.length) return { input: { properties }, report: { violations, malformed } };
  (value as unknown[]).forEach((item, i) => {
    const path = `/properties/${i}`;
    const found = checkSchema(graphqlAssignmentSchema, item, path);
    violations.push(...found);
    const record = (item ?? {}) as Partial<GraphqlPropertyAssignmentInput>;
    const values: PropertyValue[] = [];
    if (!found.length)
      record.values!.forEach((v, j) => {
        const hasString = typeof v.stringValue === 'string';
        if (hasString === (typeof v.numberValue === 'number')) {
          violations.push({ path: `${path}/values/${j}`, message: 'needs exactly one of stringValue or numberValue' });
          malformed.add(i);
        } else values.push(hasString ? { string: v.stringValue as string } : { double: v.numberValue as number });
      });
    else malformed.add(i);
    properties.push({ propertyUrn: record.structuredPropertyUrn as string, values });
  });
  return { input: { properties }, report: { violations, malformed } };
}

/** A canonical values path in the GraphQL input: `/urn` is `/assetUrn`, `/properties/<i>/propertyUrn` is `.../structuredPropertyUrn`. */
export function graphqlValuesPath(path: string): string {
  if (path === '/urn') return '/assetUrn';
  const m = /^\/properties(\/\d+)?(\/propertyUrn)?(.*)$/.exec(path);
  if (!m) return path;
  return `/structuredPropertyInputParams${m[1] ?? ''}${m[2] ? '/structuredPropertyUrn' : ''}${m[3]}`;
}

/** A definition as the rules take it: the `propertyDefinition` aspect as stored (REST spelling), and the URN it is written to when the input names one. */
export interface CanonicalDefinition {
  urn?: string;
  value: RestPropertyDefinitionInput;
}

/**
 * GraphQL `CreateStructuredPropertyInput` → the canonical definition (and its settings input, read by
 * the settings rules). Shape violations are in the GraphQL spelling; `idOnly` tells the path map that
 * the qualified name came from `id`. Undefined input when the shape is wrong.
 */
export function decodeGraphqlDefinition(input: unknown): {
  input?: CanonicalDefinition;
  settings?: StructuredPropertySettingsInput;
  violations: Violation[];
  idOnly: boolean;
} {
  const value = dropNulls(input);
  const violations = checkSchema(graphqlCreateDefinitionSchema, value);
  if (violations.length) return { violations, idOnly: false };
  const g = value as CreateStructuredPropertyInput;
  // `id` is a second spelling of the qualified name here: checked as one when both are given.
  if (g.id != null && g.qualifiedName != null) checkName(g.id, '/id', violations);
  if (g.id != null && g.qualifiedName != null && g.id !== g.qualifiedName)
    violations.push({ path: '/id', message: `id "${g.id}" and qualified name "${g.qualifiedName}" must match when both are given` });
  const allowedValues: AllowedValue[] = [];
  (g.allowedValues ?? []).forEach((entry, i) => {
    const hasString = typeof entry.stringValue === 'string';
    if (hasString === (typeof entry.numberValue === 'number')) {
      violations.push({ path: `/allowedValues/${i}`, message: 'needs exactly one of stringValue or numberValue' });
      return;
    }
    allowedValues.push({
      value: hasString ? { string: entry.stringValue as string } : { double: entry.numberValue as number },
      ...(typeof entry.description === 'string' ? { description: entry.description } : {}),
    });
  });
  const qualifiedName = g.qualifiedName ?? g.id ?? undefined;
  const canonical: RestPropertyDefinitionInput = {
    ...(qualifiedName != null ? { qualifiedName } : {}),
    ...(g.displayName != null ? { displayName: g.displayName } : {}),
    ...(g.description != null ? { description: g.description } : {}),
    valueType: g.valueType,
    ...(g.typeQualifier?.allowedTypes ? { typeQualifier: { allowedTypes: [...g.typeQualifier.allowedTypes] } } : {}),
    ...(g.allowedValues ? { allowedValues } : {}),
    ...(g.cardinality ? { cardinality: g.cardinality } : {}),
    entityTypes: [...g.entityTypes],
    ...(g.immutable != null ? { immutable: g.immutable } : {}),
    ...(g.version != null ? { version: g.version } : {}),
  };
  return {
    input: { value: canonical },
    ...(g.settings ? { settings: g.settings } : {}),
    violations,
    idOnly: g.qualifiedName == null && g.id != null,
  };
}

/** A canonical definition path in the GraphQL create input (allowed values have no `value` wrapper there). */
export function graphqlDefinitionPath(idOnly: boolean, own: readonly Violation[] = []): (path: string) => string {
  const decoderPaths = new Set(own.map((v) => v.path));
  return (path) => {
    if (decoderPaths.has(path)) return path;
    if (idOnly && path === '/qualifiedName') return '/id';
    return path.replace(/^\/allowedValues\/(\d+)\/value(?=\/|$)/, '/allowedValues/$1');
  };
}

/**
 * GraphQL `UpdateStructuredPropertyInput` → the canonical update. Shape violations (the input's schema)
 * are in the GraphQL spelling, and the update is undefined then; an allowed value with both or neither
 * of `stringValue` and `numberValue` is left out and reported with the update, under its canonical path.
 */
export function decodeGraphqlUpdate(input: unknown): { update?: DefinitionUpdate; violations: Violation[] } {
  const value = dropNulls(input) as UpdateStructuredPropertyInput;
  const violations = checkSchema(graphqlUpdateDefinitionSchema, value);
  if (violations.length) return { violations };
  const update: DefinitionUpdate = { urn: value.urn };
  if (value.displayName != null) update.displayName = value.displayName;
  if (value.description != null) update.description = value.description;
  if (value.immutable != null) update.immutable = value.immutable;
  if (value.setCardinalityAsMultiple === true) update.multiple = true;
  if (value.newEntityTypes) update.addEntityTypes = [...value.newEntityTypes];
  if (value.typeQualifier?.newAllowedTypes?.length) update.addAllowedTypes = [...value.typeQualifier.newAllowedTypes];
  if (value.newAllowedValues?.length) {
    const problems: Violation[] = [];
    update.addAllowedValues = graphqlScalars(value.newAllowedValues, (i) => `/addAllowedValues/${i}`, problems);
    if (problems.length) update.allowedValueProblems = problems;
  }
  if (value.version != null) update.version = value.version;
  if (value.settings) update.settings = value.settings;
  return { update, violations };
}

/** A canonical update path in the GraphQL update input (`/addEntityTypes` is `/newEntityTypes`, `/multiple` `/setCardinalityAsMultiple`). */
export function graphqlUpdatePath(path: string): string {
  const m = /^\/(addEntityTypes|addAllowedTypes|addAllowedValues|multiple)(?=\/|$)(.*)$/.exec(path);
  if (!m) return path;
  const spelled: Record<string, string> = {
    addEntityTypes: '/newEntityTypes',
    addAllowedTypes: '/typeQualifier/newAllowedTypes',
    addAllowedValues: '/newAllowedValues',
    multiple: '/setCardinalityAsMultiple',
  };
  return `${spelled[m[1]!]}${m[2]}`;
}
