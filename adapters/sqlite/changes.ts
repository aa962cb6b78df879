import type { Database } from 'better-sqlite3';
import type { AspectVersionPut, ChangeEvent, ChangePage, ChangeQuery, NewChangeEvent, StoredAspect } from '../../src/adapter/types';
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

/** Inside the commit transaction: after the entity writes. */
export function writeChanges(h: SqliteHandle, events: readonly NewChangeEvent[] | undefined, versions: readonly AspectVersionPut[] | undefined): void {
  if (versions?.length) {
    const put = h.stmt(
      `INSERT OR REPLACE INTO aspect_versions (urn, name, version, value, created_time, created_actor, modified_time, modified_actor, system_metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const { urn, aspect: a } of versions) {
      put.run(urn, a.name, a.version, JSON.stringify(a.value), a.created.time, a.created.actor, a.lastModified.time, a.lastModified.actor, a.systemMetadata ? JSON.stringify(a.systemMetadata) : null);
    }
  }
  if (events?.length) {
    const insert = h.stmt(
      `INSERT INTO change_events (entity_urn, entity_type, aspect_name, change_type, aspect, previous_aspect, created_time, created_actor, system_metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const e of events) {
      insert.run(
        e.entityUrn,
        e.entityType,
        e.aspectName,
        e.changeType,
        e.aspect === null ? null : JSON.stringify(e.aspect),
        e.previousAspectValue === null ? null : JSON.stringify(e.previousAspectValue),
        e.created.time,
        e.created.actor,
        e.systemMetadata ? JSON.stringify(e.systemMetadata) : null,
      );
    }
  }
}

/** Inside the commit transaction, with an entity deletion: its kept versions go too. */
export function dropEntityVersions(h: SqliteHandle, urn: string): void {
  h.stmt('DELETE FROM aspect_versions WHERE urn = ?').run(urn);
}

interface EventRow {
  id: number;
  entity_urn: string;
  entity_type: string;
  aspect_name: string;
  change_type: NewChangeEvent['changeType'];
  aspect: string | null;
  previous_aspect: string | null;
  created_time: number;
  created_actor: string;
  system_metadata: string | null;
}

export function toEvent(r: EventRow): ChangeEvent {
  return {
    id: String(r.id),
    entityUrn: r.entity_urn,
    entityType: r.entity_type,
    aspectName: r.aspect_name,
    changeType: r.change_type,
    aspect: r.aspect === null ? null : JSON.parse(r.aspect),
    previousAspectValue: r.previous_aspect === null ? null : JSON.parse(r.previous_aspect),
    created: { time: Number(r.created_time), actor: r.created_actor },
    ...(r.system_metadata ? { systemMetadata: JSON.parse(r.system_metadata) } : {}),
  };
}

export function readChanges(h: SqliteHandle, query: ChangeQuery): ChangePage {
  // One read transaction: the page and the bounds come from the same snapshot.
  return h.db.transaction(() => {
    const after = Number(query.after ?? 0);
    const conditions = ['id > @after'];
    const params: Record<string, unknown> = { after, limit: query.limit };
    if (query.entityTypes?.length) {
      conditions.push('entity_type IN (SELECT value FROM json_each(@types))');
      params.types = JSON.stringify(query.entityTypes);
    }
    if (query.aspects?.length) {
      conditions.push('aspect_name IN (SELECT value FROM json_each(@aspects))');
      params.aspects = JSON.stringify(query.aspects);
    }
    const rows = h.stmt(`SELECT * FROM change_events WHERE ${conditions.join(' AND ')} ORDER BY id LIMIT @limit`).all(params) as EventRow[];
    const bounds = h.stmt('SELECT MIN(id) AS oldest, MAX(id) AS newest FROM change_events').get() as { oldest: number | null; newest: number | null };
    const events = rows.map(toEvent);
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

interface VersionRow {
  name: string;
  version: number;
  value: string;
  created_time: number;
  created_actor: string;
  modified_time: number;
  modified_actor: string;
  system_metadata: string | null;
}

export function readAspectVersions(h: SqliteHandle, request: { urn: string; aspectName: string; beforeVersion?: number; limit: number }): StoredAspect[] {
  const rows = h
    .stmt('SELECT * FROM aspect_versions WHERE urn = ? AND name = ? AND version < ? ORDER BY version DESC LIMIT ?')
    .all(request.urn, request.aspectName, request.beforeVersion ?? Number.MAX_SAFE_INTEGER, request.limit) as VersionRow[];
  return rows.map((r) => ({
    name: r.name,
    value: JSON.parse(r.value),
    version: r.version,
    created: { time: r.created_time, actor: r.created_actor },
    lastModified: { time: r.modified_time, actor: r.modified_actor },
    ...(r.system_metadata ? { systemMetadata: JSON.parse(r.system_metadata) } : {}),
  }));
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
        events = h.stmt('DELETE FROM change_events WHERE id IN (SELECT id FROM change_events WHERE id <= ? ORDER BY id LIMIT ?)').run(cutId, request.limit).changes;
      }
      let versions = 0;
      if (request.versionsBefore !== undefined) {
        versions += h
          .stmt('DELETE FROM aspect_versions WHERE (urn, name, version) IN (SELECT urn, name, version FROM aspect_versions WHERE modified_time < ? LIMIT ?)')
          .run(request.versionsBefore, request.limit).changes;
      }
      if (request.keepVersions !== undefined && versions < request.limit) {
        versions += h
          .stmt(
            `DELETE FROM aspect_versions WHERE (urn, name, version) IN (
               SELECT urn, name, version FROM (
                 SELECT urn, name, version, ROW_NUMBER() OVER (PARTITION BY urn, name ORDER BY version DESC) AS n FROM aspect_versions
               ) WHERE n > ? LIMIT ?)`,
          )
          .run(request.keepVersions, request.limit - versions).changes;
      }
      return { events, versions };
    })
    .immediate();
}
