import type { SearchCondition, SearchField, SearchFilter } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { formatValue, fromPropertyValue, typedValueProblem, valueTypeNameOf } from '../properties/definition-rules';
import { assignmentsOf, keysOf, type DefinitionInfo } from '../properties/lookup';
import {
  ENTITY_TYPE_URN_PREFIX,
  VALUES_ASPECT,
  type DefinitionChangePreview,
  type StructuredPropertyDefinition,
} from '../properties/types';
import { propertyValueIndexOf } from '../entities/property-values';

/**
 * Which entities a definition change touches, asked of the search index: the values of a property
 * are indexed under its definition key, so every question here is a filter, a facet or a count over
 * that key (the work grows with the entities holding the property, never with the catalog).
 * Soft-deleted entities count: their values come back with them.
 */

export type Affected = Pick<DefinitionChangePreview, 'affected' | 'sample'>;

/** Entities listed with their values. */
const SAMPLE_SIZE = 10;
/** Distinct values read to find those a new value type or allowed-types list refuses. */
const DISTINCT_VALUE_LIMIT = 10_000;

const NONE: Affected = { affected: 0, sample: [] };

function propertyField(info: DefinitionInfo): SearchField {
  return {
    kind: 'property',
    propertyUrn: info.urn,
    definitionKey: info.key,
    valueKind: info.valueType === 'number' ? 'number' : 'string',
  };
}

const exists = (field: SearchField): SearchCondition => ({ field, operator: 'EXISTS', values: [], negated: false });

/**
 * The entity types that can hold values under the current definition: its own (a value is checked
 * against them when written, and removing one needs a new version, hence a new key). Naming them lets
 * the index leave every other entity out (a scope of every type walks them all for the first page).
 */
const holderTypes = (stored: DefinitionInfo): string[] => stored.definition.entityTypes.map((t) => t.slice(ENTITY_TYPE_URN_PREFIX.length));

/** Every entity holding a value under the current definition (what a new version hides). */
export async function heldUnderKey(ctx: CatalogContext, stored: DefinitionInfo): Promise<Affected> {
  const found = await ctx.adapter.search({
    entityTypes: holderTypes(stored),
    filter: [[exists(propertyField(stored))]],
    includeRemoved: true,
    order: 'urn',
    limit: SAMPLE_SIZE,
  });
  return {
    affected: found.total,
    sample: await sampleOf(
      ctx,
      stored,
      found.hits.map((h) => h.urn),
    ),
  };
}

/**
 * Entities holding a value the new definition refuses: a value of the wrong type or of a removed
 * allowed type, a value no longer allowed, any value on an entity of a removed entity type, or more
 * than one value when the property becomes single-valued.
 */
export async function affectedByRules(
  ctx: CatalogContext,
  stored: DefinitionInfo,
  next: StructuredPropertyDefinition,
  breaking: boolean,
): Promise<Affected> {
  // Only a breaking change can invalidate a value already written.
  if (!breaking) return NONE;
  const field = propertyField(stored);
  const invalid = await invalidValues(ctx, stored, next, field);
  if (invalid === 'all') return heldUnderKey(ctx, stored);
  const groups: SearchFilter = [];
  if (invalid.length) groups.push([{ field, operator: 'EQUAL', values: invalid, negated: false }]);
  const removedTypes = stored.definition.entityTypes
    .filter((t) => !next.entityTypes.includes(t))
    .map((t) => t.slice(ENTITY_TYPE_URN_PREFIX.length));
  if (removedTypes.length)
    groups.push([{ field: { kind: 'entityType' }, operator: 'EQUAL', values: removedTypes, negated: false }, exists(field)]);
  const toSingle = stored.definition.cardinality === 'MULTIPLE' && next.cardinality === 'SINGLE';
  if (groups.length === 0 && !toSingle) return NONE;

  const byRules = groups.length
    ? await ctx.adapter.search({ entityTypes: holderTypes(stored), filter: groups, includeRemoved: true, order: 'urn', limit: SAMPLE_SIZE })
    : { total: 0, hits: [] };
  let affected = byRules.total;
  let urns = byRules.hits.map((h) => h.urn);
  if (toSingle) {
    const several = await propertyValueIndexOf(ctx.adapter, ctx.registry).findEntitiesWithSeveralPropertyValues({
      propertyUrn: stored.urn,
      definitionKey: stored.key,
      limit: SAMPLE_SIZE,
    });
    // The multi-valued entities the other rules match too, so that none is counted twice.
    const both =
      groups.length && several.total
        ? (
            await propertyValueIndexOf(ctx.adapter, ctx.registry).findEntitiesWithSeveralPropertyValues({
              propertyUrn: stored.urn,
              definitionKey: stored.key,
              filter: groups,
              limit: 0,
            })
          ).total
        : 0;
    affected += several.total - both;
    urns = [...new Set([...urns, ...several.urns])].sort().slice(0, SAMPLE_SIZE);
  }
  return { affected, sample: await sampleOf(ctx, stored, urns) };
}

