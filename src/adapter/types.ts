/**
 * THE storage/search adapter contract.
 *
 * An adapter stores and answers typed questions; it makes no business decision. The domain layer
 * (src/core) validates, authorizes, derives search documents and resolves filters before anything
 * reaches an adapter. Everything here is async so that an adapter for a network database fits.
 *
 * Conventions that hold for every member:
 * - "Not found" is an absent element or `undefined`, never an error.
 * - Errors an adapter throws on purpose are `CatalogError`s (`CONFLICT` for a failed version check,
 *   `INVALID_INPUT` for input that cannot be stored); anything else is a bug or an I/O failure.
 * - `commit` is the only way to change entities, search documents, jobs, change events and kept aspect
 *   versions, and it is atomic: all of a batch is applied or none of it. No transaction is ever held open across an `await`.
 * - Lists are ordered as each member says; URNs compare by code units (SQLite `BINARY` collation).
 *
 * Run the conformance suite (`metacatalog/testing`) against a new adapter; docs/adapters.md explains how.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Who did something and when (epoch milliseconds). */
export interface AuditStamp {
  time: number;
  actor: string;
}

/** One aspect of one entity, as stored. */
export interface StoredAspect {
  name: string;
  value: JsonObject;
  /** 1 on first write, +1 on every later write of this aspect. */
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
  /** Bookkeeping the domain keeps beside the value (never part of the value a user reads). */
  systemMetadata?: JsonObject;
}

/** An entity with the aspects that were asked for. */
export interface StoredEntity {
  urn: string;
  entityType: string;
  /** Optimistic-concurrency version of the whole entity: +1 on every commit that touches it. */
  version: number;
  aspects: Record<string, StoredAspect>;
}

// ---------------------------------------------------------------------------------------------
// Search documents: derived by the domain from an entity's aspects, indexed by the adapter.
// ---------------------------------------------------------------------------------------------

/** The values of one structured property on one entity, typed, with the definition they were written under. */
export interface SearchDocumentProperty {
  propertyUrn: string;
  /**
   * Identifies the definition incarnation and version the values were written under. A query only
   * matches values whose key equals the key it is given, which is what makes values of a
   * superseded version or of a hard-deleted (and maybe re-created) definition invisible at once.
   */
  definitionKey: string;
  values: Array<string | number>;
}

export interface SearchDocument {
  urn: string;
  entityType: string;
  /** `status.removed`: soft-deleted entities are left out of results unless asked for. */
  removed: boolean;
  /** Full-text fields. `urnKey` is the key part of the URN. */
  text: { name?: string; description?: string; urnKey: string };
  /** Standard searchable fields (e.g. `platform`, `name`), each a list of strings. */
  fields: Record<string, string[]>;
  properties: SearchDocumentProperty[];
}

