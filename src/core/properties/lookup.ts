import type { AuditStamp, JsonObject, StorageAdapter, StoredAspect, StoredEntity } from '../../adapter/types';
import { definitionKeyOf, incarnationOf } from './definition-key';
import { definitionFromJson } from './definition-shapes';
import { valueTypeNameOf } from './definition-rules';
import { DEFINITION_ASPECT, VALUES_ASPECT, type PropertyAssignment, type StructuredPropertyDefinition, type ValueTypeName } from './types';
import { PROPERTY_KEYS_METADATA } from '../entities/search-document';
import { SETTINGS_ASPECT, settingsOf, type StructuredPropertySettings } from './settings';

/** A stored definition with what readers and writers of values need to know about it. */
export interface DefinitionInfo {
  urn: string;
  definition: StructuredPropertyDefinition;
  valueType: ValueTypeName;
  removed: boolean;
  incarnation: string;
  key: string;
  /** The settings aspect, when it was read and the property has one. */
  settings?: StructuredPropertySettings;
}

export function definitionInfoOf(entity: StoredEntity | undefined): DefinitionInfo | undefined {
  const aspect = entity?.aspects[DEFINITION_ASPECT];
  const definition = definitionFromJson(aspect?.value);
  const key = definitionKeyOf(aspect);
  if (!entity || !aspect || !definition || key === undefined) return undefined;
  return {
    urn: entity.urn,
    definition,
    valueType: valueTypeNameOf(definition.valueType) ?? 'string',
    removed: entity.aspects.status?.value.removed === true,
    incarnation: incarnationOf(aspect),
    key,
    ...(entity.aspects[SETTINGS_ASPECT] ? { settings: settingsOf(entity)! } : {}),
  };
}

/** The current definitions of these properties; hard-deleted or unknown ones are absent from the map. */
export async function loadDefinitions(adapter: StorageAdapter, urns: Iterable<string>): Promise<Map<string, DefinitionInfo>> {
  const list = [...new Set(urns)];
  const out = new Map<string, DefinitionInfo>();
  if (list.length === 0) return out;
  for (const entity of await adapter.readEntities(list, [DEFINITION_ASPECT, 'status'])) {
    const info = definitionInfoOf(entity);
    if (info) out.set(entity.urn, info);
  }
  return out;
}

/** Entries kept at most; past it the cache starts over (a catalog has far fewer properties in use). */
const CACHE_LIMIT = 10_000;

/**
 * Definitions for readers (search filters, the visibility of values), reused while the adapter's
 * change token stays the same, that is while no entity changed in any process. Without a change token
 * every call reads. Writers read through `loadDefinitions` inside their unit of work instead.
 */
export class DefinitionCache {
  private token: string | undefined;
  /** URN → definition, or null when there is none (unknown or hard-deleted). */
  private readonly known = new Map<string, DefinitionInfo | null>();

  constructor(private readonly adapter: StorageAdapter) {}

  async load(urns: Iterable<string>): Promise<Map<string, DefinitionInfo>> {
    const token = this.adapter.capabilities.changeToken ? await this.adapter.changeToken!() : undefined;
    if (token === undefined) return loadDefinitions(this.adapter, urns);
    return this.loadAt(token, urns);
  }

  /** One definition (what a search filter needs on every request): a map lookup while nothing changed. */
  async one(urn: string): Promise<DefinitionInfo | undefined> {
    const token = this.adapter.capabilities.changeToken ? await this.adapter.changeToken!() : undefined;
    if (token === undefined) return (await loadDefinitions(this.adapter, [urn])).get(urn);
    this.moveTo(token);
    const known = this.known.get(urn);
    if (known !== undefined) return known ?? undefined;
    return (await this.loadAt(token, [urn])).get(urn);
  }

  /**
   * What the cache holds for a URN, without asking for the change token: the definition, null when
   * known to be absent, undefined when not cached. Valid as of `token`; a caller that uses it must
   * check that token against the state it then reads (see SearchResponse.changeToken).
   */
  peek(urn: string): DefinitionInfo | null | undefined {
    return this.token === undefined ? undefined : this.known.get(urn);
  }

  /** The change token the cached definitions were read under; undefined before the first read. */
  get currentToken(): string | undefined {
    return this.token;
  }

  private async loadAt(token: string, urns: Iterable<string>): Promise<Map<string, DefinitionInfo>> {
    this.moveTo(token);
    const wanted = [...new Set(urns)];
    const missing = wanted.filter((urn) => !this.known.has(urn));
    const loaded = missing.length ? await loadDefinitions(this.adapter, missing) : undefined;
    // Kept only if no other call moved to a newer token meanwhile: what was read then may predate it.
    if (loaded && this.token === token) for (const urn of missing) this.known.set(urn, loaded.get(urn) ?? null);
    const out = new Map<string, DefinitionInfo>();
    for (const urn of wanted) {
      const info = loaded?.get(urn) ?? this.known.get(urn);
      if (info) out.set(urn, info);
    }
    return out;
  }

