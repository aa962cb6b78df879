/** What the SQLite adapter and its reader threads (read-worker.ts) say to each other: plain, structured-clone-able data. */
import type { AggregateRequest, FacetResult, SearchRequest, SearchResponse } from '../../src/adapter/types';
import type { FromThread, SerializedError, ToThread } from './commit-worker-protocol';

/** A reader's start: the database file (already open and migrated by the adapter's own connection). */
export interface ReadWorkerData {
  readonly filename: string;
  readonly busyTimeoutMs: number;
}

/** The reads a reader thread answers, by name: the request each takes and what it answers. */
export interface ReadMethods {
  search: { request: SearchRequest; result: SearchResponse };
  aggregate: { request: AggregateRequest; result: FacetResult[] };
}

export type ReadMethod = keyof ReadMethods;

export type ToReadWorker =
  | { readonly type: 'read'; readonly id: number; readonly method: ReadMethod; readonly request: ReadMethods[ReadMethod]['request'] }
  | ToThread<ReadWorkerData>;

export type FromReadWorker =
  | FromThread
  | { readonly type: 'answer'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'answer'; readonly id: number; readonly ok: false; readonly error: SerializedError };
