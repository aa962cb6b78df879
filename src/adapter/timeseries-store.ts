/**
 * Part of the adapter contract: the timeseries store. Append-only rows, one index (table) per entity
 * type × aspect; rows are never overwritten. A commit that deletes an entity (`EntityWrite.deleteEntity`)
 * removes its rows with it.
 *
 * - Not found: an index never written reads as empty (no rows, counts of 0) and is not listed by
 *   `timeseriesIndexSizes`; never an error.
 * - Atomic: each call on its own (an append adds all its rows or none; a rebuild is a swap).
 * - Order: newest `timestampMillis` first, equal times newest appended first.
 */
import type { JsonObject } from './values';

export interface TimeseriesIndexRef {
  /** e.g. `dataset_datasetprofileaspect_v1`; only `[a-z0-9_]`. */
  indexName: string;
  entityType: string;
  aspect: string;
}

export interface TimeseriesRow {
  urn: string;
  timestampMillis: number;
  value: JsonObject;
}

export interface TimeseriesQuery extends TimeseriesIndexRef {
  urn?: string;
  /** Inclusive bounds. */
  startTimeMillis?: number;
  endTimeMillis?: number;
  limit: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
}

export interface TimeseriesPage {
  /** Newest first (then by insertion order, newest first). */
  rows: TimeseriesRow[];
  nextCursor?: string;
}

export interface TimeseriesIndexSize extends TimeseriesIndexRef {
  bytes: number;
  rows: number;
}

/** The timeseries store part. */
export interface TimeseriesStore {
  /** Appends rows to one index, atomically, creating the index on first use. */
  appendTimeseries(index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): Promise<void>;
  /** One page of rows, newest first (see `TimeseriesPage`); `nextCursor` is absent on the last page. */
  queryTimeseries(query: TimeseriesQuery): Promise<TimeseriesPage>;
  /** Every timeseries index that exists, with its size. */
  timeseriesIndexSizes(): Promise<TimeseriesIndexSize[]>;
  /** Rows in the index in total, and those with `timestampMillis <= endTimeMillis`. */
  countTimeseries(index: TimeseriesIndexRef, endTimeMillis: number): Promise<{ total: number; matching: number }>;
  /** Deletes at most `limit` rows with `timestampMillis <= endTimeMillis`; returns how many went. */
  deleteTimeseriesBatch(index: TimeseriesIndexRef, endTimeMillis: number, limit: number): Promise<number>;
  /**
   * Replaces the index with a fresh one holding only rows with `timestampMillis > endTimeMillis`
   * (copy, swap, drop; atomic). Returns how many rows were removed.
   */
  rebuildTimeseriesIndex(index: TimeseriesIndexRef, endTimeMillis: number): Promise<number>;
}