  /** Forgets what was read under another token, or everything when the cache is full. */
  private moveTo(token: string): void {
    if (token !== this.token || this.known.size > CACHE_LIMIT) {
      this.known.clear();
      this.token = token;
    }
  }
}

/** Property URN → definition key, as kept beside the values aspect. */
export function keysOf(aspect: Pick<StoredAspect, 'systemMetadata'> | undefined): Record<string, string> {
  const raw = (aspect?.systemMetadata?.[PROPERTY_KEYS_METADATA] ?? {}) as JsonObject;
  const out: Record<string, string> = {};
  for (const [urn, key] of Object.entries(raw)) if (typeof key === 'string') out[urn] = key;
  return out;
}

/** The assignments as stored: what the writer sent, read back as it was written. */
export function assignmentsOf(aspect: Pick<StoredAspect, 'value'> | undefined): PropertyAssignment[] {
  const list = aspect?.value.properties;
  return Array.isArray(list) ? (list as unknown as PropertyAssignment[]) : [];
}

/**
 * Who set each property's values and when, kept as the catalog's bookkeeping beside the aspect (never
 * in the value, which reads back as the writer sent it): property URN → `{ created, lastModified }`.
 */
export const PROPERTY_STAMPS_METADATA = 'propertyStamps';

export type AssignmentStamps = Record<string, { created: AuditStamp; lastModified: AuditStamp }>;

export function stampsOf(aspect: Pick<StoredAspect, 'systemMetadata'> | undefined): AssignmentStamps {
  return (aspect?.systemMetadata?.[PROPERTY_STAMPS_METADATA] ?? {}) as unknown as AssignmentStamps;
}

/** The assignments with who set them and when: the writer's stamps when it sent them, the catalog's otherwise. */
export function stampedAssignmentsOf(aspect: Pick<StoredAspect, 'value' | 'systemMetadata'> | undefined): PropertyAssignment[] {
  const stamps = stampsOf(aspect);
  return assignmentsOf(aspect).map((a) => {
    const kept = stamps[a.propertyUrn];
    if (!kept || (a.created && a.lastModified)) return a;
    return { ...a, created: a.created ?? kept.created, lastModified: a.lastModified ?? kept.lastModified };
  });
}

export type AssignmentState = 'visible' | 'softDeleted' | 'stale';

/**
 * Visible: the definition exists, is not soft-deleted, and the values were written under its current
 * key. Soft-deleted: same key, property soft-deleted (kept, hidden, back on restore). Stale: anything
 * else (hard-deleted definition, another incarnation, a superseded version) — hidden and due for clean-up.
 */
export function assignmentState(info: DefinitionInfo | undefined, key: string | undefined): AssignmentState {
  if (!info || key !== info.key) return 'stale';
  return info.removed ? 'softDeleted' : 'visible';
}

/**
 * Whether writing the stored values aspect again, value for value, keeps it as it is (what
 * `composeValues` would find): every assignment visible under its definition's current key, stamped by
 * the catalog (no stamps of the writer's in the value), and the bookkeeping naming exactly those
 * properties. Anything else (a soft-deleted or superseded property, a definition re-created) is planned.
 */
export function keepsStoredValues(
  aspect: Pick<StoredAspect, 'value' | 'systemMetadata'>,
  definitions: ReadonlyMap<string, DefinitionInfo>,
): boolean {
  const keys = (aspect.systemMetadata?.[PROPERTY_KEYS_METADATA] ?? undefined) as Record<string, unknown> | undefined;
  const stamps = stampsOf(aspect);
  if (!keys) return false;
  const assignments = assignmentsOf(aspect);
  let named = 0;
  for (const urn in keys) if (Object.hasOwn(keys, urn)) named++;
  let stamped = 0;
  for (const urn in stamps) if (Object.hasOwn(stamps, urn)) stamped++;
  if (named !== assignments.length || stamped !== assignments.length) return false;
  for (const a of assignments) {
    const key = keys[a.propertyUrn];
    if (typeof key !== 'string' || assignmentState(definitions.get(a.propertyUrn), key) !== 'visible') return false;
    if (!stamps[a.propertyUrn] || a.created !== undefined || a.lastModified !== undefined) return false;
  }
  return true;
}

/** Property URNs named by the values aspects of these entities. */
export function propertyUrnsOf(entities: Iterable<StoredEntity>): Set<string> {
  const urns = new Set<string>();
  for (const entity of entities) for (const a of assignmentsOf(entity.aspects[VALUES_ASPECT])) urns.add(a.propertyUrn);
  return urns;
}
