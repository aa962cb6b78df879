import type { SearchDocument } from '../../src/adapter/types';
import { dictionaryOf } from './dictionary';
import type { SqliteHandle } from './statements';
import { terms } from './search-text-queue';
import { addValue, applyValueCounts, checkCountStatus, countsKept, forgetCountStatus, type ValueDeltas } from './value-counts';

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

/**
 * After a rollback: a key created by the rolled-back writes may have been cached (a lookup later in
 * the same transaction finds it), and its id may go to another key next time.
 */
export function forgetKeyIds(h: SqliteHandle): void {
  keyCaches.delete(h);
  forgetCountStatus(h);
}

/** The id of a searchable key, or undefined when no value was ever written under it. */
export function findKeyId(h: SqliteHandle, kind: KeyKind, name: string, defKey: string): number | undefined {
  const cache = cacheOf(h, kind);
  let id = cache.get(name)?.get(defKey);
  if (id === undefined) {
    const row = h.stmt('SELECT id FROM search_keys WHERE kind = ? AND name = ? AND def_key = ?').get(kind, name, defKey) as
      { id: number } | undefined;
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

/**
 * What search_values.entity_type holds for an entity type: its dictionary id in decimal (a byte or
 * two where the name takes seven or more, on every value row and again in the value index). Inside
 * a write transaction: the id is added on first use.
 */
export function typeKey(h: SqliteHandle, entityType: string): string {
  return String(dictionaryOf(h).idOf(entityType));
}

/** The type keys of entity types (see `typeKey`); a type no value row was ever written for has none. */
export function knownTypeKeys(h: SqliteHandle, entityTypes: readonly string[]): string[] {
  const keys: string[] = [];
  for (const type of new Set(entityTypes)) {
    const id = dictionaryOf(h).find(type);
    if (id !== undefined) keys.push(String(id));
  }
  return keys;
}

/** -0 is stored as 0, so that a facet never reports "-0". */
function normalized(value: string | number): string | number {
  return value === 0 ? 0 : value;
}

/** Every flag of flaggedValues: a key's only value has them all, and is stored with none off (schema version 8). */
const ALL_FLAGS = 7;

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

/**
 * The entity row's `key_ids`: the keys its document has values under, in id order, separated by
 * spaces, an asterisk after a key with several values; three or more consecutive ids alike in that
 * are written as a range `first-last` (`1-9` for keys 1 to 9, `4-6*` for 4, 5 and 6 with several
 * values each). Schema version 8; before it every id was written alone, which reads the same.
 */
export function formatKeyIds(keys: ReadonlyMap<number, boolean>): string {
  const ids = [...keys.keys()].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < ids.length;) {
    const several = keys.get(ids[i]!)!;
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1 && keys.get(ids[j + 1]!) === several) j++;
    const mark = several ? '*' : '';
    if (j - i >= 2) {
      parts.push(`${ids[i]}-${ids[j]}${mark}`);
      i = j + 1;
    } else {
      parts.push(`${ids[i]}${mark}`);
      i++;
    }
  }
  return parts.join(' ');
}

/** The keys of a `key_ids` text (either form, see formatKeyIds), each with whether it has several values. */
export function parseKeyIds(text: string): Map<number, boolean> {
  const keys = new Map<number, boolean>();
  for (const item of text.split(' ')) {
    if (item === '') continue;
    const several = item.endsWith('*');
    const body = several ? item.slice(0, -1) : item;
    const dash = body.indexOf('-');
    if (dash < 0) {
      keys.set(Number(body), several);
      continue;
    }
    const last = Number(body.slice(dash + 1));
    for (let id = Number(body.slice(0, dash)); id <= last; id++) keys.set(id, several);
  }
  return keys;
}

/**
 * Deletes the value rows of a document; returns the keys it had, each with whether it had several
 * values.
 */
function clearValues(h: SqliteHandle, entityId: number): Map<number, boolean> {
  const row = h.stmt('SELECT key_ids FROM entities WHERE entity_id = ?').get(entityId) as { key_ids: string } | undefined;
  const keys = parseKeyIds(row?.key_ids ?? '');
  for (const key of keys.keys()) removeKeyRows(h, key, entityId);
  return keys;
}

