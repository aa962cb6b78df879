import type { JsonObject, StorageAdapter, StoredEntity } from '../../adapter/types';
import { CatalogError, type Violation } from '../../errors';
import type { ActorGrants } from './access-state';
import { parentOfField, type CompiledPolicy, type ResourceView } from './compiled-policies';
import type { Privilege } from './privileges';
import { entityTypeOf } from '../urn';

/** One refused item: what, where, and the privilege it lacks. */
export interface AccessRefusal {
  urn: string;
  privilege: Privilege;
  /** The structured property the item sets or removes, when that is what no policy covers. */
  propertyUrn?: string;
  /** The structured properties the item sets or removes, when its entity is what no policy covers. */
  properties?: readonly string[];
  path: string;
}

/**
 * Whether a policy covers the resource: the entity itself, or for a column (`schemaField`) its dataset
 * (a column is covered by its dataset's policies). `parent` is the dataset as stored.
 */
export function policyCovers(policy: CompiledPolicy, resource: ResourceView, parent: ResourceView | undefined): boolean {
  if (policy.covers(resource)) return true;
  return parent !== undefined && policy.covers(parent);
}

/** The structured properties whose values differ between two `structuredProperties` aspect values (set, changed or removed). */
export function changedProperties(before: unknown, after: unknown): string[] {
  const old = valuesByProperty(before);
  const next = valuesByProperty(after);
  const out: string[] = [];
  for (const [urn, values] of next) if (old.get(urn) !== values) out.push(urn);
  for (const urn of old.keys()) if (!next.has(urn)) out.push(urn);
  return out;
}

function valuesByProperty(aspect: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const list = (aspect as JsonObject | undefined)?.properties;
  if (!Array.isArray(list)) return out;
  for (const entry of list as JsonObject[]) {
    if (typeof entry?.propertyUrn === 'string') out.set(entry.propertyUrn, JSON.stringify(entry.values ?? null));
  }
  return out;
}

/**
 * The per-item check of a batch whose actor holds some of the privileges it needs only through policies
 * with resources. The unit of work calls `begin` once with what it read (the datasets of columns it did
 * not read are read here, once), then `check` for each planned item, on the entity as stored before
 * the write; `throwIfRefused` refuses the whole batch when one item was refused.
 */
export class ItemAccess {
  private parents = new Map<string, StoredEntity | undefined>();
  private readonly refusals: AccessRefusal[] = [];
  private readonly readsValues: boolean;

  constructor(
    private readonly adapter: StorageAdapter,
    readonly actor: string,
    private readonly grants: ActorGrants,
    /** The privileges the actor holds only per resource (the others it holds everywhere). */
    private readonly scoped: readonly Privilege[],
  ) {
    this.readsValues = grants.scoped.some((p) => p.readsValues);
  }

  /** Whether a criterion of the actor's policies reads stored values (the entities must be read to check). */
  get needsStoredValues(): boolean {
    return this.readsValues;
  }

  /** Whether items needing this privilege are checked one by one. */
  checks(privilege: Privilege | undefined): privilege is Privilege {
    return privilege !== undefined && this.scoped.includes(privilege);
  }

  /** Once per unit of work: the datasets of its columns, when a criterion reads stored values. */
  async begin(read: ReadonlyMap<string, StoredEntity>, urns: readonly string[], options: { keepRefusals?: boolean } = {}): Promise<void> {
    // A unit of work planned again (after a conflict) starts over; a caller checking chunk after chunk keeps them.
    if (!options.keepRefusals) this.refusals.length = 0;
    this.parents = new Map();
    const wanted = new Set<string>();
    for (const urn of urns) {
      const parent = parentOfField(urn);
      if (!parent) continue;
      if (read.has(parent) || !this.readsValues) this.parents.set(parent, read.get(parent));
      else wanted.add(parent);
    }
    if (!wanted.size) return;
    const found = await this.adapter.readEntities([...wanted], ['structuredProperties']);
    for (const urn of wanted) this.parents.set(urn, undefined);
    for (const entity of found) this.parents.set(entity.urn, entity);
  }

  /**
   * Checks one item: some policy granting the privilege covers its entity and, for
   * EDIT_ENTITY_PROPERTIES, each property it sets or removes. A refusal is kept for `throwIfRefused`.
   */
  check(
    item: { urn: string; entityType: string; path: string },
    privilege: Privilege,
    stored: StoredEntity | undefined,
    properties?: readonly string[],
  ): void {
    const resource: ResourceView = { urn: item.urn, entityType: item.entityType, stored };
    const parentUrn = parentOfField(item.urn);
    const parent: ResourceView | undefined = parentUrn
      ? { urn: parentUrn, entityType: entityTypeOf(parentUrn), stored: this.parents.get(parentUrn) }
      : undefined;
    const covering: CompiledPolicy[] = [];
    for (const policy of this.grants.scoped) {
      if (policy.privileges.has(privilege) && policyCovers(policy, resource, parent)) covering.push(policy);
    }
    if (!covering.length) {
      this.refusals.push({ urn: item.urn, privilege, path: item.path, ...(properties?.length ? { properties } : {}) });
      return;
    }
    if (privilege !== 'EDIT_ENTITY_PROPERTIES' || !properties) return;
    for (const propertyUrn of properties) {
      if (!covering.some((p) => p.coversProperty(propertyUrn)))
        this.refusals.push({ urn: item.urn, privilege, propertyUrn, path: item.path });
    }
  }

  /** The refusals found so far, handed over and forgotten (a caller that reports them itself). */
  takeRefusals(): AccessRefusal[] {
    return this.refusals.splice(0);
  }

  /** FORBIDDEN naming every refused item (entity, property, privilege); nothing is written. */
  throwIfRefused(): void {
    if (!this.refusals.length) return;
    throw refusedItems(this.actor, this.refusals);
  }
}

export function describeRefusal(actor: string, r: AccessRefusal): string {
  return r.propertyUrn
    ? `${actor} may not set or remove ${r.propertyUrn} on ${r.urn}: no policy grants ${r.privilege} for that property there`
    : `${actor} lacks the ${r.privilege} privilege on ${r.urn}${settingOf(r.properties)}: no policy that grants it covers that entity`;
}

/** " (to set or remove a, b and 2 more)": the properties an item refused for its entity would have changed. */
function settingOf(properties: readonly string[] | undefined): string {
  if (!properties?.length) return '';
  const named = properties.slice(0, 3).join(', ');
  return ` (to set or remove ${named}${properties.length > 3 ? ` and ${properties.length - 3} more` : ''})`;
}

function refusedItems(actor: string, refusals: readonly AccessRefusal[]): CatalogError {
  const details: Violation[] = refusals.map((r) => ({ path: r.path, message: describeRefusal(actor, r) }));
  const first = describeRefusal(actor, refusals[0]!);
  const more =
    refusals.length > 1
      ? ` (and ${refusals.length - 1} more refused item${refusals.length > 2 ? 's' : ''}; nothing was written)`
      : '; nothing was written';
  return new CatalogError('FORBIDDEN', `${first}${more}`, { reason: refusals[0]!.privilege, details });
}
