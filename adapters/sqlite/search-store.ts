import type { SearchDocument } from '../../src/adapter/types';
import { analyzeText } from '../../src/adapter/text-analysis';
import { params, type SqliteHandle } from './statements';

export type KeyKind = 'field' | 'property';

/**
 * Key ids by kind, name and definition key, per handle. Ids are never deleted, so a found id stays
 * valid. Nested maps, not one map of joined strings: a request's names are the same string objects
 * every time (the domain's cached definitions), whose hashes V8 keeps; a joined key is hashed anew.
 */
type KeyCache = Map<string, Map<string, number>>;
const keyCaches = new WeakMap<SqliteHandle, Record<KeyKind, KeyCache>>();

function cacheOf(h: SqliteHandle, kind: KeyKind): KeyCache {
  let caches = keyCaches.get(h);
  if (!caches) {
    caches = { field: new Map(), property: new Map() };
    keyCaches.set(h, caches);
  }
  return caches[kind];
}

/** The id of a searchable key, or undefined when no value was ever written under it. */
export function findKeyId(h: SqliteHandle, kind: KeyKind, name: string, defKey: string): number | undefined {
  const cache = cacheOf(h, kind);
  let id = cache.get(name)?.get(defKey);
  if (id === undefined) {
    const row = h.stmt('SELECT id FROM search_keys WHERE kind = ? AND name = ? AND def_key = ?').get(kind, name, defKey) as { id: number } | undefined;
    if (row) {
      id = row.id;
      let byKey = cache.get(name);
      if (!byKey) {
        byKey = new Map();
        cache.set(name, byKey);
      }
      byKey.set(defKey, id);
    }
  }
  return id;
}

/** Inside a write transaction: the id of the key, created on first use. */
function keyId(h: SqliteHandle, kind: KeyKind, name: string, defKey: string): number {
  const found = findKeyId(h, kind, name, defKey);
  if (found !== undefined) return found;
  // Not cached: if the transaction rolls back, the next lookup reads the table again.
  h.stmt('INSERT OR IGNORE INTO search_keys (kind, name, def_key) VALUES (?, ?, ?)').run(kind, name, defKey);
  const row = h.stmt('SELECT id FROM search_keys WHERE kind = ? AND name = ? AND def_key = ?').get(kind, name, defKey) as { id: number };
  return row.id;
}

/** -0 is stored as 0, so that a facet never reports "-0". */
function normalized(value: string | number): string | number {
  return value === 0 ? 0 : value;
}

/** The distinct values with their flags (1 = smallest of its type, 2 = largest of its type, 4 = first). */
function flaggedValues(values: ReadonlyArray<string | number>): Array<[string | number, number]> {
  const distinct = [...new Set(values.map(normalized))];
  const numbers = distinct.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  const strings = distinct.filter((v): v is string => typeof v === 'string').sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Array<[string | number, number]> = [];
  for (const group of [numbers, strings] as Array<Array<string | number>>) {
    group.forEach((value, i) => out.push([value, (i === 0 ? 1 : 0) | (i === group.length - 1 ? 2 : 0)]));
  }
  if (out.length) out[0]![1] |= 4;
  return out;
}

/** Deletes the value rows of a document; returns the keys it had, each with whether it had several values. */
function clearValues(h: SqliteHandle, entityId: number): Map<number, boolean> {
  const row = h.stmt('SELECT key_ids FROM search_docs WHERE entity_id = ?').get(entityId) as { key_ids: string } | undefined;
  const keys = new Map<number, boolean>();
  for (const item of (row?.key_ids ?? '').split(' ')) {
    if (item !== '') keys.set(Number(item.replace('*', '')), item.endsWith('*'));
  }
  const remove = h.stmt('DELETE FROM search_values WHERE key_id = ? AND entity_id = ?');
  for (const key of keys.keys()) remove.run(key, entityId);
  return keys;
}

/**
 * Moves the keys' statistics from what a document of `entityType` had (`before`) to what it has
 * (`after`): document counts, documents with several values, and the entity type of the documents.
 */
