import { Buffer } from 'node:buffer';
import { decodeCursor, encodeCursor, malformedCursor } from '../../src/adapter/cursor';
import type {
  JsonObject,
  TimeseriesIndexRef,
  TimeseriesIndexSize,
  TimeseriesPage,
  TimeseriesQuery,
  TimeseriesRow,
} from '../../src/adapter/types';
import { copyJson } from './json-copy';
import type { UndoLog } from './undo-log';

interface StoredRow {
  /** Insertion order, across all indexes. */
  readonly seq: number;
  readonly urn: string;
  readonly timestampMillis: number;
  /** A private copy, never handed out. */
  readonly value: JsonObject;
  /** Estimated size, see `estimateBytes`. */
  readonly bytes: number;
}

/** One index. Its state is replaced as a whole by deletions, so an undo only has to put it back. */
interface TimeseriesIndex {
  readonly ref: TimeseriesIndexRef;
  /** Ascending by (timestampMillis, seq): oldest first. */
  rows: StoredRow[];
  bytes: number;
  /** URN → number of its rows, so deleting an entity skips the indexes that hold none of its rows. */
  rowCountByUrn: Map<string, number>;
}

interface Position {
  timestampMillis: number;
  seq: number;
}

/** Timeseries rows per index, each index kept sorted so that pages and truncations need no sort. */
export class TimeseriesStore {
  private readonly indexes = new Map<string, TimeseriesIndex>();
  private lastSeq = 0;

  /** Appends rows; with `log` (inside a commit) the append is undone with the rest of a failed commit. */
  appendTimeseries(ref: TimeseriesIndexRef, rows: readonly TimeseriesRow[], log?: UndoLog): void {
    // Copy every value before changing anything: a value that cannot be copied leaves the store as it was.
    const values = rows.map((row) => copyJson(row.value));
    const created = !this.indexes.has(ref.indexName);
    const index = this.indexFor(ref);
    if (rows.length === 0) return;
    if (log) {
      const before = { rows: index.rows, bytes: index.bytes };
      log.record(() => {
        if (created) this.indexes.delete(ref.indexName);
        for (const row of rows) {
          const left = (index.rowCountByUrn.get(row.urn) ?? 1) - 1;
          if (left > 0) index.rowCountByUrn.set(row.urn, left);
          else index.rowCountByUrn.delete(row.urn);
        }
        Object.assign(index, before);
      });
    }
    const added: StoredRow[] = rows.map((row, position) => ({
      seq: ++this.lastSeq,
      urn: row.urn,
      timestampMillis: row.timestampMillis,
      value: values[position]!,
      bytes: estimateBytes(row.urn, values[position]!),
    }));
    added.sort(comparePositions);
    const newest = index.rows[index.rows.length - 1];
    // Rows usually arrive in time order: then they go at the end, otherwise they are merged in.
    index.rows = !newest || comparePositions(newest, added[0]!) < 0 ? index.rows.concat(added) : mergeSorted(index.rows, added);
    for (const row of added) {
      index.bytes += row.bytes;
      index.rowCountByUrn.set(row.urn, (index.rowCountByUrn.get(row.urn) ?? 0) + 1);
    }
  }

  queryTimeseries(query: TimeseriesQuery): TimeseriesPage {
    const cursor = query.cursor === undefined ? undefined : decodeMemoryCursor(query.cursor);
    const index = this.indexes.get(query.indexName);
    if (!index || query.limit <= 0) return { rows: [] };
    const { rows } = index;
    // Walk down from the lower of the upper bounds that apply: the end time (inclusive) and the cursor (exclusive).
    let end = rows.length;
    if (query.endTimeMillis !== undefined) end = rowsUpTo(rows, query.endTimeMillis);
    if (cursor) end = Math.min(end, rowsBefore(rows, cursor));
    const page: StoredRow[] = [];
    let more = false;
    for (let position = end - 1; position >= 0; position--) {
      const row = rows[position]!;
      if (query.startTimeMillis !== undefined && row.timestampMillis < query.startTimeMillis) break;
      if (query.urn !== undefined && row.urn !== query.urn) continue;
      if (page.length === query.limit) {
        more = true;
        break;
      }
      page.push(row);
    }
    const last = page[page.length - 1];
    return {
      rows: page.map((row) => ({ urn: row.urn, timestampMillis: row.timestampMillis, value: copyJson(row.value) })),
      ...(more && last ? { nextCursor: encodeMemoryCursor(last) } : {}),
    };
  }

