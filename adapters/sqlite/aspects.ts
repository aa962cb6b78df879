import type { AspectPut, AuditStamp, JsonObject, StoredAspect, StoredEntity } from '../../src/adapter/types';
import { dictionaryOf, type Dictionary } from './dictionary';
import { internMetadata, pack, unpack, type PackContext } from './packing';
import type { SqliteHandle } from './statements';

/**
 * Aspect rows of the compact layout (migration 5, docs/adapters.md): a rowid table, so that a row of a
 * few kilobytes stays on its b-tree page instead of spilling into an overflow page of its own; the
 * name and the actors as dictionary ids; the value and system metadata packed (packing.ts) relative
 * to the row's own stamps. Kept versions (aspect_versions) have the same columns.
 */
export interface AspectRow {
  name_id: number;
  version: number;
  value: string;
  /** NULL when the aspect was created by its last write (the created stamp is the last-modified one). */
  created_time: number | null;
  created_actor: number | null;
  modified_time: number;
  modified_actor: number;
  system_metadata: string | null;
}

export function rowContext(
  row: Pick<AspectRow, 'created_time' | 'created_actor' | 'modified_time' | 'modified_actor'>,
  d: Dictionary,
): PackContext {
  const modified = { time: row.modified_time, actor: d.textOf(row.modified_actor) };
  return {
    created:
      row.created_time === null || row.created_actor === null
        ? { ...modified }
        : { time: row.created_time, actor: d.textOf(row.created_actor) },
    modified,
  };
}

export function toStoredAspect(row: AspectRow, d: Dictionary): StoredAspect {
  const ctx = rowContext(row, d);
  return {
    name: d.textOf(row.name_id),
    value: unpack(row.value, ctx, d),
    version: row.version,
    created: ctx.created!,
    lastModified: ctx.modified!,
    ...(row.system_metadata !== null ? { systemMetadata: unpack(row.system_metadata, ctx, d) } : {}),
  };
}

/** The row's columns for an aspect (the dictionary ids added inside the caller's write transaction). */
export function aspectColumns(
  d: Dictionary,
  a: { name: string; value: JsonObject; version: number; created: AuditStamp; lastModified: AuditStamp; systemMetadata?: JsonObject },
  /** How the system metadata is packed (an initial load packs each distinct document once). */
  packMetadata: (metadata: JsonObject, ctx: Required<PackContext>) => string = (metadata, ctx) => pack(metadata, ctx, d, internMetadata),
): AspectRow {
  const ctx: Required<PackContext> = { modified: a.lastModified, created: a.created };
  const sameStamps = a.created.time === a.lastModified.time && a.created.actor === a.lastModified.actor;
  return {
    name_id: d.idOf(a.name),
    version: a.version,
    value: pack(a.value, ctx, d),
    created_time: sameStamps ? null : a.created.time,
    created_actor: sameStamps ? null : d.idOf(a.created.actor),
    modified_time: a.lastModified.time,
    modified_actor: d.idOf(a.lastModified.actor),
    system_metadata: a.systemMetadata ? packMetadata(a.systemMetadata, ctx) : null,
  };
}

/** The columns of an aspect row after its entity's, in the order of `aspectRowValues`. */
export const ASPECT_ROW_COLUMNS = 'name_id, version, created_time, created_actor, modified_time, modified_actor, value, system_metadata';

/**
 * A row's values in the order of ASPECT_ROW_COLUMNS, for positional parameters: better-sqlite3 looks a
 * named parameter up by its name on every run (about 1 µs more per row of nine).
 */
export function aspectRowValues(row: AspectRow): unknown[] {
  return [
    row.name_id,
    row.version,
    row.created_time,
    row.created_actor,
    row.modified_time,
    row.modified_actor,
    row.value,
    row.system_metadata,
  ];
}

/** Inside the commit transaction: inserts or replaces one aspect row. */
export function putAspect(h: SqliteHandle, entityId: number, a: AspectPut): void {
  h.stmt(
    `INSERT INTO aspects (entity_id, ${ASPECT_ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (entity_id, name_id) DO UPDATE SET version = excluded.version, created_time = excluded.created_time,
       created_actor = excluded.created_actor, modified_time = excluded.modified_time, modified_actor = excluded.modified_actor,
       value = excluded.value, system_metadata = excluded.system_metadata`,
  ).run(entityId, ...aspectRowValues(aspectColumns(dictionaryOf(h), a)));
}

const ASPECT_COLUMNS =
  'a.name_id, a.version, a.value, a.created_time, a.created_actor, a.modified_time, a.modified_actor, a.system_metadata';

interface JoinedRow extends AspectRow {
  id: number;
  urn: string;
  entity_type: string;
  entity_version: number;
}

/**
 * Entities with their aspects (all, or those named), in the order of `urns`, each once. The indexes are
 * named (INDEXED BY): statistics taken while the file was nearly empty must not turn this into a scan of
 * `aspects` per entity read (docs/operations.md).
 */
export function readEntities(h: SqliteHandle, urns: readonly string[], aspectNames?: readonly string[]): StoredEntity[] {
  if (urns.length === 0) return [];
  const d = dictionaryOf(h);
  let nameFilter = '';
  const params: Record<string, unknown> = {};
  if (aspectNames) {
    const ids = aspectNames.map((n) => d.find(n)).filter((id): id is number => id !== undefined);
    nameFilter = 'AND a.name_id IN (SELECT value FROM json_each(@names))';
    params.names = JSON.stringify(ids);
  }
  const single = urns.length === 1;
  params.urns = single ? urns[0] : JSON.stringify(urns);
  const where = single ? 'e.urn = @urns' : 'e.urn IN (SELECT value FROM json_each(@urns))';
  const rows = h
    .stmt(
      `SELECT e.entity_id AS id, e.urn, e.entity_type, e.version AS entity_version, ${ASPECT_COLUMNS}
       FROM entities e INDEXED BY entities_by_urn LEFT JOIN aspects a INDEXED BY aspects_by_entity ON a.entity_id = e.entity_id ${nameFilter}
       WHERE ${where}`,
    )
    .all(params) as JoinedRow[];
  const byUrn = new Map<string, StoredEntity>();
  for (const row of rows) {
    let entity = byUrn.get(row.urn);
    if (!entity) {
      entity = { urn: row.urn, entityType: row.entity_type, version: row.entity_version, aspects: {} };
      byUrn.set(row.urn, entity);
    }
    if (row.name_id !== null) {
      const aspect = toStoredAspect(row, d);
      entity.aspects[aspect.name] = aspect;
    }
  }
  const out: StoredEntity[] = [];
  for (const urn of single ? urns : new Set(urns)) {
    const entity = byUrn.get(urn);
    if (entity) out.push(entity);
  }
  return out;
}