/**
 * The values held under the current key that the new definition refuses, or 'all' when it refuses
 * every one (a number property becoming a text one, or the reverse). Held values come from the stored
 * allowed values when there are some (no value outside them could be written), else from a facet
 * of the property's values (its DISTINCT_VALUE_LIMIT most common ones).
 */
async function invalidValues(
  ctx: CatalogContext,
  stored: DefinitionInfo,
  next: StructuredPropertyDefinition,
  field: SearchField,
): Promise<Array<string | number> | 'all'> {
  const before = stored.definition;
  const allowedKeys = (d: StructuredPropertyDefinition) => d.allowedValues?.map((a) => formatValue(fromPropertyValue(a.value)));
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (
    before.valueType === next.valueType &&
    same(allowedKeys(before), allowedKeys(next)) &&
    same(before.typeQualifier?.allowedTypes, next.typeQualifier?.allowedTypes)
  )
    return [];
  const nextType = valueTypeNameOf(next.valueType) ?? 'string';
  if ((stored.valueType === 'number') !== (nextType === 'number')) return 'all';
  const held = before.allowedValues
    ? before.allowedValues.map((a) => fromPropertyValue(a.value))
    : await distinctValues(ctx, stored, field);
  const allowed = next.allowedValues ? new Set(allowedKeys(next)) : undefined;
  const allowedTypes = next.typeQualifier?.allowedTypes;
  return held.filter(
    (v) => typedValueProblem(nextType, allowedTypes, v) !== undefined || (allowed !== undefined && !allowed.has(formatValue(v))),
  );
}

async function distinctValues(ctx: CatalogContext, stored: DefinitionInfo, field: SearchField): Promise<Array<string | number>> {
  const [facet] = await ctx.adapter.aggregate({
    entityTypes: holderTypes(stored),
    filter: [],
    includeRemoved: true,
    facets: [field],
    maxValues: DISTINCT_VALUE_LIMIT,
  });
  return (facet?.buckets ?? []).map((b) => b.value);
}

/** The sampled entities with their values of the property under the current definition. */
async function sampleOf(ctx: CatalogContext, stored: DefinitionInfo, urns: readonly string[]): Promise<Affected['sample']> {
  if (urns.length === 0) return [];
  const entities = await ctx.adapter.readEntities(urns, [VALUES_ASPECT]);
  return entities.map((entity) => {
    const aspect = entity.aspects[VALUES_ASPECT];
    const current = keysOf(aspect)[stored.urn] === stored.key;
    const assignment = current ? assignmentsOf(aspect).find((a) => a.propertyUrn === stored.urn) : undefined;
    return { urn: entity.urn, values: assignment ? assignment.values.map((v) => ({ ...v })) : [] };
  });
}