export const FILTER_OPERATORS = [
  'EQUAL',
  'IEQUAL',
  'IN',
  'CONTAIN',
  'START_WITH',
  'END_WITH',
  'EXISTS',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL_TO',
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL_TO',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** What a condition looks at, already resolved by the domain. */
export type SearchField =
  | { kind: 'entityType' }
  | { kind: 'urn' }
  /** A standard field of the search document's `fields`; always strings. */
  | { kind: 'field'; name: string }
  /** A structured property; only values whose `definitionKey` equals this one count. */
  | { kind: 'property'; propertyUrn: string; definitionKey: string; valueKind: 'string' | 'number' };

/**
 * One condition. `values` are typed already (numbers for a number property). Several values mean
 * "any of". EXISTS has no values; any other operator with no values matches nothing. `negated`
 * inverts the whole condition (a document without the field matches a negated EQUAL).
 *
 * Values compare by type: a number never equals a string. EQUAL and IN are equality; IEQUAL is
 * equality after `toLowerCase()` (Unicode, like JavaScript). CONTAIN, START_WITH and END_WITH are
 * case-sensitive substring tests on strings and never match a number. The four range operators
 * compare numbers numerically and strings by code units (so `YYYY-MM-DD` dates compare as dates);
 * a number never satisfies a bound given as a string, nor the reverse.
 */
export interface SearchCondition {
  field: SearchField;
  operator: FilterOperator;
  values: Array<string | number>;
  negated: boolean;
}

/** OR of ANDs. An empty outer list means "no filter"; an empty inner list matches everything. */
export type SearchFilter = SearchCondition[][];

export interface SearchScope {
  /** Empty means every entity type. */
  entityTypes: string[];
  /**
   * Full-text query over name, description and URN key (never structured-property values); undefined
   * means all (the domain maps `*` and '' to undefined). Analysed by src/adapter/text-analysis.ts,
   * which every adapter applies to the documents' text and to this query alike: tokens of letters
   * and digits, lower-cased and accent-folded; English stop words dropped; Porter-stemmed. A document
   * matches when it contains every query term (a term ending in `*` is a prefix of a term, unstemmed).
   * A query whose terms are all stop words or punctuation matches nothing.
   */
  text?: string;
  filter: SearchFilter;
  /** Include entities whose search document has `removed: true`. */
  includeRemoved: boolean;
}

export interface SearchRequest extends SearchScope {
  /**
   * `urn`: ascending URN, with `afterUrn` as a keyset cursor (stable scrolling while writes happen).
   * `relevance`: full-text score descending, then URN ascending; with no text it is the same as `urn`.
   * Scores are the adapter's own (BM25 family: a match in the name weighs more than one in the
   * description); which documents match is fixed by the contract, their exact ranking is not.
   */
  order: 'urn' | 'relevance';
  /** Keyset cursor for `order: 'urn'` (ignored otherwise): only URNs greater than this one, existing or not. */
  afterUrn?: string;
  /** Results to skip, after `afterUrn`; either order. Default 0. */
  offset?: number;
  limit: number;
}

export interface SearchHit {
  urn: string;
  entityType: string;
  /** Full-text score (higher is better), in `relevance` order with a text query. */
  score?: number;
}

export interface SearchResponse {
  /** Number of documents that match the scope (not only this page). */
  total: number;
  hits: SearchHit[];
  /**
   * Set by adapters declaring `capabilities.changeToken`: the change token of the state this answer was read from. The
   * domain then checks the definitions it cached against it instead of asking for the token before
   * every search (one adapter call fewer per search; a mismatch costs a second resolution).
   */
  changeToken?: string;
}

export interface AggregateRequest extends SearchScope {
  facets: SearchField[];
  /** At most this many buckets per facet. */
  maxValues: number;
}

export interface FacetBucket {
  /** A number for number properties, else a string. */
  value: string | number;
  /** Matching documents that have this value (a document counts once per value). */
  count: number;
}

/**
 * One result per requested facet, in the same order, `field` as given. Buckets are ordered by count
 * descending, then by value ascending (numbers numerically before strings, strings by code units);
 * values no matching document has are absent.
 */
export interface FacetResult {
  field: SearchField;
  buckets: FacetBucket[];
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/** An aspect to store, fully stamped by the domain. */
export interface AspectPut {
  name: string;
  value: JsonObject;
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
  systemMetadata?: JsonObject;
}

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

export interface NewJob {
  type: string;
  payload: JsonObject;
  /** Not claimable before this time (epoch ms); default: now. */
  runAt?: number;
  /** When a pending job with the same key exists, this one is not added. */
  dedupeKey?: string;
}

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
   * order given. Only for adapters declaring `capabilities.timeseriesInCommit`; the domain appends
   * the rows right after the commit for the others.
   */
  timeseries?: Array<{ index: TimeseriesIndexRef; rows: TimeseriesRow[] }>;
}

// ---------------------------------------------------------------------------------------------
// Change feed and aspect history (docs/changes.md)
// ---------------------------------------------------------------------------------------------

/** One committed change of one aspect, named after DataHub's MetadataChangeLog. */
export interface NewChangeEvent {
  entityUrn: string;
  entityType: string;
  aspectName: string;
  /** `UPSERT` (written), `DELETE` (aspect or entity removed), `TRUNCATE` (timeseries rows removed). */
  changeType: 'UPSERT' | 'DELETE' | 'TRUNCATE';
  /** The value after the change; null for a deletion. */
  aspect: JsonObject | null;
  /** The value before the change; null when there was none. */
  previousAspectValue: JsonObject | null;
  created: AuditStamp;
  systemMetadata?: JsonObject;
}

export interface ChangeEvent extends NewChangeEvent {
  /** Opaque cursor: a decimal integer as a string, increasing in commit order. */
  id: string;
}

export interface AspectVersionPut {
  urn: string;
  entityType: string;
  aspect: StoredAspect;
}

export interface ChangeQuery {
  /** Only events with an id greater than this one (a cursor from an earlier answer). */
  after?: string;
  limit: number;
  /** Empty or absent: every entity type / every aspect. */
  entityTypes?: readonly string[];
  aspects?: readonly string[];
}

export interface ChangePage {
  /** Ascending id (= commit order). */
  events: ChangeEvent[];
  /**
   * The smallest id still kept (undefined when the feed is empty): a cursor lower than this one minus
   * one asks for events retention already removed. `lastId` is the greatest id ever assigned.
   */
  oldestId?: string;
  lastId?: string;
  /**
   * The greatest id this read looked at: the last event's id when the page is full, else the greatest
   * id committed when the read ran (filtered reads skip what does not match, so a consumer resumes here).
   */
  scannedId?: string;
}

// ---------------------------------------------------------------------------------------------
// Background jobs: a durable queue with leases.
// ---------------------------------------------------------------------------------------------

export interface Job {
  id: string;
  type: string;
  payload: JsonObject;
  /** How many times it was claimed. */
  attempts: number;
  runAt: number;
  createdAt: number;
  lockedBy: string | null;
  lockedUntil: number | null;
  lastError: string | null;
  /** `pending` (claimable or leased), or `dead` (gave up after the retries; kept for inspection). */
  state: 'pending' | 'dead';
}

export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Ignore `runAt` (used by `settle()` to run retries without waiting for their back-off). */
  ignoreRunAt?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Timeseries: append-only rows, one index (table) per entity type × aspect.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// The adapter
// ---------------------------------------------------------------------------------------------

/**
 * What an adapter can do beyond the required members, declared, never guessed. Each flag is read:
 * by the conformance suite (which runs the tests of a capability only for adapters declaring it, and
 * reports the others as skipped) and, where it says so, by the domain.
 */
export interface AdapterCapabilities {
  /** Data survives `close()` and a process restart. The suite's durability tests run only then. */
  readonly durable: boolean;
  /**
   * The adapter implements `changeToken()`. The domain then keeps what it read (structured property
   * definitions) while the token holds; without it, the domain reads again every time.
   */
  readonly changeToken: boolean;
  /**
   * The adapter keeps change events and aspect versions (`readChanges`, `readAspectVersions`,
   * `pruneChanges`, `waitForChanges`). Without it the domain's change feed and history answer nothing
   * but the current version, and the suite reports the change-feed tests skipped.
   */
  readonly changeFeed: boolean;
  /** `commit` appends the batch's `timeseries` rows in the same atomic step (optional: false when left out). */
  readonly timeseriesInCommit?: boolean;
}

export interface StorageAdapter {
  /** A short name for messages and logs, e.g. `sqlite`. */
  readonly name: string;
  readonly capabilities: AdapterCapabilities;

  /** Prepares the store (migrations). Called once by `createCatalog` before anything else; idempotent. */
  open(): Promise<void>;
  /** Releases resources. Calls after `close` reject. */
  close(): Promise<void>;

  // --- entities and aspects --------------------------------------------------------------------

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
  scanEntities(request: {
    entityType?: string;
    requireAspect?: string;
    aspectNames?: readonly string[];
    afterUrn?: string;
    limit: number;
  }): Promise<StoredEntity[]>;

  /**
   * Applies a batch atomically. Rejects with `CONFLICT` (and applies nothing) when an entity's version
   * differs from `expectVersion`, or a job to complete is not held by that worker.
   */
  commit(batch: WriteBatch): Promise<void>;

  /**
   * Optional: a token that changes whenever a committed write, by this process or by another one,
   * may have changed stored entities. Two equal tokens mean no entity changed in between, so the
   * domain may reuse what it read under the first one (it caches structured property definitions
   * this way). Adapters that cannot tell this cheaply leave it out (and declare `capabilities.changeToken`
   * false), and the domain then always reads.
   */
  changeToken?(): Promise<string>;

  // --- change feed and aspect history (docs/changes.md) ------------------------------------------

  /**
   * Optional (all reference adapters have it): committed change events in ascending id order, only
   * those after `after`, filtered by entity type and aspect name. Reads what is committed; an event
   * never shows up after one with a greater id was answered (ids follow commit order).
   */
  readChanges?(query: ChangeQuery): Promise<ChangePage>;
  /**
   * Optional: kept earlier versions of one aspect (not the current one, which `readEntities` gives),
   * newest (highest version) first, only versions below `beforeVersion`. Not found: an empty list.
   */
  readAspectVersions?(request: { urn: string; aspectName: string; beforeVersion?: number; limit: number }): Promise<StoredAspect[]>;
  /**
   * Optional: retention. Removes events older than `eventsBefore` (epoch ms) and beyond the newest
   * `keepEvents`; aspect versions older than `versionsBefore` and beyond the `keepVersions` newest
   * kept per aspect. At most `limit` rows per kind per call; answers how many went.
   */
  pruneChanges?(request: {
    eventsBefore?: number;
    keepEvents?: number;
    versionsBefore?: number;
    keepVersions?: number;
    limit: number;
  }): Promise<{ events: number; versions: number }>;
  /**
   * Optional: resolves when a commit (of this process or, where the adapter can tell, another one)
   * may have added events, or after `timeoutMs`, or when `signal` aborts; always resolves, never
   * rejects, and leaves no listener or timer behind.
   */
  waitForChanges?(request: { afterId?: string; timeoutMs: number; signal?: AbortSignal }): Promise<void>;

  // --- search ----------------------------------------------------------------------------------

  /**
   * Optional: finishes index work the adapter defers for speed (e.g. SQLite moves pending full-text
   * rows into FTS5 in one batch). `search` and `aggregate` do this themselves before answering; this is
   * for hosts and benchmarks that want the cost paid now.
   */
  flushSearchIndex?(): Promise<void>;

  search(request: SearchRequest): Promise<SearchResponse>;
  aggregate(request: AggregateRequest): Promise<FacetResult[]>;
  /**
   * URNs (ascending, after `afterUrn`) of entities whose search document carries values of the property
   * under any definition key other than `keepDefinitionKey` (all keys when it is undefined). Soft-deleted
   * entities are included. Used by the background clean-up of hard-deleted and superseded values.
   */
  findEntitiesWithPropertyValues(request: {
    propertyUrn: string;
    keepDefinitionKey?: string;
    afterUrn?: string;
    limit: number;
  }): Promise<string[]>;
  /** Number of entities whose search document carries values of the property (any key, removed or not). */
  countEntitiesWithPropertyValues(propertyUrn: string, definitionKey?: string): Promise<number>;

  // --- jobs -------------------------------------------------------------------------------------

  /**
   * Claims up to `limit` pending jobs whose `runAt <= now` (unless `ignoreRunAt`) and whose lease is
   * free or expired (`lockedUntil <= now`): sets `lockedBy`, `lockedUntil = now + leaseMs`, `attempts + 1`.
   * Oldest `runAt` first. Two claimants never get the same job while its lease holds.
   */
  claimJobs(request: ClaimRequest): Promise<Job[]>;
  /**
   * Gives a claimed job back for a retry at `retryAt` (lease cleared, `lastError` kept), or marks it
   * `dead` when `retryAt` is null. Ignored when the job is not held by that worker.
   */
  releaseJob(id: string, workerId: string, outcome: { error: string; retryAt: number | null }): Promise<void>;
  /** Extends a held lease; false when the job is no longer held by that worker. */
  renewJobLease(id: string, workerId: string, lockedUntil: number): Promise<boolean>;
  /** Pending jobs (leased or not) and, when asked, dead ones; oldest first. */
  listJobs(request?: { includeDead?: boolean; limit?: number }): Promise<Job[]>;

  // --- timeseries -------------------------------------------------------------------------------

  /** Appends rows to one index, atomically, creating the index on first use. */
  appendTimeseries(index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): Promise<void>;
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

/** Options every reference adapter accepts for tests: a hook called inside `commit`'s transaction. */
export interface FaultInjectionOptions {
  /**
   * Called inside the transaction after each entity of a batch has been written (with its index).
   * Throwing from it must leave nothing of the batch behind. For tests only.
   */
  faultInjector?: (step: { entityIndex: number; urn: string }) => void;
}
