import type { SqliteHandle } from './statements';

/**
 * Per-value document counts (`search_value_counts`): for a key with few distinct values, how many
 * documents hold each value, live and removed apart. An EQUAL, IN or range condition alone is then
 * counted by summing the counts of the values it matches (a few rows) instead of reading every
 * matching value row. Kept exact by every commit, in its transaction, from the value rows it deletes
 * and inserts.
 *
 * Only keys with at most `countLimit(entities)` distinct values keep them (a per-value count of a
 * value held by one document saves nothing and costs a row). A key that passes the limit drops its
 * counts (`value_counts` NULL) and is looked at again when it has twice the documents it had then
 * (`recheck_at`): a key whose values repeat as the catalog grows (a score out of 10,000 values) gets
 * its counts back, and the rows read to look again are paid for by the writes since.
 */

/** Any key with at most this many distinct values keeps counts. */
const ALWAYS_COUNTED = 64;
/** Above it, counts are kept while the documents per distinct value are at least this many on average. */
const DOCUMENTS_PER_VALUE = 4;

export function countLimit(entities: number): number {
  return Math.max(ALWAYS_COUNTED, Math.floor(entities / DOCUMENTS_PER_VALUE));
}

/** What one commit changes in a key's counts, by value. */
export type ValueDeltas = Map<string | number, { live: number; removed: number }>;

export function addValue(deltas: ValueDeltas, value: string | number, removed: number, by: number): void {
  let delta = deltas.get(value);
  if (!delta) {
    delta = { live: 0, removed: 0 };
    deltas.set(value, delta);
  }
  if (removed) delta.removed += by;
  else delta.live += by;
}

/**
 * Whether keys keep counts, as last read by this connection, valid while no other connection has
 * committed (`PRAGMA data_version`); this connection's own changes are written into it as they are
 * made and it is forgotten on a rollback. Only saves a statement: a key found keeping counts that
 * were not collected has them dropped (see applyValueCounts), so a stale answer is never wrong.
 */
interface CountStatus {
  dataVersion: number;
  kept: Map<number, boolean>;
}

/** Keys remembered per connection; past it the map starts again (a statement per key per commit). */
const STATUS_LIMIT = 10_000;
const statuses = new WeakMap<SqliteHandle, CountStatus>();

/** At the start of a commit's batch, inside its transaction: forgets statuses another connection may have changed. */
export function checkCountStatus(h: SqliteHandle): void {
  const version = h.stmt('PRAGMA data_version').pluck().get() as number;
  const status = statuses.get(h);
  if (!status || status.dataVersion !== version || status.kept.size > STATUS_LIMIT) {
    statuses.set(h, { dataVersion: version, kept: new Map() });
  }
}

/** After a rollback: what this connection wrote into the statuses may not have happened. */
export function forgetCountStatus(h: SqliteHandle): void {
  statuses.delete(h);
}

/** Inside a write transaction: whether the key keeps per-value counts (a new key does). */
export function countsKept(h: SqliteHandle, keyId: number): boolean {
  const status = statuses.get(h);
  const known = status?.kept.get(keyId);
  if (known !== undefined) return known;
  const kept = (h.stmt('SELECT value_counts IS NOT NULL FROM search_keys WHERE id = ?').pluck().get(keyId) as number | undefined) !== 0;
  status?.kept.set(keyId, kept);
  return kept;
}

/** A key's state after its statistics were updated by the commit. */
export interface CountedKey {
  id: number;
  entities: number;
  /** Rows of the key in search_value_counts; null when it keeps none. */
  valueCounts: number | null;
  recheckAt: number;
}

/**
 * At the end of a commit, per key it touched: applies the commit's value deltas (`null`: not
 * collected, the key was thought to keep no counts), drops the counts of a key past its limit, and
 * counts afresh a key without them that has reached `recheck_at` documents.
 */
export function applyValueCounts(h: SqliteHandle, key: CountedKey, deltas: ValueDeltas | null): void {
  if (key.valueCounts === null) {
    if (key.entities > 0 && key.entities >= key.recheckAt) recount(h, key.id, key.entities);
    return;
  }
  // Kept, but this commit's changes were not collected (another connection turned them on since
  // this one looked): they cannot be brought up to date, so they go until the next look.
  if (deltas === null) return drop(h, key.id, key.entities);
  let rows = key.valueCounts;
  const bump = h.stmt(
    'UPDATE search_value_counts SET live = live + ?, removed = removed + ? WHERE key_id = ? AND value = ? RETURNING live, removed',
  );
  for (const [value, delta] of deltas) {
    if (delta.live === 0 && delta.removed === 0) continue;
    const after = bump.get(delta.live, delta.removed, key.id, value) as { live: number; removed: number } | undefined;
    if (after === undefined) {
      // Unreachable while the counts agree with the rows; if they ever did not, drop rather than keep a wrong count.
      if (delta.live < 0 || delta.removed < 0) return drop(h, key.id, key.entities);
      h.stmt('INSERT INTO search_value_counts (key_id, value, live, removed) VALUES (?, ?, ?, ?)').run(
        key.id,
        value,
        delta.live,
        delta.removed,
      );
      rows++;
    } else if (after.live < 0 || after.removed < 0) {
      return drop(h, key.id, key.entities);
    } else if (after.live === 0 && after.removed === 0) {
      h.stmt('DELETE FROM search_value_counts WHERE key_id = ? AND value = ?').run(key.id, value);
      rows--;
    }
  }
  if (rows > countLimit(key.entities)) return drop(h, key.id, key.entities);
  if (rows !== key.valueCounts) h.stmt('UPDATE search_keys SET value_counts = ? WHERE id = ?').run(rows, key.id);
}

function drop(h: SqliteHandle, keyId: number, entities: number): void {
  h.stmt('DELETE FROM search_value_counts WHERE key_id = ?').run(keyId);
  h.stmt('UPDATE search_keys SET value_counts = NULL, recheck_at = ? WHERE id = ?').run(Math.max(1, 2 * entities), keyId);
  statuses.get(h)?.kept.set(keyId, false);
}

/** `recount` for a key whose statistics were computed apart (an initial load's, adapters/sqlite/initial-load.ts). */
export function recountValues(h: SqliteHandle, keyId: number, entities: number): void {
  recount(h, keyId, entities);
}

/** The key's counts from its value rows, if it has few enough distinct values; else none until twice the documents. */
function recount(h: SqliteHandle, keyId: number, entities: number): void {
  const limit = countLimit(entities);
  // Stops at the first value past the limit: a key of unique values costs limit + 1 rows, not all of them.
  const distinct = h
    .stmt('SELECT COUNT(*) FROM (SELECT DISTINCT value FROM search_values WHERE key_id = ? LIMIT ?)')
    .pluck()
    .get(keyId, limit + 1) as number;
  if (distinct > limit) return drop(h, keyId, entities);
  h.stmt('DELETE FROM search_value_counts WHERE key_id = ?').run(keyId);
  h.stmt(
    `INSERT INTO search_value_counts (key_id, value, live, removed)
       SELECT key_id, value, SUM(removed = 0), SUM(removed = 1) FROM search_values WHERE key_id = ? GROUP BY value`,
  ).run(keyId);
  h.stmt('UPDATE search_keys SET value_counts = ?, recheck_at = 0 WHERE id = ?').run(distinct, keyId);
  statuses.get(h)?.kept.set(keyId, true);
}
