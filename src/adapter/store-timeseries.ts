/**
 * The timeseries store `composeAdapter` supplies when the entity store does not serve one itself: each
 * index is one reserved entity whose aspects are its rows (and a head with the next row number, which
 * orders rows of equal time). Appends, deletions and rebuilds are commits of that entity with its
 * version checked; a commit that deletes a domain entity removes its rows in the same commit.
 */
import { decodeRowCursor, encodeRowCursor } from './cursor';
import type { EntityStore, WriteBatch } from './entity-store';
import type { RecordMutation } from './store-job-queue';
import { padSequence, readRecord, RESERVED_URN_PREFIX, scanRecords, type RecordWrites } from './store-records';
import type { TimeseriesIndexRef, TimeseriesRow, TimeseriesStore } from './timeseries-store';
import type { JsonObject, StoredEntity } from './values';

const INDEX_TYPE = 'metacatalog.timeseries';
const HEAD = 'index';
const ROW_PREFIX = 'row.';

interface StoredRow extends TimeseriesRow {
  sequence: number;
}

export interface StoreTimeseries extends TimeseriesStore {
  /** Removes the rows of the entities the batch deletes, and appends the batch's rows, inside the commit. */
  plan(batch: WriteBatch, writes: RecordWrites): Promise<void>;
}

const indexUrn = (indexName: string): string => `${RESERVED_URN_PREFIX}timeseries:${indexName}`;
const rowName = (sequence: number): string => `${ROW_PREFIX}${padSequence(sequence)}`;

function rowsOf(index: StoredEntity): StoredRow[] {
  const rows: StoredRow[] = [];
  for (const [name, aspect] of Object.entries(index.aspects))
    if (name.startsWith(ROW_PREFIX)) rows.push(aspect.value as unknown as StoredRow);
  return rows;
}

/** Newest first; equal times, newest appended first. */
const newestFirst = (a: StoredRow, b: StoredRow): number => b.timestampMillis - a.timestampMillis || b.sequence - a.sequence;

/** The writes that append `rows` to the index record as read (its head counts on). */
function addRows(index: StoredEntity, ref: TimeseriesIndexRef, rows: readonly TimeseriesRow[], writes: RecordWrites): void {
  let next = (index.aspects[HEAD]?.value.next as number | undefined) ?? 1;
  for (const row of rows) {
    const stored: StoredRow = { urn: row.urn, timestampMillis: row.timestampMillis, value: row.value, sequence: next++ };
    writes.put(index.urn, INDEX_TYPE, index.version, rowName(stored.sequence), stored as unknown as JsonObject);
  }
  writes.put(index.urn, INDEX_TYPE, index.version, HEAD, {
    indexName: ref.indexName,
    entityType: ref.entityType,
    aspect: ref.aspect,
    next,
  });
}

export function createStoreTimeseries(store: EntityStore, mutate: RecordMutation): StoreTimeseries {
  /** Deletes rows at or before the end time, oldest first, at most `limit`; how many went. */
  function deleteUpTo(ref: TimeseriesIndexRef, endTimeMillis: number, limit: number): Promise<number> {
    if (limit <= 0) return Promise.resolve(0);
    return mutate(async (writes) => {
      const index = await readRecord(store, indexUrn(ref.indexName));
      const doomed = rowsOf(index)
        .filter((r) => r.timestampMillis <= endTimeMillis)
        .sort((a, b) => -newestFirst(a, b))
        .slice(0, limit);
      writes.remove(
        index.urn,
        INDEX_TYPE,
        index.version,
        doomed.map((r) => rowName(r.sequence)),
      );
      return doomed.length;
    });
  }

  return {
    async plan(batch, writes) {
      const deleted = new Set((batch.entities ?? []).filter((w) => w.deleteEntity).map((w) => w.urn));
      if (deleted.size)
        await scanRecords(store, INDEX_TYPE, (index) => {
          const names = rowsOf(index)
            .filter((r) => deleted.has(r.urn))
            .map((r) => rowName(r.sequence));
          writes.remove(index.urn, INDEX_TYPE, index.version, names);
        });
      // The batch's rows go into the same commit, grouped by index (one head per index).
      const byIndex = new Map<string, { ref: TimeseriesIndexRef; rows: TimeseriesRow[] }>();
      for (const { index, rows } of batch.timeseries ?? []) {
        const entry = byIndex.get(index.indexName) ?? { ref: index, rows: [] };
        entry.rows.push(...rows);
        byIndex.set(index.indexName, entry);
      }
      for (const { ref, rows } of byIndex.values())
        if (rows.length) addRows(await readRecord(store, indexUrn(ref.indexName)), ref, rows, writes);
    },

    async appendTimeseries(ref, rows) {
      if (!rows.length) return;
      await mutate(async (writes) => addRows(await readRecord(store, indexUrn(ref.indexName)), ref, rows, writes));
    },

    async queryTimeseries(query) {
      const position = query.cursor === undefined ? undefined : decodeRowCursor(query.cursor);
      const index = await readRecord(store, indexUrn(query.indexName));
      const rows = rowsOf(index)
        .filter((r) => query.urn === undefined || r.urn === query.urn)
        .filter(
          (r) =>
            (query.startTimeMillis === undefined || r.timestampMillis >= query.startTimeMillis) &&
            (query.endTimeMillis === undefined || r.timestampMillis <= query.endTimeMillis),
        )
        .filter((r) => !position || r.timestampMillis < position.ts || (r.timestampMillis === position.ts && r.sequence < position.id))
        .sort(newestFirst);
      const page = rows.slice(0, Math.max(0, query.limit));
      const last = page.at(-1);
      return {
        rows: page.map(({ urn, timestampMillis, value }) => ({ urn, timestampMillis, value })),
        ...(rows.length > page.length && last ? { nextCursor: encodeRowCursor({ ts: last.timestampMillis, id: last.sequence }) } : {}),
      };
    },

    async timeseriesIndexSizes() {
      const sizes: Array<TimeseriesIndexRef & { rows: number; bytes: number }> = [];
      await scanRecords(store, INDEX_TYPE, (index) => {
        const head = index.aspects[HEAD]?.value as unknown as TimeseriesIndexRef | undefined;
        if (!head) return;
        const rows = rowsOf(index);
        const bytes = rows.reduce((sum, r) => sum + r.urn.length + JSON.stringify(r.value).length + 16, 0);
        sizes.push({ indexName: head.indexName, entityType: head.entityType, aspect: head.aspect, rows: rows.length, bytes });
      });
      return sizes;
    },

    async countTimeseries(ref, endTimeMillis) {
      const rows = rowsOf(await readRecord(store, indexUrn(ref.indexName)));
      return { total: rows.length, matching: rows.filter((r) => r.timestampMillis <= endTimeMillis).length };
    },

    deleteTimeseriesBatch: deleteUpTo,

    rebuildTimeseriesIndex(ref, endTimeMillis) {
      // One commit removes every row at or before the end time: the swap is atomic as the store's commit is.
      return deleteUpTo(ref, endTimeMillis, Number.MAX_SAFE_INTEGER);
    },
  };
}
