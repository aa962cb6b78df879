/** What the SQLite adapter and its commit thread (commit-worker.ts) say to each other: plain, structured-clone-able data. */
import Database from 'better-sqlite3';
import type { WriteBatch } from '../../src/adapter/types';
import { CatalogError, ERROR_CODES, type CatalogErrorCode, type Violation } from '../../src/errors';

/** The thread's start: the database file (already migrated by the adapter's own connection) and how to commit. */
export interface CommitWorkerData {
  readonly filename: string;
  readonly busyTimeoutMs: number;
  readonly durability: 'full' | 'normal';
}

/** What the adapter tells any of its threads (commit, readers) about the thread's connection, `Data` its start. */
export type ToThread<Data> =
  /** After an initial load replaced the tables' contents: the thread's caches (key ids, dictionary, statements) start over. */
  | { readonly type: 'reset' }
  /** Closes the connection; with `park`, the thread then waits for an `open` instead of ending. */
  | { readonly type: 'close'; readonly park?: boolean }
  /** A parked thread takes another database (the next adapter of the process): answers `ready` or `failed`. */
  | { readonly type: 'open'; readonly data: Data };

/** What any of the adapter's threads answers about its connection. */
export type FromThread =
  | { readonly type: 'ready' }
  /** The connection could not be opened: the thread ends. */
  | { readonly type: 'failed'; readonly error: SerializedError }
  | { readonly type: 'closed' };

export type ToCommitWorker =
  { readonly type: 'commit'; readonly id: number; readonly batches: readonly WriteBatch[] } | ToThread<CommitWorkerData>;

export type FromCommitWorker =
  | FromThread
  /** The outcomes of the groups of one transaction, one per batch, by the id of the message that brought them. */
  | {
      readonly type: 'committed';
      readonly groups: ReadonlyArray<{ readonly id: number; readonly outcomes: readonly SerializedOutcome[] }>;
    };

/**
 * Entities per transaction: every concurrent single write, while bulk batches of 1,000 still commit one by
 * one. The host sends groups up to this size; the thread joins the groups waiting for it up to it too.
 */
export const GROUP_MAX_ENTITIES = 1_000;

/** A batch's weight in a group. */
export const entitiesOf = (batch: WriteBatch): number => Math.max(1, batch.entities?.length ?? 0);

export type SerializedOutcome = { readonly ok: true } | { readonly ok: false; readonly error: SerializedError };

/** An error as it crosses the thread boundary: a CatalogError keeps its code, details and reason; a driver error its code. */
export type SerializedError =
  | {
      readonly kind: 'catalog';
      readonly code: CatalogErrorCode;
      readonly message: string;
      readonly details: readonly Violation[];
      readonly reason?: string;
    }
  | { readonly kind: 'error'; readonly name: string; readonly message: string; readonly code?: string; readonly stack?: string };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof CatalogError) {
    return {
      kind: 'catalog',
      code: error.code,
      message: error.message,
      details: error.details.map((d) => ({ path: d.path, message: d.message })),
      ...(error.reason !== undefined ? { reason: error.reason } : {}),
    };
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      kind: 'error',
      name: error.name,
      message: error.message,
      ...(typeof code === 'string' ? { code } : {}),
      ...(error.stack !== undefined ? { stack: error.stack } : {}),
    };
  }
  return { kind: 'error', name: 'Error', message: String(error) };
}

/** The error again, of the same class where it matters (CatalogError, better-sqlite3's SqliteError). */
export function deserializeError(error: SerializedError): Error {
  if (error.kind === 'catalog') {
    const code = (ERROR_CODES as readonly string[]).includes(error.code) ? error.code : 'INTERNAL';
    return new CatalogError(code, error.message, {
      details: error.details,
      ...(error.reason !== undefined ? { reason: error.reason } : {}),
    });
  }
  const restored: Error & { code?: string } =
    error.name === 'SqliteError' && error.code !== undefined
      ? new Database.SqliteError(error.message, error.code)
      : new Error(error.message);
  if (error.name !== restored.name) restored.name = error.name;
  if (error.code !== undefined) restored.code = error.code;
  if (error.stack !== undefined) restored.stack = error.stack;
  return restored;
}