  timeseriesIndexSizes(): TimeseriesIndexSize[] {
    return [...this.indexes.values()]
      .map((index) => ({ ...index.ref, rows: index.rows.length, bytes: index.bytes }))
      .sort((a, b) => (a.indexName < b.indexName ? -1 : a.indexName > b.indexName ? 1 : 0));
  }

  countTimeseries(ref: TimeseriesIndexRef, endTimeMillis: number): { total: number; matching: number } {
    const index = this.indexes.get(ref.indexName);
    if (!index) return { total: 0, matching: 0 };
    return { total: index.rows.length, matching: rowsUpTo(index.rows, endTimeMillis) };
  }

  /** Deletes the oldest rows with `timestampMillis <= endTimeMillis`, at most `limit`. */
  deleteTimeseriesBatch(ref: TimeseriesIndexRef, endTimeMillis: number, limit: number): number {
    const index = this.indexes.get(ref.indexName);
    if (!index || limit <= 0) return 0;
    const removed = Math.min(limit, rowsUpTo(index.rows, endTimeMillis));
    if (removed > 0) this.keep(index, index.rows.slice(removed));
    return removed;
  }

  /** Replaces the rows with those newer than `endTimeMillis`; returns how many went. */
  rebuildTimeseriesIndex(ref: TimeseriesIndexRef, endTimeMillis: number): number {
    const index = this.indexes.get(ref.indexName);
    if (!index) return 0;
    const removed = rowsUpTo(index.rows, endTimeMillis);
    this.keep(index, index.rows.slice(removed));
    return removed;
  }

  /** Removes the rows of `urn` from every index of `entityType`. */
  deleteUrn(entityType: string, urn: string, log: UndoLog): void {
    for (const index of this.indexes.values()) {
      if (index.ref.entityType !== entityType || !index.rowCountByUrn.has(urn)) continue;
      const before = { rows: index.rows, bytes: index.bytes, rowCountByUrn: index.rowCountByUrn };
      this.keep(
        index,
        index.rows.filter((row) => row.urn !== urn),
      );
      log.record(() => Object.assign(index, before));
    }
  }

  /** Swaps in a fresh state holding only `rows` (a new array: the old state stays intact for an undo). */
  private keep(index: TimeseriesIndex, rows: StoredRow[]): void {
    const rowCountByUrn = new Map<string, number>();
    let bytes = 0;
    for (const row of rows) {
      bytes += row.bytes;
      rowCountByUrn.set(row.urn, (rowCountByUrn.get(row.urn) ?? 0) + 1);
    }
    index.rows = rows;
    index.bytes = bytes;
    index.rowCountByUrn = rowCountByUrn;
  }

  private indexFor(ref: TimeseriesIndexRef): TimeseriesIndex {
    let index = this.indexes.get(ref.indexName);
    if (!index) {
      index = {
        ref: { indexName: ref.indexName, entityType: ref.entityType, aspect: ref.aspect },
        rows: [],
        bytes: 0,
        rowCountByUrn: new Map(),
      };
      this.indexes.set(ref.indexName, index);
    }
    return index;
  }
}

/** The same estimate every time: the JSON of the value, the URN, and 16 bytes for timestamp and sequence. */
function estimateBytes(urn: string, value: JsonObject): number {
  return Buffer.byteLength(JSON.stringify(value)) + Buffer.byteLength(urn) + 16;
}

function comparePositions(a: Position, b: Position): number {
  return a.timestampMillis - b.timestampMillis || a.seq - b.seq;
}

/** How many rows (ascending) come before `position`: the index of the first row at or after it. */
function rowsBefore(rows: readonly StoredRow[], position: Position): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (comparePositions(rows[middle]!, position) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** How many rows (ascending) have `timestampMillis <= endTimeMillis`. */
function rowsUpTo(rows: readonly StoredRow[], endTimeMillis: number): number {
  return rowsBefore(rows, { timestampMillis: endTimeMillis, seq: Infinity });
}

function mergeSorted(a: readonly StoredRow[], b: readonly StoredRow[]): StoredRow[] {
  const merged: StoredRow[] = new Array<StoredRow>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) merged[k++] = comparePositions(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) merged[k++] = a[i++]!;
  while (j < b.length) merged[k++] = b[j++]!;
  return merged;
}

function encodeMemoryCursor(position: Position): string {
  return encodeCursor({ t: position.timestampMillis, s: position.seq });
}

function decodeMemoryCursor(cursor: string): Position {
  const position = decodeCursor(cursor, ({ t, s }) =>
    typeof t === 'number' && Number.isFinite(t) && Number.isSafeInteger(s) ? { timestampMillis: t, seq: s as number } : undefined,
  );
  if (!position) throw malformedCursor('scrollId', 'is not a timeseries cursor this catalog gave out');
  return position;
}
