import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { checkSchema } from '../validation';
import type { FacetBucket } from '../../adapter/types';
import { urnProblem } from '../urn';
import type { StructuredPropertyView } from '../properties/types';
import { aggregateInputSchema } from '../validation/schemas/search';
import {
  ENTITY_TYPE_FIELD,
  PROPERTY_FIELD_PREFIX,
  type ResolvedSearchField,
  type SearchInputResolver,
  type SearchScopeInput,
} from './input';
import type { StructuredPropertyService } from '../properties/service';
import { propertyValueIndexOf } from '../entities/property-values';

export interface AggregateAcrossEntitiesInput extends SearchScopeInput {
  /**
   * Field names as in filters. Absent or empty: `_entityType` and every structured property that has
   * values among the matching entities.
   */
  facets?: ReadonlyArray<string | null> | null;
}

export interface AggregationEntry {
  /** The value as text: numbers as decimal strings (`42` → `"42.0"`), entity types as GraphQL names. */
  value: string;
  count: number;
  /** When the value is an entity URN (`urn:li:dataPlatform:hive`): that URN, the entity behind the value. */
  entity?: string;
}

export interface FacetEntry {
  field: string;
  displayName: string;
  /** A structured property facet: the property's URN (whether or not it still exists), as DataHub reports it. */
  entity?: string;
  /** Most frequent first, then by value; at most `searchFlags.maxAggValues`. */
  aggregations: AggregationEntry[];
}

export interface AggregateAcrossEntitiesResult {
  facets: FacetEntry[];
}

const DEFAULT_MAX_VALUES = 20;
const DEFINITIONS_PAGE = 1000;

/** A number as the established platform prints doubles in facets: always with a decimal point, never an exponent. */
export function formatFacetNumber(n: number): string {
  if (Number.isInteger(n)) return `${Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString()}.0`;
  const text = String(n);
  return /e/i.test(text) ? n.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 100 }) : text;
}

const STANDARD_DISPLAY_NAMES: Readonly<Record<string, string>> = { [ENTITY_TYPE_FIELD]: 'Type', urn: 'URN' };

function displayNameOf(resolved: ResolvedSearchField, view: StructuredPropertyView | undefined): string {
  if (resolved.field.kind === 'property') return view?.definition.displayName ?? view?.definition.qualifiedName ?? resolved.name;
  return STANDARD_DISPLAY_NAMES[resolved.name] ?? resolved.name.charAt(0).toUpperCase() + resolved.name.slice(1);
}

/** Every active structured property that has values under its current definition. */
async function propertiesWithValues(
  ctx: CatalogContext,
  properties: StructuredPropertyService,
  actor: Actor,
): Promise<StructuredPropertyView[]> {
  const out: StructuredPropertyView[] = [];
  let afterUrn: string | undefined;
  for (;;) {
    const page = await properties.list(actor, { limit: DEFINITIONS_PAGE, ...(afterUrn ? { afterUrn } : {}) });
    for (const view of page.properties) {
      if ((await propertyValueIndexOf(ctx.adapter, ctx.registry).countEntitiesWithPropertyValues(view.urn, view.definitionKey)) > 0)
        out.push(view);
    }
    if (!page.nextAfterUrn) break;
    afterUrn = page.nextAfterUrn;
  }
  return out.sort((a, b) =>
    a.definition.qualifiedName < b.definition.qualifiedName ? -1 : a.definition.qualifiedName > b.definition.qualifiedName ? 1 : 0,
  );
}

/** A value that names an entity (DataHub links such facet values to their entity). */
function isEntityUrn(value: string): boolean {
  return value.startsWith('urn:li:') && urnProblem(value) === undefined;
}

