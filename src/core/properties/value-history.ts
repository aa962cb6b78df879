import type { Actor } from '../access/actor';
import type { AuditStamp, StoredAspect } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError } from '../../errors';
import { parseUrn } from '../urn';
import { stampedAssignmentsOf as assignmentsOf, keysOf } from './lookup';
import { VALUES_ASPECT, type PropertyValue } from './types';

/** One value set of one property on one entity, as it was from `aspectVersion` on. */
export interface PropertyValueChange {
  propertyUrn: string;
  /** The values from then on; empty when the property was removed from the entity. */
  values: PropertyValue[];
  /** Who set them and when. */
  setBy: AuditStamp;
  /** The `version` of the definition they were written under (null when the definition has none or it is unknown). */
  definitionVersion: string | null;
  /** The `structuredProperties` aspect version that carried the change. */
  aspectVersion: number;
  /** Whether these are the values the entity has now. */
  current: boolean;
}

/** How many kept versions of the aspect are looked at (the newest). */
const MAX_VERSIONS = 1000;

/**
 * Derived from the kept versions of the `structuredProperties` aspect (docs/changes.md): each value a
 * property had, newest first, one entry per change (a version that left a property as it was adds none).
 * Needs what reading the entity needs; values of definitions deleted since are included.
 */
export async function propertyValueHistory(
  ctx: CatalogContext,
  actor: Actor,
  entityUrn: string,
  propertyUrn?: string,
): Promise<PropertyValueChange[]> {
  await ctx.authenticate(actor);
  parseUrn(entityUrn);
  if (propertyUrn !== undefined && (typeof propertyUrn !== 'string' || !propertyUrn.startsWith('urn:li:structuredProperty:'))) {
    throw new CatalogError(
      'INVALID_INPUT',
      `propertyUrn must be a structured property URN (urn:li:structuredProperty:...), got ${JSON.stringify(propertyUrn)}`,
    );
  }
  // Token and policy records carry no values: the entity as stored is what a reader may see.
  const [raw] = await ctx.adapter.readEntities([entityUrn], [VALUES_ASPECT]);
  if (!raw) return [];
  const current = raw?.aspects[VALUES_ASPECT];
  const kept = ctx.adapter.readAspectVersions
    ? await ctx.adapter.readAspectVersions({
        urn: entityUrn,
        aspectName: VALUES_ASPECT,
        ...(current ? { beforeVersion: current.version } : {}),
        limit: MAX_VERSIONS,
      })
    : [];
  const versions: StoredAspect[] = [...(current ? [current] : []), ...kept]; // newest first
  const out: PropertyValueChange[] = [];
  for (let i = 0; i < versions.length; i++) {
    const version = versions[i]!;
    const older = versions[i + 1];
    const now = new Map(assignmentsOf(version).map((a) => [a.propertyUrn, a] as const));
    const before = new Map((older ? assignmentsOf(older) : []).map((a) => [a.propertyUrn, a] as const));
    const keys = keysOf(version);
    const urns = new Set([...now.keys(), ...(older ? before.keys() : [])]);
    for (const urn of [...urns].sort()) {
      if (propertyUrn !== undefined && urn !== propertyUrn) continue;
      const a = now.get(urn);
      const b = before.get(urn);
      if (a && b && JSON.stringify(a.values) === JSON.stringify(b.values)) continue;
      if (!a && !b) continue;
      const key = keys[urn] ?? keysOf(older)[urn];
      const colon = key?.indexOf(':') ?? -1;
      const definitionVersion = key !== undefined && colon >= 0 && key.slice(colon + 1) !== '' ? key.slice(colon + 1) : null;
      out.push({
        propertyUrn: urn,
        values: a ? a.values : [],
        setBy: a?.lastModified ?? version.lastModified,
        definitionVersion,
        aspectVersion: version.version,
        current: i === 0 && current !== undefined,
      });
    }
  }
  return out;
}