function recount(h: SqliteHandle, entityType: string, before: ReadonlyMap<number, boolean>, after: ReadonlyMap<number, boolean>): void {
  const gain = h.stmt(
    `UPDATE search_keys SET entities = entities + 1, multi = multi + ?,
       entity_type = CASE WHEN entity_type IS NULL OR entity_type = ? THEN ? ELSE '*' END WHERE id = ?`,
  );
  // The type is forgotten with the last document; '*' stays while any is left (it only costs a test).
  const lose = h.stmt('UPDATE search_keys SET entities = entities - 1, multi = multi - ?, entity_type = CASE WHEN entities = 1 THEN NULL ELSE entity_type END WHERE id = ?');
  const multi = h.stmt('UPDATE search_keys SET multi = multi + ? WHERE id = ?');
  for (const [id, several] of before) {
    const now = after.get(id);
    if (now === undefined) lose.run(several ? 1 : 0, id);
    else if (now !== several) multi.run(now ? 1 : -1, id);
  }
  for (const [id, several] of after) if (!before.has(id)) gain.run(several ? 1 : 0, entityType, entityType, id);
}

/** Writes and removes search documents inside the caller's transaction. */
export function removeSearchDocument(h: SqliteHandle, entityId: number): void {
  // Nothing is gained, so the entity type is not needed.
  recount(h, '', clearValues(h, entityId), new Map());
  h.stmt('INSERT OR REPLACE INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, NULL, NULL, NULL, 1)').run(entityId);
  h.stmt('DELETE FROM search_docs WHERE entity_id = ?').run(entityId);
}

export function writeSearchDocument(h: SqliteHandle, entityId: number, doc: SearchDocument, existed: boolean): void {
  const previous = existed ? clearValues(h, entityId) : new Map<number, boolean>();
  const removed = doc.removed ? 1 : 0;
  // One key may appear twice in a document (a property listed twice): its values are merged.
  const byKey = new Map<number, Array<string | number>>();
  const collect = (id: number, values: ReadonlyArray<string | number>): void => {
    const list = byKey.get(id);
    if (list) list.push(...values);
    else byKey.set(id, [...values]);
  };
  for (const field of Object.keys(doc.fields)) {
    const values = doc.fields[field]!;
    if (values.length) collect(keyId(h, 'field', field, ''), values);
  }
  for (const property of doc.properties) {
    if (property.values.length) collect(keyId(h, 'property', property.propertyUrn, property.definitionKey), property.values);
  }
  const insert = h.stmt('INSERT INTO search_values (key_id, entity_id, value, removed, entity_type, flags) VALUES (?, ?, ?, ?, ?, ?)');
  const now = new Map<number, boolean>();
  for (const [id, values] of byKey) {
    const flagged = flaggedValues(values);
    now.set(id, flagged.length > 1);
    for (const [value, flags] of flagged) insert.run(id, entityId, value, removed, doc.entityType, flags);
  }
  h.stmt(
    `INSERT INTO search_docs (entity_id, urn, entity_type, removed, key_ids) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (entity_id) DO UPDATE SET removed = excluded.removed, entity_type = excluded.entity_type, urn = excluded.urn, key_ids = excluded.key_ids`,
  ).run(entityId, doc.urn, doc.entityType, removed, [...now].map(([id, multi]) => (multi ? `${id}*` : String(id))).join(' '));
  recount(h, doc.entityType, previous, now);
  h.stmt('INSERT OR REPLACE INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, ?, ?, ?, 0)').run(
    entityId,
    doc.text.name ?? '',
    doc.text.description ?? '',
    doc.text.urnKey,
  );
}

/** What the planner knows of a key, as kept by every write (removed documents included). */
export interface KeyStats {
  /** Documents with a value under the key. */
  entities: number;
  /** Those with several values under it. */
  multi: number;
  /** The entity type of all of them; '*' when they have several types; null when there are none. */
  entityType: string | null;
}

export function keyStats(h: SqliteHandle, keyId: number, snapshot?: Snapshot): KeyStats {
  const cached = snapshot?.stats.get(keyId);
  if (cached) return cached;
  const row = h.stmt('SELECT entities, multi, entity_type AS entityType FROM search_keys WHERE id = ?').get(keyId) as KeyStats | undefined;
  const stats = row ?? { entities: 0, multi: 0, entityType: null };
  snapshot?.stats.set(keyId, stats);
  return stats;
}

