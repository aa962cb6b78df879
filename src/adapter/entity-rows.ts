import type { JsonObject, StoredAspect, StoredEntity } from './types';

/**
 * For SQL adapters: one row of `entities LEFT JOIN aspects` (aspect columns null when the entity has
 * none of the aspects asked for). Times may arrive as numbers or, from drivers that return BIGINT as
 * text, as strings.
 */
export interface EntityAspectRow {
  urn: string;
  entity_type: string;
  version: number;
  name: string | null;
  value: string | null;
  aspect_version: number | null;
  created_time: number | string | null;
  created_actor: string | null;
  modified_time: number | string | null;
  modified_actor: string | null;
  system_metadata: string | null;
}

function toAspect(row: EntityAspectRow): StoredAspect {
  return {
    name: row.name!,
    value: JSON.parse(row.value!) as JsonObject,
    version: row.aspect_version!,
    created: { time: Number(row.created_time), actor: row.created_actor! },
    lastModified: { time: Number(row.modified_time), actor: row.modified_actor! },
    ...(row.system_metadata ? { systemMetadata: JSON.parse(row.system_metadata) as JsonObject } : {}),
  };
}

/**
 * Folds joined rows into entities and returns them in the order of `urns` (each once, unknown ones
 * left out), as `StorageAdapter.readEntities` promises.
 */
export function entitiesFromRows(urns: readonly string[], rows: readonly EntityAspectRow[]): StoredEntity[] {
  const byUrn = new Map<string, StoredEntity>();
  for (const row of rows) {
    let entity = byUrn.get(row.urn);
    if (!entity) {
      entity = { urn: row.urn, entityType: row.entity_type, version: row.version, aspects: {} };
      byUrn.set(row.urn, entity);
    }
    if (row.name !== null) entity.aspects[row.name] = toAspect(row);
  }
  const out: StoredEntity[] = [];
  for (const urn of new Set(urns)) {
    const entity = byUrn.get(urn);
    if (entity) out.push(entity);
  }
  return out;
}
