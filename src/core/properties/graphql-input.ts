import type { Violation } from '../../errors';
import { checkSchema } from '../validation';
import { graphqlAssignmentSchema } from '../validation/schemas/structured-properties';
import { dropNulls } from './definition-shapes';
import type { GraphqlPropertyAssignmentInput, PropertyAssignment, PropertyValue } from './types';

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
