/**
 * THE storage/search adapter contract: the composition of its parts, each in its own file.
 *
 * - entity-store.ts: entities and aspects, and the one atomic `commit` (with `WriteBatch`);
 * - search-index.ts: search and aggregation;
 * - property-value-index.ts (optional): which entities carry values of a structured property;
 * - job-queue.ts: the durable queue with leases;
 * - timeseries-store.ts: append-only rows per entity type × aspect;
 * - change-log.ts: change events and kept aspect versions;
 * - values.ts: JSON, audit stamps, stored aspects and entities.
 *
 * An adapter stores and answers typed questions; it makes no business decision. The domain layer
 * (src/core) validates, authorizes, derives search documents and resolves filters before anything
 * reaches an adapter. Everything is async so that an adapter for a network database fits. Each part
 * says what "not found" answers, what is atomic and in which order results come.
 *
 * An adapter implements every part itself (the reference adapters), or brings an entity store and lets
 * `composeAdapter` (compose-adapter.ts) supply the parts it lacks on top of it. Run the conformance
 * suite (`metacatalog/testing`) against it; docs/adapters.md explains how.
 */
import type { ChangeLog } from './change-log';
import type { EntityStore, EntityStoreCapabilities } from './entity-store';
import type { InitialLoad } from './initial-load';
import type { JobQueue } from './job-queue';
import type { PropertyValueIndex } from './property-value-index';
import type { SearchIndex } from './search-index';
import type { TimeseriesStore } from './timeseries-store';

export * from './values';
export * from './entity-store';
export * from './search-index';
export * from './property-value-index';
export * from './job-queue';
export * from './timeseries-store';
export * from './change-log';
export * from './initial-load';

/**
 * What an adapter can do beyond the required members, declared, never guessed. Each flag is read:
 * by the conformance suite (which runs the tests of a capability only for adapters declaring it, and
 * reports the others as skipped) and, where it says so, by the domain.
 */
export interface AdapterCapabilities extends EntityStoreCapabilities {
  /**
   * The adapter keeps change events and aspect versions (`readChanges`, `readAspectVersions`,
   * `pruneChanges`, `waitForChanges`). Without it the domain's change feed and history answer nothing
   * but the current version, and the suite reports the change-feed tests skipped.
   */
  readonly changeFeed: boolean;
  /** `commit` appends the batch's `timeseries` rows in the same atomic step (optional: false when left out). */
  readonly timeseriesInCommit?: boolean;
  /**
   * The adapter has the property-value index part (`findEntitiesWithPropertyValues`,
   * `countEntitiesWithPropertyValues`, `findEntitiesWithSeveralPropertyValues`). Optional: false when left
   * out, and the domain then answers those questions by scanning the stored aspects; the suite's tests
   * of the part are reported skipped.
   */
  readonly propertyValues?: boolean;
}

/**
 * The whole adapter: an entity store with its commit, a search index, a job queue and a timeseries
 * store, and optionally a change log (declared by `capabilities.changeFeed`) and a property-value index
 * (declared by `capabilities.propertyValues`); the reference adapters have both.
 */
export interface StorageAdapter
  extends EntityStore, SearchIndex, JobQueue, TimeseriesStore, Partial<ChangeLog>, Partial<PropertyValueIndex> {
  readonly capabilities: AdapterCapabilities;
  /** Restoring an export into an empty store at the engine's pace (initial-load.ts); optional. */
  readonly initialLoad?: InitialLoad;
}
