/** The SQLite commit: a batch applied inside a transaction, and a group of batches sharing one. */
import type { FaultInjectionOptions, WriteBatch } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import * as aspects from './aspects';
import * as changes from './changes';
import { dictionaryOf } from './dictionary';
import type { BatchOutcome } from './group-commit';
import * as jobs from './jobs';
import * as searchStore from './search-store';
import { movePendingText } from './search-text-queue';
import type { SqliteHandle } from './statements';
import * as timeseries from './timeseries';
import { beginWrite } from './write-lock';

/** Batches of at least this many entities write their full text into FTS5 directly (search-store.ts). */
const DIRECT_TEXT_BATCH = 200;

/**
 * Writes one batch; runs inside a transaction (its own, or a savepoint of its group's). The key statistics it
 * collects are written at its end, or, with `holdCounts`, left for its group to hold and write once.
 */
function applyBatch(db: SqliteHandle, batch: WriteBatch, faultInjector: FaultInjectionOptions['faultInjector'], holdCounts = false): void {
  const now = batch.now ?? Date.now();
  const dictionary = dictionaryOf(db);
  // The aspects this batch writes, for the events that take their value from the row (changes.ts).
  const puts: changes.PutIndex = new Map();
  // The UPSERT events that carry the value of the row their write replaces (changes.ts).
  const successors = changes.successorEvents(batch.events);
  searchStore.resetKeyCounts(db);
  const directText = (batch.entities?.length ?? 0) >= DIRECT_TEXT_BATCH;
  if (directText) movePendingText(db);
  // Timeseries rows of the batch, in the same transaction.
  for (const { index, rows } of batch.timeseries ?? []) if (rows.length) timeseries.appendRows(db, index, rows);
  (batch.entities ?? []).forEach((write, entityIndex) => {
    const existing = db.stmt('SELECT entity_id AS id, version FROM entities INDEXED BY entities_by_urn WHERE urn = ?').get(write.urn) as
      { id: number; version: number } | undefined;
    const found = existing?.version ?? 0;
    if (found !== write.expectVersion) {
      throw new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);
    }
    if (write.deleteEntity) {
      if (existing) {
        changes.detachEntity(db, existing.id, write.urn); // change feed, kept versions
        db.stmt('DELETE FROM aspects INDEXED BY aspects_by_entity WHERE entity_id = ?').run(existing.id);
        searchStore.removeSearchDocument(db, existing.id, directText);
        timeseries.deleteEntityTimeseries(db, write.entityType, write.urn);
        db.stmt('DELETE FROM entities WHERE entity_id = ?').run(existing.id);
      }
    } else {
      let entityId: number;
      let prepared: searchStore.PreparedDocument | undefined;
      if (existing) {
        entityId = existing.id;
        db.stmt('UPDATE entities SET version = ? WHERE entity_id = ?').run(write.expectVersion + 1, entityId);
      } else {
        // A new entity row holds its search document's columns from the start (they are indexed).
        prepared = write.searchDocument ? searchStore.prepareSearchDocument(db, write.searchDocument) : undefined;
        entityId = Number(
          db
            .stmt('INSERT INTO entities (urn, entity_type, version, removed, key_ids) VALUES (?, ?, 1, ?, ?)')
            .run(write.urn, write.entityType, prepared?.removed ?? null, prepared?.keyIds ?? '').lastInsertRowid,
        );
      }
      for (const a of write.put ?? []) {
        if (existing && a.version > 1) {
          // With its successor, the row being replaced holds version a.version - 1 (the version the writer read).
          const carried = successors?.get(changes.putKey(write.urn, a.name))?.aspect === a.value;
          changes.detachAspectEvents(db, entityId, dictionary.idOf(a.name), carried, carried ? a.version - 1 : undefined);
        }
        aspects.putAspect(db, entityId, a);
        puts.set(changes.putKey(write.urn, a.name), { entityId, put: a });
      }
      for (const name of write.delete ?? []) {
        const nameId = dictionary.find(name);
        if (nameId === undefined) continue;
        changes.detachAspectEvents(db, entityId, nameId, false);
        db.stmt('DELETE FROM aspects INDEXED BY aspects_by_entity WHERE entity_id = ? AND name_id = ?').run(entityId, nameId);
      }
      if (write.searchDocument === null) searchStore.removeSearchDocument(db, entityId, directText);
      else if (write.searchDocument)
        searchStore.writeSearchDocument(db, entityId, write.searchDocument, existing !== undefined, directText, prepared);
    }
    faultInjector?.({ entityIndex, urn: write.urn });
  });
  if (!holdCounts) searchStore.applyKeyCounts(db);
  // Completions first: a job that completes itself and queues its follow-up under the same
  // dedupe key must not have the follow-up dropped as a duplicate of itself.
  if (batch.completeJobs?.length) jobs.completeJobs(db, batch.completeJobs);
  if (batch.jobs?.length) jobs.insertJobs(db, batch.jobs, now);
  // Change feed (docs/changes.md): events and kept versions in the same transaction.
  if (batch.events?.length || batch.aspectVersions?.length) changes.writeChanges(db, batch.events, batch.aspectVersions, puts);
}