/** Buckets of a true/false facet from the count of `true` and the number of matches; most frequent first. */
function booleanBuckets(buckets: readonly FacetBucket[], matches: number, maxValues: number): AggregationEntry[] {
  const trueCount = buckets.find((b) => b.value === 'true')?.count ?? 0;
  const entries: AggregationEntry[] = [
    { value: 'true', count: trueCount },
    { value: 'false', count: Math.max(0, matches - trueCount) },
  ];
  return entries
    .filter((e) => e.count > 0)
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1))
    .slice(0, maxValues);
}

export async function aggregateAcrossEntities(
  ctx: CatalogContext,
  resolver: SearchInputResolver,
  properties: StructuredPropertyService,
  actor: Actor,
  input: AggregateAcrossEntitiesInput,
): Promise<AggregateAcrossEntitiesResult> {
  const who = await ctx.authenticate(actor);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new CatalogError('INVALID_INPUT', 'aggregateAcrossEntities: the input must be an object', {
      details: [{ path: '/', message: 'must be an object' }],
    });
  }
  throwIfViolations(checkSchema(aggregateInputSchema, input), 'invalid aggregateAcrossEntities input');
  const violations: Violation[] = [];
  const scope = await resolver.scope(who, input, violations);
  const requested = (input.facets ?? []).filter((f): f is string => typeof f === 'string');
  const defaults = requested.length === 0;
  const fields: Array<{ resolved: ResolvedSearchField; view?: StructuredPropertyView }> = [];
  if (defaults) {
    fields.push({ resolved: (await resolver.field(who, ENTITY_TYPE_FIELD, '/facets', violations))! });
    for (const view of await propertiesWithValues(ctx, properties, who)) {
      const name = `${PROPERTY_FIELD_PREFIX}${view.definition.qualifiedName}`;
      const resolved = await resolver.field(who, name, '/facets', violations);
      if (resolved) fields.push({ resolved, view });
    }
  } else {
    for (const [i, name] of (input.facets ?? []).entries()) {
      if (typeof name !== 'string') continue;
      const resolved = await resolver.field(who, name, `/facets/${i}`, violations);
      if (!resolved) continue;
      const view = resolved.field.kind === 'property' ? await properties.get(who, resolved.field.propertyUrn) : undefined;
      fields.push({ resolved, ...(view ? { view } : {}) });
    }
  }
  throwIfViolations(violations, 'invalid aggregateAcrossEntities input');

  const maxValues = input.searchFlags?.maxAggValues ?? DEFAULT_MAX_VALUES;
  const results = await ctx.adapter.aggregate({ ...scope, facets: fields.map((f) => f.resolved.field), maxValues });
  // True/false fields hold `true` or nothing: their `false` count is the matches without `true`.
  const hasBoolean = fields.some((f) => f.resolved.valueType === 'boolean');
  const matches = hasBoolean ? (await ctx.adapter.search({ ...scope, order: 'urn', limit: 0 })).total : 0;
  const facets: FacetEntry[] = [];
  results.forEach((result, i) => {
    const { resolved, view } = fields[i]!;
    if (resolved.valueType === 'boolean') {
      facets.push({
        field: resolved.name,
        displayName: displayNameOf(resolved, view),
        aggregations: booleanBuckets(result.buckets, matches, maxValues),
      });
      return;
    }
    const facetEntity = resolved.field.kind === 'property' ? { entity: resolved.field.propertyUrn } : {};
    // A default property facet with nothing among the matches says nothing: leave it out.
    if (defaults && resolved.field.kind === 'property' && result.buckets.length === 0) return;
    facets.push({
      field: resolved.name,
      displayName: displayNameOf(resolved, view),
      ...facetEntity,
      aggregations: result.buckets.map((bucket) => {
        if (typeof bucket.value === 'number') return { value: formatFacetNumber(bucket.value), count: bucket.count };
        if (resolved.field.kind === 'entityType') return { value: resolver.graphqlType(bucket.value), count: bucket.count };
        return { value: bucket.value, count: bucket.count, ...(isEntityUrn(bucket.value) ? { entity: bucket.value } : {}) };
      }),
    });
  });
  return { facets };
}
