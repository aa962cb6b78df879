import type { Database } from 'better-sqlite3';
import type {
  AspectPut,
  AspectVersionPut,
  ChangeEvent,
  ChangePage,
  ChangeQuery,
  JsonObject,
  NewChangeEvent,
  StoredAspect,
} from '../../src/adapter/types';
import { ASPECT_ROW_COLUMNS, aspectColumns, aspectRowValues, rowContext, toStoredAspect, type AspectRow } from './aspects';
import { dictionaryOf, type Dictionary } from './dictionary';
import { internMetadata, pack, unpack, type PackContext } from './packing';
import type { SqliteHandle } from './statements';

/**
 * Change feed and kept aspect versions of the SQLite adapter (docs/changes.md). Both tables are written
 * inside the commit transaction (`BEGIN IMMEDIATE` serializes writers on the file, so the rowid of
 * `change_events` follows commit order, also across processes). Ids are never reused: retention never
 * removes the newest event, so the next rowid is always above every id ever given (no AUTOINCREMENT,
 * which would cost a write of `sqlite_sequence` in every commit).
 */
/** Idempotent: a file whose version number was set back re-runs it harmlessly. */
export function changesMigration(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS change_events (
      id INTEGER PRIMARY KEY,
      entity_urn TEXT NOT NULL,
      entity_type TEXT NOT NULL,
      aspect_name TEXT NOT NULL,
      change_type TEXT NOT NULL,
      aspect TEXT,
      previous_aspect TEXT,
      created_time INTEGER NOT NULL,
      created_actor TEXT NOT NULL,
      system_metadata TEXT
    );
    CREATE TABLE IF NOT EXISTS aspect_versions (
      urn TEXT NOT NULL,
      name TEXT NOT NULL,
      version INTEGER NOT NULL,
      value TEXT NOT NULL,
      created_time INTEGER NOT NULL,
      created_actor TEXT NOT NULL,
      modified_time INTEGER NOT NULL,
      modified_actor TEXT NOT NULL,
      system_metadata TEXT,
      PRIMARY KEY (urn, name, version)
    ) WITHOUT ROWID;
  `);
}

// ---------------------------------------------------------------------------------------------
// The compact layout (migration 5, docs/adapters.md). An event names its entity by id while the entity
// exists (its URN is written into the event when the entity is deleted) and its type, aspect and actor
// by dictionary id. The value of an UPSERT event is the aspect row it wrote, not a copy (flag
// ASPECT_IN_ROW; likewise its system metadata, METADATA_IN_ROW). When a write replaces that row, its
// own event holds the replaced value as its previous value: the older event then takes its value from
// there (its successor, found by the index: same entity and aspect, the next version), so a replaced
// value is stored once (schema version 9; before, it was also copied into the older event). A packed
// copy is made only when the row goes without such a successor (a deletion, a write without an event)
// or the event also takes its system metadata from the row. Anything else is stored packed in the event.
// ---------------------------------------------------------------------------------------------

/**
 * The event's value is that of its aspect row (entity_id, name_id) while the row holds `version`, then
 * the previous value of its successor (the UPSERT of the same aspect with version `version + 1`).
 */
const ASPECT_IN_ROW = 1;
/** The event's system metadata is that of its aspect row. */
const METADATA_IN_ROW = 2;
const CHANGE_TYPES: ReadonlyArray<NewChangeEvent['changeType']> = ['UPSERT', 'DELETE', 'TRUNCATE'];

/** Values an event holds itself are packed relative to its own stamp. */
function eventContext(time: number, actor: string): PackContext {
  return { modified: { time, actor } };
}

/** The puts of a batch, to recognise the events that carry their values. */
export type PutIndex = Map<string, { entityId: number; put: AspectPut }>;

export function putKey(urn: string, aspectName: string): string {
  return `${aspectName}\n${urn}`;
}

/**
 * The batch's UPSERT events with a previous value, by putKey: one whose value is (the same object as) the
 * value its write puts is the writer's own, and its previous value is the row that write replaces.
 */
export function successorEvents(events: readonly NewChangeEvent[] | undefined): Map<string, NewChangeEvent> | undefined {
  let out: Map<string, NewChangeEvent> | undefined;
  for (const e of events ?? []) {
    if (e.changeType === 'UPSERT' && e.previousAspectValue !== null) (out ??= new Map()).set(putKey(e.entityUrn, e.aspectName), e);
  }
  return out;
}

/** Inside the commit transaction: after the entity writes. */
export function writeChanges(
  h: SqliteHandle,
  events: readonly NewChangeEvent[] | undefined,
  versions: readonly AspectVersionPut[] | undefined,
  puts: PutIndex,
): void {
  const d = dictionaryOf(h);
  const entityId = (urn: string): number | undefined =>
    h.stmt('SELECT entity_id FROM entities INDEXED BY entities_by_urn WHERE urn = ?').pluck().get(urn) as number | undefined;
  if (versions?.length) {
    const put = h.stmt(`INSERT OR REPLACE INTO aspect_versions (entity_id, ${ASPECT_ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const { urn, aspect } of versions) {
      // A replaced aspect's entity is that of the put replacing it (no lookup); a deleted one's is looked up.
      const id = puts.get(putKey(urn, aspect.name))?.entityId ?? entityId(urn);
      // Versions of an entity this batch deleted go with it.
      if (id !== undefined) put.run(id, ...aspectRowValues(aspectColumns(d, aspect)));
    }
  }
  if (events?.length) {
    const insert = h.stmt(
      `INSERT INTO change_events (entity_id, entity_urn, type_id, name_id, change_type, version, aspect, previous_aspect, created_time, actor_id, system_metadata, flags)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const e of events) {
      const ctx = eventContext(e.created.time, e.created.actor);
      const written = e.changeType === 'UPSERT' ? puts.get(putKey(e.entityUrn, e.aspectName)) : undefined;
      const inRow = written !== undefined && written.put.value === e.aspect;
      const metadataInRow = inRow && e.systemMetadata !== undefined && written.put.systemMetadata === e.systemMetadata;
      const id = written?.entityId ?? entityId(e.entityUrn);
      insert.run(
        id ?? null,
        id === undefined ? e.entityUrn : null,
        d.idOf(e.entityType),
        d.idOf(e.aspectName),
        CHANGE_TYPES.indexOf(e.changeType),
        inRow ? written.put.version : null,
        inRow || e.aspect === null ? null : pack(e.aspect, ctx, d),
        e.previousAspectValue === null ? null : pack(e.previousAspectValue, ctx, d),
        e.created.time,
        d.idOf(e.created.actor),
        metadataInRow || !e.systemMetadata ? null : pack(e.systemMetadata, ctx, d, internMetadata),
        (inRow ? ASPECT_IN_ROW : 0) | (metadataInRow ? METADATA_IN_ROW : 0),
      );
    }
  }
}

interface ReferringEvent {
  id: number;
  flags: number;
  created_time: number;
  actor_id: number;
}

/**
 * Inside the commit transaction, before an aspect row is replaced or deleted: the event that takes its
 * value from it gets a packed copy of it, unless `successorCarriesIt` (the batch writes the event that
 * replaces the row, with the row's value as its previous value: an event that takes only its value from
 * the row reads it there from then on). `rowVersion`, when known, is the version the row holds.
 */
export function detachAspectEvents(
  h: SqliteHandle,
  entityId: number,
  nameId: number,
  successorCarriesIt: boolean,
  rowVersion?: number,
): void {
  const version =
    rowVersion ??
    (h
      .stmt('SELECT version FROM aspects INDEXED BY aspects_by_entity WHERE entity_id = ? AND name_id = ?')
      .pluck()
      .get(entityId, nameId) as number | undefined);
  if (version === undefined) return;
  // Only the event that wrote the row's version can refer to it: the newest with that version (an older one,
  // from before the aspect was deleted and written again, has a successor). One index seek.
  const ref = h
    .stmt(
      'SELECT id, flags, created_time, actor_id FROM change_events INDEXED BY change_events_by_entity WHERE entity_id = ? AND name_id = ? AND version = ? AND flags & 1 = 1 ORDER BY id DESC LIMIT 1',
    )
    .get(entityId, nameId, version) as ReferringEvent | undefined;
  if (!ref || (successorCarriesIt && !(ref.flags & METADATA_IN_ROW))) return;
  // Rows written while events were off have no event: the newest with the version then reads from its successor.
  if (successorOf(h, { id: ref.id, entityId, nameId, version })) return;
  const d = dictionaryOf(h);
  const row = h
    .stmt(
      'SELECT name_id, version, value, created_time, created_actor, modified_time, modified_actor, system_metadata FROM aspects INDEXED BY aspects_by_entity WHERE entity_id = ? AND name_id = ?',
    )
    .get(entityId, nameId) as AspectRow | undefined;
  if (!row || row.version !== version) throw new Error('internal: a change event refers to an aspect row that is gone');
  const aspect = toStoredAspect(row, d);
  const ctx = eventContext(ref.created_time, d.textOf(ref.actor_id));
  const metadata = ref.flags & METADATA_IN_ROW && aspect.systemMetadata ? pack(aspect.systemMetadata, ctx, d, internMetadata) : null;
  h.stmt(
    'UPDATE change_events SET aspect = ?, system_metadata = CASE WHEN flags & 2 = 2 THEN ? ELSE system_metadata END, flags = 0 WHERE id = ?',
  ).run(pack(aspect.value, ctx, d), metadata, ref.id);
}

interface Successor {
  previous_aspect: string;
  created_time: number;
  actor_id: number;
}

/**
 * The successor of an event that took its value from its aspect row: the event of the write that replaced
 * that row, which holds the value as its previous one (the first UPSERT of the aspect after it with the
 * next version). Undefined while the row is the event's.
 */
function successorOf(h: SqliteHandle, event: { id: number; entityId: number; nameId: number; version: number }): Successor | undefined {
  return h
    .stmt(
      `SELECT previous_aspect, created_time, actor_id FROM change_events INDEXED BY change_events_by_entity
       WHERE entity_id = ? AND name_id = ? AND version = ? AND id > ? AND change_type = 0 AND previous_aspect IS NOT NULL ORDER BY id LIMIT 1`,
    )
    .get(event.entityId, event.nameId, event.version + 1, event.id) as Successor | undefined;
}

function successorValue(successor: Successor, d: Dictionary): JsonObject {
  return unpack(successor.previous_aspect, eventContext(successor.created_time, d.textOf(successor.actor_id)), d);
}

/** Inside the commit transaction, before an entity is deleted: its events keep their values and its URN; its kept versions go. */
export function detachEntity(h: SqliteHandle, entityId: number, urn: string): void {
  const names = h.stmt('SELECT name_id FROM aspects INDEXED BY aspects_by_entity WHERE entity_id = ?').pluck().all(entityId) as number[];
  for (const nameId of names) detachAspectEvents(h, entityId, nameId, false);
  // What still refers to a row takes its value from a successor, which is found by entity id: a copy, before the id goes.
  const d = dictionaryOf(h);
  const rest = h
    .stmt(
      'SELECT id, name_id, version, created_time, actor_id FROM change_events INDEXED BY change_events_by_entity WHERE entity_id = ? AND flags & 1 = 1',
    )
    .all(entityId) as Array<{ id: number; name_id: number; version: number | null; created_time: number; actor_id: number }>;
  const update = h.stmt('UPDATE change_events SET aspect = ?, flags = 0 WHERE id = ?');
  for (const ref of rest) {
    const successor =
      ref.version === null ? undefined : successorOf(h, { id: ref.id, entityId, nameId: ref.name_id, version: ref.version });
    if (!successor) throw new Error(`internal: change event ${ref.id} lost the aspect row it refers to`);
    update.run(pack(successorValue(successor, d), eventContext(ref.created_time, d.textOf(ref.actor_id)), d), ref.id);
  }
  h.stmt('UPDATE change_events INDEXED BY change_events_by_entity SET entity_id = NULL, entity_urn = ? WHERE entity_id = ?').run(
    urn,
    entityId,
  );
  h.stmt('DELETE FROM aspect_versions WHERE entity_id = ?').run(entityId);
}

interface EventRow {
  id: number;
  entity_id: number | null;
  urn: string;
  type_id: number;
  name_id: number;
  change_type: number;
  version: number | null;
  aspect: string | null;
  previous_aspect: string | null;
  created_time: number;
  actor_id: number;
  system_metadata: string | null;
  flags: number;
  row_version: number | null;
  row_value: string | null;
  row_metadata: string | null;
  row_created_time: number | null;
  row_created_actor: number | null;
  row_modified_time: number | null;
  row_modified_actor: number | null;
}

function toEvent(h: SqliteHandle, r: EventRow, d: Dictionary): ChangeEvent {
  const actor = d.textOf(r.actor_id);
  const ctx = eventContext(r.created_time, actor);
  let aspect: JsonObject | null = r.aspect === null ? null : unpack(r.aspect, ctx, d);
  let systemMetadata = r.system_metadata === null ? undefined : unpack(r.system_metadata, ctx, d);
  const successor =
    r.flags & ASPECT_IN_ROW && r.entity_id !== null && r.version !== null
      ? successorOf(h, { id: r.id, entityId: r.entity_id, nameId: r.name_id, version: r.version })
      : undefined;
  if (successor) {
    // The row was replaced by a write whose event holds this value as its previous one (never its metadata).
    if (r.flags & METADATA_IN_ROW) throw new Error(`internal: change event ${r.id} lost the aspect row it refers to`);
    aspect = successorValue(successor, d);
  } else if (r.flags & ASPECT_IN_ROW) {
    if (r.row_value === null || r.row_version !== r.version)
      throw new Error(`internal: change event ${r.id} lost the aspect row it refers to`);
    const rowCtx = rowContext(
      {
        created_time: r.row_created_time,
        created_actor: r.row_created_actor,
        modified_time: r.row_modified_time!,
        modified_actor: r.row_modified_actor!,
      },
      d,
    );
    aspect = unpack(r.row_value, rowCtx, d);
    if (r.flags & METADATA_IN_ROW && r.row_metadata !== null) systemMetadata = unpack(r.row_metadata, rowCtx, d);
  }
  return {
    id: String(r.id),
    entityUrn: r.urn,
    entityType: d.textOf(r.type_id),
    aspectName: d.textOf(r.name_id),
    changeType: CHANGE_TYPES[r.change_type]!,
    aspect,
    previousAspectValue: r.previous_aspect === null ? null : unpack(r.previous_aspect, ctx, d),
    created: { time: r.created_time, actor },
    ...(systemMetadata ? { systemMetadata } : {}),
  };
}

export function readChanges(h: SqliteHandle, query: ChangeQuery): ChangePage {
  const d = dictionaryOf(h);
  // One read transaction: the page and the bounds come from the same snapshot.
  return h.db.transaction(() => {
    const after = Number(query.after ?? 0);
    const conditions = ['c.id > @after'];
    const params: Record<string, unknown> = { after, limit: query.limit };
    const ids = (names: readonly string[]) => JSON.stringify(names.map((n) => d.find(n)).filter((id) => id !== undefined));
    if (query.entityTypes?.length) {
      conditions.push('c.type_id IN (SELECT value FROM json_each(@types))');
      params.types = ids(query.entityTypes);
    }
    if (query.aspects?.length) {
      conditions.push('c.name_id IN (SELECT value FROM json_each(@aspects))');
      params.aspects = ids(query.aspects);
    }
    const rows = h
      .stmt(
        // The URN by rowid in a scalar subquery, the aspect row by its named index: statistics cannot turn either into a scan.
        `SELECT c.id, c.entity_id, COALESCE(c.entity_urn, (SELECT urn FROM entities WHERE entity_id = c.entity_id)) AS urn, c.type_id, c.name_id, c.change_type, c.version, c.aspect, c.previous_aspect,
           c.created_time, c.actor_id, c.system_metadata, c.flags, a.version AS row_version, a.value AS row_value,
           a.system_metadata AS row_metadata, a.created_time AS row_created_time, a.created_actor AS row_created_actor,
           a.modified_time AS row_modified_time, a.modified_actor AS row_modified_actor
         FROM change_events c
           LEFT JOIN aspects a INDEXED BY aspects_by_entity ON c.flags & 1 = 1 AND a.entity_id = c.entity_id AND a.name_id = c.name_id
         WHERE ${conditions.join(' AND ')} ORDER BY c.id LIMIT @limit`,
      )
      .all(params) as EventRow[];
    const bounds = h.stmt('SELECT (SELECT MIN(id) FROM change_events) AS oldest, (SELECT MAX(id) FROM change_events) AS newest').get() as {
      oldest: number | null;
      newest: number | null;
    };
    const events = rows.map((r) => toEvent(h, r, d));
    const lastId = bounds.newest ?? undefined;
    const scanned = events.length === query.limit ? Number(events.at(-1)!.id) : Math.max(after, bounds.newest ?? 0);
    return {
      events,
      oldestId: bounds.oldest === null ? undefined : String(bounds.oldest),
      lastId: lastId === undefined || lastId === 0 ? undefined : String(lastId),
      scannedId: String(scanned),
    };
  })();
}

export function readAspectVersions(
  h: SqliteHandle,
  request: { urn: string; aspectName: string; beforeVersion?: number; limit: number },
): StoredAspect[] {
  const d = dictionaryOf(h);
  const nameId = d.find(request.aspectName);
  if (nameId === undefined) return [];
  const rows = h
    .stmt(
      `SELECT v.name_id, v.version, v.value, v.created_time, v.created_actor, v.modified_time, v.modified_actor, v.system_metadata
       FROM entities e INDEXED BY entities_by_urn CROSS JOIN aspect_versions v
         ON v.entity_id = e.entity_id AND v.name_id = ?
       WHERE e.urn = ? AND v.version < ? ORDER BY v.version DESC LIMIT ?`,
    )
    .all(nameId, request.urn, request.beforeVersion ?? Number.MAX_SAFE_INTEGER, request.limit) as AspectRow[];
  return rows.map((r) => toStoredAspect(r, d));
}

export function pruneChanges(
  h: SqliteHandle,
  request: { eventsBefore?: number; keepEvents?: number; versionsBefore?: number; keepVersions?: number; limit: number },
): { events: number; versions: number } {
  return h.db
    .transaction(() => {
      let events = 0;
      const newest = (h.stmt('SELECT MAX(id) AS m FROM change_events').get() as { m: number | null }).m ?? 0;
      // Events go oldest first, so what is kept is always a suffix of the feed.
      let cutId = 0;
      if (request.keepEvents !== undefined) cutId = Math.max(cutId, newest - request.keepEvents);
      if (request.eventsBefore !== undefined) {
        // No index on the time (one b-tree fewer on every commit): the oldest events are read in id
        // order, and times follow ids closely enough that the first young event ends the walk.
        const row = h
          .stmt('SELECT MAX(id) AS m FROM (SELECT id, created_time FROM change_events ORDER BY id LIMIT ?) WHERE created_time < ?')
          .get(request.limit, request.eventsBefore) as { m: number | null };
        cutId = Math.max(cutId, row.m ?? 0);
      }
      // The newest event always stays: it keeps the next rowid above every id ever given.
      cutId = Math.min(cutId, newest - 1);
      if (cutId > 0) {
        events = h
          .stmt('DELETE FROM change_events WHERE id IN (SELECT id FROM change_events WHERE id <= ? ORDER BY id LIMIT ?)')
          .run(cutId, request.limit).changes;
      }
      let versions = 0;
      if (request.versionsBefore !== undefined) {
        versions += h
          .stmt(
            `DELETE FROM aspect_versions WHERE (entity_id, name_id, version) IN (
             SELECT entity_id, name_id, version FROM aspect_versions WHERE modified_time < ? LIMIT ?)`,
          )
          .run(request.versionsBefore, request.limit).changes;
      }
      if (request.keepVersions !== undefined && versions < request.limit) {
        versions += h
          .stmt(
            `DELETE FROM aspect_versions WHERE (entity_id, name_id, version) IN (
               SELECT entity_id, name_id, version FROM (
                 SELECT entity_id, name_id, version, ROW_NUMBER() OVER (PARTITION BY entity_id, name_id ORDER BY version DESC) AS n
                 FROM aspect_versions
               ) WHERE n > ? LIMIT ?)`,
          )
          .run(request.keepVersions, request.limit - versions).changes;
      }
      return { events, versions };
    })
    .immediate();
}