/** Deletes a document's rows under one key; the values of a key that keeps per-value counts are read as they go, to be uncounted. */
function removeKeyRows(h: SqliteHandle, key: number, entityId: number): void {
  const counted = deltaOf(h, key).values;
  if (counted === null) {
    h.stmt('DELETE FROM search_values WHERE key_id = ? AND entity_id = ?').run(key, entityId);
    return;
  }
  const removeCounted = h.stmt('DELETE FROM search_values WHERE key_id = ? AND entity_id = ? RETURNING value, removed').raw(true);
  for (const [value, removed] of removeCounted.all(key, entityId) as Array<[string | number, number]>)
    addValue(counted, value, removed, -1);
}

/** Inserts a document's rows under one key (its values with their flags), counting them where the key keeps counts. */
function insertKeyRows(
  h: SqliteHandle,
  key: number,
  entityId: number,
  values: Iterable<readonly [string | number, number]>,
  removed: 0 | 1,
  type: string,
): void {
  const insert = h.stmt('INSERT INTO search_values (key_id, entity_id, value, removed, entity_type, flags_off) VALUES (?, ?, ?, ?, ?, ?)');
  const counted = deltaOf(h, key).values;
  for (const [value, flags] of values) {
    insert.run(key, entityId, value, removed, type, ALL_FLAGS ^ flags);
    if (counted) addValue(counted, value, removed, 1);
  }
}

/**
 * The value rows of a document that had some (`previous`: its keys, from the entity row): only the rows
 * that differ are deleted, inserted or updated. A write that changes one field (a description) leaves
 * the other keys' rows as they are, so their pages (a page per key in the table and in its index) are not
 * rewritten: a single write used to rewrite about 11 of its 16 pages this way.
 */
function replaceValues(
  h: SqliteHandle,
  entityId: number,
  previous: ReadonlyMap<number, boolean>,
  document: PreparedDocument,
  type: string,
): void {
  const select = h.stmt('SELECT value, removed, entity_type, flags_off FROM search_values WHERE key_id = ? AND entity_id = ?').raw(true);
  const removeOne = h.stmt('DELETE FROM search_values WHERE key_id = ? AND entity_id = ? AND value = ?');
  const update = h.stmt(
    'UPDATE search_values SET removed = ?, entity_type = ?, flags_off = ? WHERE key_id = ? AND entity_id = ? AND value = ?',
  );
  const removed = document.removed;
  for (const id of previous.keys()) {
    const wanted = document.values.get(id);
    // A key the document no longer has: its rows go.
    if (!wanted) {
      removeKeyRows(h, id, entityId);
      continue;
    }
    const counted = deltaOf(h, id).values;
    const rows = select.all(id, entityId) as Array<[value: string | number, removed: number, type: string, flagsOff: number]>;
    const kept = new Set<string | number>();
    // A long list of values (tags, owners) is looked up by value; a short one (most keys hold one) by a scan.
    const byValue = wanted.length > 8 ? new Map(wanted.map((entry) => [entry[0], entry])) : undefined;
    for (const [value, wasRemoved, wasType, flagsOff] of rows) {
      const match = byValue ? byValue.get(value) : wanted.find((entry) => entry[0] === value);
      if (!match) {
        removeOne.run(id, entityId, value);
        if (counted) addValue(counted, value, wasRemoved, -1);
        continue;
      }
      kept.add(value);
      const nowOff = ALL_FLAGS ^ match[1];
      if (wasRemoved === removed && wasType === type && flagsOff === nowOff) continue;
      update.run(removed, type, nowOff, id, entityId, value);
      if (counted && wasRemoved !== removed) {
        addValue(counted, value, wasRemoved, -1);
        addValue(counted, value, removed, 1);
      }
    }
    if (kept.size < wanted.length)
      insertKeyRows(
        h,
        id,
        entityId,
        wanted.filter((entry) => !kept.has(entry[0])),
        removed,
        type,
      );
  }
  // Keys the document gained.
  for (const [id, flagged] of document.values) if (!previous.has(id)) insertKeyRows(h, id, entityId, flagged, removed, type);
}

/** What one commit changes in a key's statistics, applied once per key at the end of the commit. */
interface KeyDelta {
  entities: number;
  multi: number;
  /** The entity type of the documents that gained the key: one type, '*' for several, null for none. */
  gained: string | null;
  /** Its per-value counts' changes; null when the key keeps none (value-counts.ts). */
  values: ValueDeltas | null;
}

const pendingCounts = new WeakMap<SqliteHandle, Map<number, KeyDelta>>();

/** The entity type of the documents that gained a key, once documents of `type` gained it too ('*' for several). */
function gainedAlso(gained: string | null, type: string): string {
  return gained === null || gained === type ? type : '*';
}

