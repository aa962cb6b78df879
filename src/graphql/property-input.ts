import type { Catalog } from '../catalog';
import { isCatalogError, withPaths, type Violation } from '../errors';
import type { Actor } from '../core/access';
import { checkSchema } from '../core/validation';
import {
  checkName,
  graphqlAssignmentSchema,
  graphqlCreateDefinitionSchema,
  graphqlUpdateDefinitionSchema,
  type AllowedValue,
  type CreatePropertyDefinitionInput,
  type CreateStructuredPropertyInput,
  type DecoderReport,
  type DefinitionUpdate,
  type GraphqlAllowedValueInput,
  type GraphqlPropertyAssignmentInput,
  type PropertyAssignment,
  type PropertyDefinitionInput,
  type PreviewChangeInput,
  type PropertyValue,
  type RestPropertyDefinitionInput,
  type StructuredPropertySettingsInput,
  type StructuredPropertyView,
  type UpdateStructuredPropertyInput,
} from '../core/properties';

/**
 * The GraphQL spellings of structured property inputs (`CreateStructuredPropertyInput`,
 * `UpdateStructuredPropertyInput`, `StructuredPropertyInputParams`), decoded into the canonical input
 * `catalog.properties` takes, and the way back from a canonical violation path to the GraphQL input's.
 * Nothing here decides what a definition or a value means: it only translates. The resolvers use these
 * and nothing else; `metacatalog/graphql` exports them for hosts that take the GraphQL spelling on
 * another road (a message queue, a script).
 */

/** GraphQL passes `null` for fields set to null; they mean "not given". */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = dropNulls(v);
    return out;
  }
  return value;
}

/** `{ stringValue | numberValue }` entries: exactly one of the two. */
function graphqlScalars(
  entries: readonly GraphqlAllowedValueInput[],
  pathOf: (index: number) => string,
  violations: Violation[],
): Array<{ value: string | number; description?: string }> {
  const out: Array<{ value: string | number; description?: string }> = [];
  entries.forEach((entry, i) => {
    const hasString = typeof entry.stringValue === 'string';
    const hasNumber = typeof entry.numberValue === 'number';
    if (hasString === hasNumber) {
      violations.push({ path: pathOf(i), message: 'needs exactly one of stringValue or numberValue' });
      return;
    }
    const value = hasString ? (entry.stringValue as string) : (entry.numberValue as number);
    out.push({ value, ...(typeof entry.description === 'string' ? { description: entry.description } : {}) });
  });
  return out;
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

/**
 * GraphQL `CreateStructuredPropertyInput` → the canonical definition (and its settings input, read by
 * the settings rules). Shape violations are in the GraphQL spelling; `idOnly` tells the path map that
 * the qualified name came from `id`. Undefined input when the shape is wrong.
 */
export function decodeGraphqlDefinition(input: unknown): {
  input?: PropertyDefinitionInput;
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
    input: canonical,
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

/** `PreviewStructuredPropertyChangeInput` as GraphQL hands it over (absent fields may be null). */
export interface GraphqlPreviewInput {
  urn?: string | null;
  qualifiedName?: string | null;
  displayName?: string | null;
  description?: string | null;
  immutable?: boolean | null;
  valueType: string;
  typeQualifier?: { allowedTypes?: string[] | null } | null;
  allowedValues?: Array<{ stringValue?: string | null; numberValue?: number | null; description?: string | null }> | null;
  cardinality?: 'SINGLE' | 'MULTIPLE' | null;
  entityTypes: string[];
  version?: string | null;
}

/** `previewStructuredPropertyChange`'s input spelled as the aspect holds a definition (the canonical input of `catalog.properties.previewChange`). */
export function decodeGraphqlPreview(input: GraphqlPreviewInput): PreviewChangeInput {
  const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
  return {
    ...(given(input.urn) ? { urn: input.urn } : {}),
    ...(given(input.qualifiedName) ? { qualifiedName: input.qualifiedName } : {}),
    ...(given(input.displayName) ? { displayName: input.displayName } : {}),
    ...(given(input.description) ? { description: input.description } : {}),
    ...(given(input.immutable) ? { immutable: input.immutable } : {}),
    valueType: input.valueType,
    ...(given(input.typeQualifier) ? { typeQualifier: { allowedTypes: input.typeQualifier.allowedTypes ?? [] } } : {}),
    ...(given(input.allowedValues)
      ? {
          allowedValues: input.allowedValues.map((a) => ({
            // Neither or both of the two: left for the definition's schema to refuse, with the entry's path.
            value: {
              ...(given(a.stringValue) ? { string: a.stringValue } : {}),
              ...(given(a.numberValue) ? { double: a.numberValue } : {}),
            } as PropertyValue,
            ...(given(a.description) ? { description: a.description } : {}),
          })),
        }
      : {}),
    ...(given(input.cardinality) ? { cardinality: input.cardinality } : {}),
    entityTypes: input.entityTypes,
    ...(given(input.version) ? { version: input.version } : {}),
  };
}

/**
 * GraphQL `createStructuredProperty` through the canonical `catalog.properties.create`: decoded, the
 * decoder's violations handed over as `prior` (one answer, after the actor is admitted), every
 * violation path in the GraphQL input's spelling.
 */
export async function createStructuredPropertyFromGraphql(
  catalog: Catalog,
  actor: Actor,
  input: CreateStructuredPropertyInput,
): Promise<StructuredPropertyView> {
  const decoded = decodeGraphqlDefinition(input);
  const pathOf = graphqlDefinitionPath(decoded.idOnly, decoded.violations);
  return (
    catalog.properties
      // The decoder checked the input's schema; the rules check the names (the compiler's types are for library callers).
      .create(actor, decoded.input as CreatePropertyDefinitionInput | undefined, {
        prior: decoded.violations,
        ...(decoded.settings ? { settings: decoded.settings } : {}),
      })
      .catch((error: unknown) => {
        throw withPaths(error, pathOf);
      })
  );
}

/** GraphQL `updateStructuredProperty` through the canonical `catalog.properties.update`, violations in the GraphQL spelling. */
export async function updateStructuredPropertyFromGraphql(
  catalog: Catalog,
  actor: Actor,
  input: UpdateStructuredPropertyInput,
): Promise<StructuredPropertyView> {
  const { update, violations } = decodeGraphqlUpdate(input);
  const urn = (input as { urn?: unknown } | null)?.urn;
  return catalog.properties
    .update(actor, update ?? { urn: typeof urn === 'string' ? urn : '' }, { prior: violations })
    .catch((error: unknown) => {
      throw graphqlUpdateError(error);
    });
}

/** GraphQL `upsertStructuredProperties` through the canonical `catalog.properties.upsertValues`, violations in the GraphQL spelling. */
export async function upsertStructuredPropertiesFromGraphql(
  catalog: Catalog,
  actor: Actor,
  assetUrn: string,
  params: readonly GraphqlPropertyAssignmentInput[],
): Promise<PropertyAssignment[]> {
  const { input, report } = decodeGraphqlAssignments(params);
  return catalog.properties
    .upsertValues(actor, assetUrn, input, { prior: report.violations, malformed: report.malformed })
    .catch((error: unknown) => {
      throw withPaths(error, graphqlValuesPath);
    });
}

/** An error of the canonical update said in the GraphQL input's spelling (unchanged when no path is spelled otherwise). */
function graphqlUpdateError(error: unknown): unknown {
  if (!isCatalogError(error) || error.details.every((d) => graphqlUpdatePath(d.path) === d.path)) return error;
  return withPaths(error, graphqlUpdatePath);
}
