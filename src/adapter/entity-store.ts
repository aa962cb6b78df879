/**
 * Part of the adapter contract: the entity store, with the one atomic commit. Every other part is
 * either served by the same backend or built on top of this one (see `composeAdapter`).
 *
 * - Not found: unknown URNs are left out of answers (`readEntities`, `scanEntities`); never an error.
 * - Atomic: `commit` is the only way to change stored state, and it applies all of a batch or none of it.
 *   It rejects with `CONFLICT` (a `CatalogError`) when an entity's version differs from `expectVersion`.
 *   No transaction is ever held open across an `await`.
 * - Order: `readEntities` follows the URNs asked (duplicates once); `scanEntities` is in URN order by
 *   code units (SQLite `BINARY` collation).
 * - Errors thrown on purpose are `CatalogError`s (`CONFLICT`, or `INVALID_INPUT` for input that cannot be
 *   stored); anything else is a bug or an I/O failure.
 */
import type { AspectVersionPut, NewChangeEvent } from './change-log';
import type { NewJob } from './job-queue';
import type { TimeseriesIndexRef, TimeseriesRow } from './timeseries-store';
import type { SearchDocument } from './search-index';
import type { JsonObject, StoredAspect, StoredEntity } from './values';

/** An aspect to store, fully stamped by the domain: what a read returns afterwards. */
export type AspectPut = StoredAspect;

/** What a commit does to one entity. */
export interface EntityWrite {
  urn: string;
  entityType: string;
  /** The entity version the domain read; 0 means "must not exist yet". A mismatch rejects the whole batch with CONFLICT. */
  expectVersion: number;
  /** Aspects to insert or replace. */
  put?: AspectPut[];
  /** Aspect names to delete (absent ones are ignored). */
  delete?: string[];
  /** Delete the entity with all its aspects, its search document, its timeseries rows and its kept aspect versions. */
  deleteEntity?: boolean;
  /** The entity's new search document; `null` removes it; undefined leaves it as it is. */
  searchDocument?: SearchDocument | null;
}

/**
 * One atomic change. An entity store applies `entities`; the other members belong to the parts the
 * store's commit also serves (search documents, jobs, change events, kept versions). A store composed
 * with `composeAdapter` that serves only entities receives `entities` and `now` alone: the composer
 * turns the rest into records of its own, written by the same commit.
 */
export interface WriteBatch {
  entities?: EntityWrite[];
  jobs?: NewJob[];
  /** Jobs whose work this batch completes (deleted atomically with the rest). Only the claimant may complete. */
  completeJobs?: Array<{ id: string; workerId: string }>;
  /**
   * The writer's time (epoch ms): new jobs' `createdAt` and default `runAt`. A catalog always sets it from
   * its own clock; an adapter uses its own clock only for a batch written without one.
   */
  now?: number;
  /**
   * Change events (transactional outbox): appended atomically with the rest of the batch, in the
   * order given. Each gets an `id` greater than every id committed before it (ids follow commit
   * order, also across processes); ids are never reused, not even after retention removed events.
   */
  events?: NewChangeEvent[];
  /**
   * Earlier aspect versions to keep (the values this batch replaces or deletes), stored atomically with
   * the rest. A version already kept for the same URN, aspect and version number is replaced.
   */
  aspectVersions?: AspectVersionPut[];
  /**
   * Timeseries rows appended atomically with the rest (an index is created on first use), in the
   * order given. Only for adapters declaring `capabilities.timeseriesInCommit`; the domain appends the
   * rows right after the commit for the others.
   */
  timeseries?: Array<{ index: TimeseriesIndexRef; rows: TimeseriesRow[] }>;
}

/** Which entities `scanEntities` lists, and with which aspects. */
export interface EntityScanRequest {
  entityType?: string;
  requireAspect?: string;
  /** The aspects each entity comes with (default: all of its aspects). */
  aspectNames?: readonly string[];
  afterUrn?: string;
  limit: number;
}

/** What an entity store can do beyond the required members, declared, never guessed. */
export interface EntityStoreCapabilities {
  /** Data survives `close()` and a process restart. The suite's durability tests run only then. */
  readonly durable: boolean;
  /**
   * The store implements `changeToken()`. The domain then keeps what it read (structured property
   * definitions) while the token holds; without it, the domain reads again every time.
   */
  readonly changeToken: boolean;
}

/** The entity store part. */
export interface EntityStore {
  /** A short name for messages and logs, e.g. `sqlite`. */
  readonly name: string;
  readonly capabilities: EntityStoreCapabilities;

  /** Prepares the store (migrations). Called once by `createCatalog` before anything else; idempotent. */
  open(): Promise<void>;
  /** Releases resources. Calls after `close` reject. */
  close(): Promise<void>;

  /**
   * Reads entities. Unknown URNs are left out; order follows `urns` (duplicates once).
   * `aspectNames` limits which aspects are returned (the entity is returned even when it has none of them).
   */
  readEntities(urns: readonly string[], aspectNames?: readonly string[]): Promise<StoredEntity[]>;

  /**
   * Lists entities in URN order, starting after `afterUrn`: optionally only those of one type and/or
   * only those that carry `requireAspect`. Each comes with the aspects named in `aspectNames`
   * (default: all of its aspects).
   */
  scanEntities(request: EntityScanRequest): Promise<StoredEntity[]>;

  /**
   * Applies a batch atomically. Rejects with `CONFLICT` (and applies nothing) when an entity's version
   * differs from `expectVersion`, or a job to complete is not held by that worker.
   */
  commit(batch: WriteBatch): Promise<void>;

  /**
   * Optional: a token that changes whenever a committed write, by this process or by another one,
   * may have changed stored entities. Two equal tokens mean no entity changed in between, so the
   * domain may reuse what it read under the first one (it caches structured property definitions
   * this way). Stores that cannot tell this cheaply leave it out (and declare `capabilities.changeToken`
   * false), and the domain then always reads.
   */
  changeToken?(): Promise<string>;

  /**
   * Optional: which stored aspects hold exactly the values asked, answered from one committed state
   * without building the entities (the re-ingest of unchanged metadata asks this of every aspect it
   * sends). For each query, in order: the match (the query's own value and the aspect's system metadata
   * as stored) when the store holds that value for that entity and aspect; undefined when it holds
   * another value, none, or cannot tell cheaply (a value stored in another key order, say). Undefined
   * never claims a difference: the domain then compares inside its unit of work. Without this member the
   * domain always does. The answers are read-only: an adapter may share (frozen) objects between them.
   */
  matchAspects?(queries: readonly AspectMatchQuery[]): Promise<Array<AspectMatch | undefined>>;
}

/**
 * A stored aspect that holds the asked value: what the domain reads of it to tell that an upsert changes
 * nothing (never its version or stamps, which a compare would otherwise have to read and build).
 */
export type AspectMatch = Pick<StoredAspect, 'value' | 'systemMetadata'>;

/** One question of `matchAspects`: does the entity's aspect hold this value? */
export interface AspectMatchQuery {
  urn: string;
  aspect: string;
  value: JsonObject;
}

/** Options every reference adapter accepts for tests: a hook called inside `commit`'s transaction. */
export interface FaultInjectionOptions {
  /**
   * Called inside the transaction after each entity of a batch has been written (with its index).
   * Throwing from it must leave nothing of the batch behind. For tests only.
   */
  faultInjector?: (step: { entityIndex: number; urn: string }) => void;
}