function deltaOf(h: SqliteHandle, id: number): KeyDelta {
  let deltas = pendingCounts.get(h);
  if (!deltas) {
    deltas = new Map();
    pendingCounts.set(h, deltas);
  }
  let delta = deltas.get(id);
  if (!delta) {
    delta = { entities: 0, multi: 0, gained: null, values: countsKept(h, id) ? new Map() : null };
    deltas.set(id, delta);
  }
  return delta;
}

/**
 * Moves the keys' statistics from what a document of `entityType` had (`before`) to what it has
 * (`after`): document counts, documents with several values, and the entity type of the documents.
 * Collected per commit (a bulk write touches the same few keys thousands of times) and written by
 * `applyKeyCounts`.
 */
function recount(h: SqliteHandle, entityType: string, before: ReadonlyMap<number, boolean>, after: ReadonlyMap<number, boolean>): void {
  for (const [id, several] of before) {
    const now = after.get(id);
    if (now === undefined) {
      const delta = deltaOf(h, id);
      delta.entities--;
      if (several) delta.multi--;
    } else if (now !== several) deltaOf(h, id).multi += now ? 1 : -1;
  }
  for (const [id, several] of after) {
    if (before.has(id)) continue;
    const delta = deltaOf(h, id);
    delta.entities++;
    if (several) delta.multi++;
    delta.gained = gainedAlso(delta.gained, entityType);
  }
}

/** At the start of a commit, inside its transaction: forgets what a failed one collected. */
export function resetKeyCounts(h: SqliteHandle): void {
  pendingCounts.get(h)?.clear();
  checkCountStatus(h);
}

/** The statistics a group commit's batches collected, held until the group's end (`holdKeyCounts`). */
export type HeldKeyCounts = Map<number, KeyDelta>;

/**
 * A batch of a group commit succeeded (its savepoint is released): what it collected moves into `held`,
 * to be written once per key for the whole group by `applyKeyCounts(h, held)`. A group of sixteen writes
 * touching the same keys then updates each key's row once instead of sixteen times. A batch that failed
 * is not held: what it collected is forgotten when the next one starts (`resetKeyCounts`).
 */
export function holdKeyCounts(h: SqliteHandle, held: HeldKeyCounts): void {
  const deltas = pendingCounts.get(h);
  if (!deltas?.size) return;
  for (const [id, delta] of deltas) {
    const into = held.get(id);
    if (into === undefined) {
      held.set(id, delta);
      continue;
    }
    into.entities += delta.entities;
    into.multi += delta.multi;
    if (delta.gained !== null) into.gained = gainedAlso(into.gained, delta.gained);
    // One batch that could not collect the per-value changes makes the group's unknown too (value-counts.ts drops them).
    if (into.values === null || delta.values === null) into.values = null;
    else
      for (const [value, change] of delta.values) {
        const known = into.values.get(value);
        if (known === undefined) into.values.set(value, change);
        else {
          known.live += change.live;
          known.removed += change.removed;
        }
      }
  }
  deltas.clear();
}

/**
 * At the end of the commit transaction: writes the collected statistics (this commit's, or those a group's
 * batches held). The type is forgotten with the last document; '*' stays while any is left (it only costs a
 * test), and a key that lost its documents of one type and gained some of another in the same commit is
 * marked '*' too.
 */
export function applyKeyCounts(h: SqliteHandle, held?: HeldKeyCounts): void {
  const deltas = held ?? pendingCounts.get(h);
  if (!deltas?.size) return;
  const update = h.stmt(
    `UPDATE search_keys SET entities = entities + @entities, multi = multi + @multi,
       entity_type = CASE WHEN entities + @entities <= 0 THEN NULL WHEN @gained IS NULL THEN entity_type
                          WHEN entity_type IS NULL OR entity_type = @gained THEN @gained ELSE '*' END
     WHERE id = @id RETURNING id, entities, value_counts AS valueCounts, recheck_at AS recheckAt`,
  );
  for (const [id, delta] of deltas) {
    // A key whose per-value counts move while its statistics do not (a value replaced) is written too.
    if (delta.entities === 0 && delta.multi === 0 && delta.gained === null && !valuesMoved(delta.values)) continue;
    const key = update.get({ id, entities: delta.entities, multi: delta.multi, gained: delta.gained }) as Parameters<
      typeof applyValueCounts
    >[1];
    applyValueCounts(h, key, delta.values);
  }
  deltas.clear();
}

function valuesMoved(values: ValueDeltas | null): boolean {
  if (values) for (const delta of values.values()) if (delta.live !== 0 || delta.removed !== 0) return true;
  return false;
}

