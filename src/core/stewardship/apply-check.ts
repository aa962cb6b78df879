import { CatalogError, isCatalogError, type Violation } from '../../errors';
import type { Actor } from '../access/actor';
import type { WriteItem, WritePipeline } from '../entities/write-pipeline';
import { editWriteItem } from '../properties/value-edits';
import type { StructuredPropertyService } from '../properties/service';
import { ENTITY_TYPE_URN_PREFIX, type PropertyAssignment, type StructuredPropertyView } from '../properties/types';
import type { SearchService } from '../search/service';
import type { SearchScopeInput } from '../search/input';
import type { EntityRegistry } from '../entities/registry';
import type { EntityTypeName } from '../entities/aspect-types';
import type { CheckedApply } from './apply-input';
import type { ApplyPreview, ApplySample, ApplyViolation } from './apply-types';

/** Matches shown with their values before and after. */
const SAMPLE_SIZE = 10;
/** Matches holding a value of an immutable property that are checked one by one. */
const IMMUTABLE_CHECKS = 100;

export interface ApplyDependencies {
  pipeline: WritePipeline;
  search: SearchService;
  properties: StructuredPropertyService;
  registry: EntityRegistry;
}

/**
 * What applying the edit to the matches would do, written nowhere:
 * - definition-level rules hold for every match: a property that does not exist or is soft-deleted,
 *   and each value's type, cardinality and allowed values (checked once, on the sample); the entity
 *   types among all the matches (counted by aggregation) that a property does not allow;
 * - entity-level rules (immutable values) are checked on the matches that hold a value of an immutable
 *   property (found by a filter on it), the first `IMMUTABLE_CHECKS` of them one by one, the rest counted.
 */
export async function previewApply(
  deps: ApplyDependencies,
  actor: Actor,
  checked: CheckedApply,
  refusedSome = false,
): Promise<ApplyPreview> {
  const { search, properties } = deps;
  const { scope, edit } = checked;
  const first = await search.scroll(actor, { ...scope, count: SAMPLE_SIZE });
  const sampleUrns = first.searchResults.map((r) => r.entity.urn);
  const violations = new Violations();
  const definitions = new Map<string, StructuredPropertyView | undefined>();
  for (const urn of [...edit.set.map((s) => s.propertyUrn), ...edit.remove]) definitions.set(urn, await properties.get(actor, urn));

  const immutableHolders: string[] = [];
  for (const { propertyUrn } of edit.set) {
    const view = definitions.get(propertyUrn);
    if (!view) violations.add({ propertyUrn, message: `structured property ${propertyUrn} does not exist` });
    else if (view.removed)
      violations.add({
        propertyUrn,
        message: `structured property ${propertyUrn} is soft-deleted: assigning a value is refused until it is restored`,
      });
    else await checkEntityTypes(deps, actor, scope, view, first.total, violations);
  }
  for (const [propertyUrn, view] of definitions) {
    if (!view || view.removed || !view.definition.immutable) continue;
    const holders = await search.scroll(actor, { ...withExists(scope, view.definition.qualifiedName), count: IMMUTABLE_CHECKS });
    immutableHolders.push(...holders.searchResults.map((r) => r.entity.urn));
    if (holders.total > holders.searchResults.length)
      violations.add({
        propertyUrn,
        count: holders.total,
        message: `${holders.total} matches hold a value of the immutable property ${propertyUrn}; the first ${holders.searchResults.length} were checked one by one`,
      });
  }
  // A problem every sampled entity shows is the definition's (listed once); the others are the entities' own.
  const sampled = await dryRun(deps, actor, sampleUrns, checked, refusedSome);
  const shared = new Set<string>();
  for (const [key, group] of groupBy(sampled)) {
    if (violations.has(key)) continue;
    if (sampleUrns.length > 1 && new Set(group.map((g) => g.urn)).size === sampleUrns.length) {
      shared.add(key);
      violations.add({ ...group[0]!, count: first.total });
    } else for (const v of group) violations.add(v, true);
  }
  const inSample = new Set(sampleUrns);
  const holders = [...new Set(immutableHolders)].filter((u) => !inSample.has(u));
  for (const v of await dryRun(deps, actor, holders, checked, refusedSome)) if (!shared.has(keyOf(v))) violations.add(v, true);
  const sample: ApplySample[] = [];
  for (const urn of sampleUrns) {
    const before = await properties.getValues(actor, urn);
    sample.push({ urn, before, after: afterEdit(before, checked) });
  }
  return { matched: first.total, sample, violations: violations.list };
}

/** The visible values after the edit: removed and replaced properties go, the set ones come last. */
function afterEdit(before: readonly PropertyAssignment[], { edit }: CheckedApply): PropertyAssignment[] {
  const touched = new Set([...edit.remove, ...edit.set.map((s) => s.propertyUrn)]);
  return [
    ...before.filter((a) => !touched.has(a.propertyUrn)).map((a) => ({ ...a, values: a.values.map((v) => ({ ...v })) })),
    ...edit.set.map((s) => ({ propertyUrn: s.propertyUrn, values: s.values.map((v) => ({ ...v })) })),
  ];
}