/** `PRAGMA data_version` of the connection: moves when another connection commits. */
function dataVersion(h: SqliteHandle): number {
  return h.stmt('PRAGMA data_version').pluck().get() as number;
}

/**
 * What a connection has seen of the database: `PRAGMA data_version` and its own entity commits.
 * Equal versions mean no entity write happened in between.
 */
export function databaseVersion(h: SqliteHandle): string {
  return versionText(dataVersion(h), h.commits);
}

function versionText(data: number, commits: number): string {
  return `${data}.${commits}`;
}

/** Key statistics read under one database version, reused by later reads while it holds. */
export interface Snapshot {
  /** As `databaseVersion` writes it. */
  readonly version: string;
  readonly dataVersion: number;
  readonly commits: number;
  readonly stats: Map<number, KeyStats>;
}

const snapshots = new WeakMap<SqliteHandle, Snapshot>();

/**
 * Inside a read transaction, before anything else is read: its version (the PRAGMA starts the
 * snapshot) and the key statistics read under that same version, or a fresh empty cache. Reading
 * them costs a statement each (about 2 µs); the version, inside the transaction, a tenth of that.
 */
export function snapshotOf(h: SqliteHandle): Snapshot {
  const data = dataVersion(h);
  let snapshot = snapshots.get(h);
  if (snapshot === undefined || snapshot.dataVersion !== data || snapshot.commits !== h.commits) {
    snapshot = { version: versionText(data, h.commits), dataVersion: data, commits: h.commits, stats: new Map() };
    snapshots.set(h, snapshot);
  }
  return snapshot;
}

/** The FTS5 form of a text: its analysed terms separated by spaces. */
function terms(text: string | null): string {
  return analyzeText(text ?? '').join(' ');
}

/**
 * Moves pending full-text rows into the FTS5 index in one transaction, analysed. Called before every
 * query that uses full text, so a query always sees every committed write.
 */
export function flushSearchText(h: SqliteHandle): number {
  const pending = h.stmt('SELECT EXISTS (SELECT 1 FROM search_text_pending) AS n').get() as { n: number };
  if (pending.n === 0) return 0;
  return h.db
    .transaction(() => {
      const rows = h.stmt('SELECT entity_id, name, description, urn_key, deleted FROM search_text_pending').all() as Array<{
        entity_id: number;
        name: string | null;
        description: string | null;
        urn_key: string | null;
        deleted: number;
      }>;
      const remove = h.stmt('DELETE FROM search_text WHERE rowid = ?');
      const insert = h.stmt('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)');
      for (const row of rows) {
        remove.run(row.entity_id);
        if (!row.deleted) insert.run(row.entity_id, terms(row.name), terms(row.description), terms(row.urn_key));
      }
      h.stmt('DELETE FROM search_text_pending').run();
      return rows.length;
    })
    .immediate();
}

export function findEntitiesWithPropertyValues(
  h: SqliteHandle,
  request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number },
): string[] {
  const rows = h
    .stmt(
      `SELECT DISTINCT d.urn AS urn FROM search_keys k
         JOIN search_values v ON v.key_id = k.id
         JOIN search_docs d ON d.entity_id = v.entity_id
       WHERE k.kind = 'property' AND k.name = @p1 AND (@p2 IS NULL OR k.def_key <> @p2) AND d.urn > @p3
       ORDER BY d.urn LIMIT @p4`,
    )
    .all(params(request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit)) as Array<{ urn: string }>;
  return rows.map((r) => r.urn);
}

export function countEntitiesWithPropertyValues(h: SqliteHandle, propertyUrn: string, definitionKey?: string): number {
  if (definitionKey !== undefined) {
    // One key: its document count, kept by every write.
    const id = findKeyId(h, 'property', propertyUrn, definitionKey);
    return id === undefined ? 0 : keyStats(h, id).entities;
  }
  const row = h
    .stmt(
      `SELECT COUNT(DISTINCT v.entity_id) AS n FROM search_keys k JOIN search_values v ON v.key_id = k.id
       WHERE k.kind = 'property' AND k.name = ?`,
    )
    .get(propertyUrn) as { n: number };
  return row.n;
}