/** Writes and removes search documents (the entity row's removed and key_ids, the values, the text) inside the caller's transaction. */
export function removeSearchDocument(h: SqliteHandle, entityId: number, directText = false): void {
  // Nothing is gained, so the entity type is not needed.
  recount(h, '', clearValues(h, entityId), new Map());
  if (directText) h.stmt('DELETE FROM search_text WHERE rowid = ?').run(entityId);
  else
    h.stmt(
      'INSERT OR REPLACE INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, NULL, NULL, NULL, 1)',
    ).run(entityId);
  h.stmt("UPDATE entities SET removed = NULL, key_ids = '' WHERE entity_id = ?").run(entityId);
}

/**
 * `directText`: the text goes into FTS5 now instead of waiting in search_text_pending (for a big batch,
 * whose one FTS5 transaction costs less than a pending row written, read and deleted per entity; the
 * commit moves the pending rows first, so that none of them is older than what it writes directly).
 */
/** A document's rows before they are written: what the entity row holds (removed, key_ids) and the values. */
export interface PreparedDocument {
  removed: 0 | 1;
  keyIds: string;
  /** Key id → its distinct values with their flags. */
  values: Map<number, Array<[string | number, number]>>;
}

/** Inside a write transaction (new keys are added): the document's rows, so that a new entity row is inserted with them. */
export function prepareSearchDocument(h: SqliteHandle, doc: SearchDocument): PreparedDocument {
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
  const values = new Map<number, Array<[string | number, number]>>();
  const keys = new Map<number, boolean>();
  for (const [id, list] of byKey) {
    const flagged = flaggedValues(list);
    values.set(id, flagged);
    keys.set(id, flagged.length > 1);
  }
  return { removed: doc.removed ? 1 : 0, keyIds: formatKeyIds(keys), values };
}

/**
 * `prepared`: from prepareSearchDocument, with the entity row inserted holding it already (a new
 * entity: updating the row would move its entries in both indexes, since `removed` is indexed).
 */
export function writeSearchDocument(
  h: SqliteHandle,
  entityId: number,
  doc: SearchDocument,
  existed: boolean,
  directText = false,
  prepared?: PreparedDocument,
): void {
  const document = prepared ?? prepareSearchDocument(h, doc);
  const type = document.values.size ? typeKey(h, doc.entityType) : '';
  const now = new Map<number, boolean>();
  for (const [id, flagged] of document.values) now.set(id, flagged.length > 1);
  const stored = existed
    ? (h.stmt('SELECT removed, key_ids FROM entities WHERE entity_id = ?').raw(true).get(entityId) as [number | null, string] | undefined)
    : undefined;
  const previous = parseKeyIds(stored?.[1] ?? '');
  if (existed) replaceValues(h, entityId, previous, document, type);
  else for (const [id, flagged] of document.values) insertKeyRows(h, id, entityId, flagged, document.removed, type);
  // The document is the entity's row itself (removed, key_ids): its URN and type are there already. Only
  // what changed is written: setting `removed`, even to the same value, rewrites the entity's entries in
  // both indexes that hold it.
  if (!prepared) {
    if (stored?.[0] !== document.removed)
      h.stmt('UPDATE entities SET removed = ?, key_ids = ? WHERE entity_id = ?').run(document.removed, document.keyIds, entityId);
    else if (stored[1] !== document.keyIds) h.stmt('UPDATE entities SET key_ids = ? WHERE entity_id = ?').run(document.keyIds, entityId);
  }
  recount(h, doc.entityType, previous, now);
  if (directText) {
    if (existed) h.stmt('DELETE FROM search_text WHERE rowid = ?').run(entityId);
    h.stmt('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)').run(
      entityId,
      terms(doc.text.name ?? ''),
      terms(doc.text.description ?? ''),
      terms(doc.text.urnKey),
    );
    return;
  }
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
  /** Its distinct values with a per-value count (value-counts.ts); null when it keeps none. */
  valueCounts: number | null;
}

export function keyStats(h: SqliteHandle, keyId: number, snapshot?: Snapshot): KeyStats {
  const cached = snapshot?.stats.get(keyId);
  if (cached) return cached;
  const row = h
    .stmt('SELECT entities, multi, entity_type AS entityType, value_counts AS valueCounts FROM search_keys WHERE id = ?')
    .get(keyId) as KeyStats | undefined;
  const stats = row ?? { entities: 0, multi: 0, entityType: null, valueCounts: null };
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