/** The entity types among the matches that the property does not allow, each with a count and one example. */
async function checkEntityTypes(
  deps: ApplyDependencies,
  actor: Actor,
  scope: SearchScopeInput,
  view: StructuredPropertyView,
  matched: number,
  violations: Violations,
): Promise<void> {
  if (matched === 0) return;
  const { facets } = await deps.search.aggregate(actor, { ...scope, facets: ['_entityType'], searchFlags: { maxAggValues: 1000 } });
  const allowed = view.definition.entityTypes;
  const names = allowed.map((t) => t.slice(ENTITY_TYPE_URN_PREFIX.length)).join(', ');
  for (const entry of facets.find((f) => f.field === '_entityType')?.aggregations ?? []) {
    const entityType = deps.registry.entityNameFromGraphqlType(entry.value) ?? entry.value;
    if (entry.count === 0 || allowed.includes(`${ENTITY_TYPE_URN_PREFIX}${entityType}`)) continue;
    const example = await deps.search.scroll(actor, { ...scope, types: [entityType as EntityTypeName], count: 1 });
    violations.add({
      propertyUrn: view.urn,
      entityType,
      count: entry.count,
      ...(example.searchResults[0] ? { urn: example.searchResults[0].entity.urn } : {}),
      message: `${view.urn} cannot be set on ${entityType} entities; its entity types are ${names}`,
    });
  }
}

/** The scope narrowed to matches that hold a value of the property (an EXISTS filter in every AND group). */
function withExists(scope: SearchScopeInput, qualifiedName: string): SearchScopeInput {
  const filter = { field: `structuredProperties.${qualifiedName}`, condition: 'EXISTS' as const };
  const groups = scope.orFilters?.length ? scope.orFilters : [{ and: [] }];
  return { ...scope, orFilters: groups.map((g) => ({ and: [...(g.and ?? []), filter] })) };
}

/** The item of one entity of a chunk: violations are reported under `/entities/<index>`. */
export function applyItem(urn: string, index: number, checked: CheckedApply): WriteItem {
  return { ...editWriteItem(urn, checked.edit, `/entities/${index}`), onlyIfPresent: true } as WriteItem;
}

/** The entity index a violation path points at (`/entities/<index>/...`). */
export function entityIndexOf(path: string): number | undefined {
  const m = /^\/entities\/(\d+)(?:\/|$)/.exec(path);
  return m ? Number(m[1]) : undefined;
}

/** The property a violation path points at (`/entities/<index>/properties/<urn>/...`). */
function propertyOf(path: string): string | undefined {
  const m = /^\/entities\/\d+\/properties\/([^/]+)/.exec(path);
  return m ? m[1]!.replace(/~1/g, '/').replace(/~0/g, '~') : undefined;
}

/** Plans the edit of these entities under a real read and answers what they would refuse. */
async function dryRun(
  deps: ApplyDependencies,
  actor: Actor,
  urns: readonly string[],
  checked: CheckedApply,
  /** Some matches are refused to the actor (counted already): their FORBIDDEN is not a problem of the change. */
  refusedSome = false,
): Promise<ApplyViolation[]> {
  const found: ApplyViolation[] = [];
  // One entity at a time: a problem thrown while planning one (rather than collected) must not hide the others.
  for (const urn of urns) {
    try {
      await deps.pipeline.write(actor, [applyItem(urn, 0, checked)], { message: 'the change is refused', dryRun: true });
    } catch (error) {
      if (refusedSome && isCatalogError(error) && error.code === 'FORBIDDEN') continue;
      if (!isCatalogError(error) || error.code !== 'INVALID_INPUT') throw error;
      const details: readonly Violation[] = error.details.length ? error.details : [{ path: '/entities/0', message: error.message }];
      for (const v of details) {
        const propertyUrn =
          propertyOf(v.path) ?? [...checked.edit.set.map((s) => s.propertyUrn), ...checked.edit.remove].find((p) => v.message.includes(p));
        found.push({ urn, ...(propertyUrn ? { propertyUrn } : {}), message: v.message });
      }
    }
  }
  return found;
}

const keyOf = (v: ApplyViolation): string => `${v.propertyUrn ?? ''}\n${v.message}`;

function groupBy(list: readonly ApplyViolation[]): Map<string, ApplyViolation[]> {
  const groups = new Map<string, ApplyViolation[]>();
  for (const v of list) {
    const group = groups.get(keyOf(v));
    if (group) group.push(v);
    else groups.set(keyOf(v), [v]);
  }
  return groups;
}

/**
 * The violations found, without repeats: a problem of the definition (the same message for every entity)
 * is listed once, with the first entity that showed it; problems of entities each with their entity.
 */
class Violations {
  readonly list: ApplyViolation[] = [];
  private readonly seen = new Map<string, ApplyViolation>();

  /** `perEntity`: the problem is the entity's own (listed for each entity), not the definition's. */
  add(violation: ApplyViolation, perEntity = false): void {
    const key = perEntity ? `${keyOf(violation)}\n${violation.urn ?? ''}` : keyOf(violation);
    if (this.seen.has(key)) return;
    this.seen.set(key, violation);
    this.list.push(violation);
  }

  /** Whether a problem of the definition with this key is listed already. */
  has(key: string): boolean {
    return this.seen.has(key);
  }
}

/** INVALID_INPUT for a real run that the dry run found problems with, each under the path of its property. */
export function refusal(violations: readonly ApplyViolation[], checked: CheckedApply): CatalogError {
  const pathOf = (propertyUrn: string | undefined): string => {
    const set = checked.edit.set.findIndex((s) => s.propertyUrn === propertyUrn);
    if (set >= 0) return `/set/${set}`;
    const remove = checked.edit.remove.indexOf(propertyUrn ?? '');
    return remove >= 0 ? `/remove/${remove}` : '/';
  };
  const details: Violation[] = violations.map((v) => ({
    path: pathOf(v.propertyUrn),
    message: v.urn ? `${v.urn}: ${v.message}` : v.message,
  }));
  return new CatalogError(
    'INVALID_INPUT',
    `the change is refused: ${details[0]!.message}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}`,
    {
      details,
    },
  );
}