/**
 * Commits a group of batches in one transaction, so they share one sync (group-commit.ts). Each
 * batch runs in its own savepoint: one that fails (a CONFLICT, a fault) is rolled back alone and
 * reported to its writer; the others commit. A group of one is a plain transaction. The caller runs
 * what follows a commit (wake-ups, statistics) for the batches that succeeded.
 */
export function commitGroup(
  db: SqliteHandle,
  batches: readonly WriteBatch[],
  faultInjector: FaultInjectionOptions['faultInjector'],
  lock: { wait: boolean; busyTimeoutMs: number },
): BatchOutcome[] | 'busy' {
  const dictionary = dictionaryOf(db);
  const outcomes: BatchOutcome[] = [];
  // The write lock first (write-lock.ts): while another process holds it, the committer retries on a
  // timer rather than sleeping in SQLite's busy handler. Inside, better-sqlite3 runs the transaction
  // functions below as savepoints of this transaction.
  if (!beginWrite(db, lock.wait, lock.busyTimeoutMs)) return 'busy';
  try {
    if (batches.length === 1) {
      // No savepoint for a group of one: a failure rolls the whole transaction back (below). A savepoint
      // would copy every page the batch changes into a statement journal first, which past 64 KiB (about
      // 16 pages: a write with its change event and kept version) SQLite spills into a temporary file.
      applyBatch(db, batches[0]!, faultInjector);
      db.db.exec('COMMIT');
      outcomes.push({ ok: true });
    } else {
      const inSavepoint = db.db.transaction((batch: WriteBatch) => applyBatch(db, batch, faultInjector, true));
      // The key statistics of the batches that succeed, written once per key at the group's end.
      const held: searchStore.HeldKeyCounts = new Map();
      db.db.transaction(() => {
        for (const batch of batches) {
          const mark = dictionary.mark();
          try {
            inSavepoint(batch); // nested: better-sqlite3 runs it in a SAVEPOINT
            searchStore.holdKeyCounts(db, held);
            outcomes.push({ ok: true });
          } catch (error) {
            outcomes.push({ ok: false, error });
            dictionary.rollbackTo(mark);
            searchStore.forgetKeyIds(db);
            // SQLite rolled back the whole transaction (I/O error, disk full): the group fails.
            if (!db.db.inTransaction) throw error;
          }
        }
        searchStore.applyKeyCounts(db, held);
      })();
      db.db.exec('COMMIT');
    }
  } catch (error) {
    if (db.db.inTransaction) db.db.exec('ROLLBACK');
    dictionary.rolledBack();
    searchStore.forgetKeyIds(db);
    if (batches.length > 1) throw error;
    return [{ ok: false, error }];
  } finally {
    db.commits += batches.length;
  }
  dictionary.committed();
  return outcomes;
}
