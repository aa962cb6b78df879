import { composeAdapter } from '../../src/adapter/compose-adapter';
import { partOf } from '../../src/adapter/part-binding';
import type { AdapterCapabilities, EntityStore, FaultInjectionOptions, PropertyValueIndex, StorageAdapter } from '../../src/adapter/types';
import { ChangeStore } from './changes';
import { commitBatch, type CommitStores } from './commit';
import { EntityStore as EntityRows } from './entities';
import { JobQueue } from './jobs';
import { createMemorySearch } from './search';
import { TimeseriesStore } from './timeseries';

export interface MemoryAdapterOptions extends FaultInjectionOptions {
  /**
   * Clock for what the adapter stamps itself: a job's `createdAt` and its default `runAt`.
   * Default `Date.now`; give the catalog's clock when the catalog runs on a fake one.
   */
  now?: () => number;
  /**
   * Change feed bounds: at most this many events (default 10,000, at most about 13 MB of heap for
   * datasets with five structured properties, far less while the entities still hold the values the
   * events carry; a host that follows a long feed in memory passes more, such as 100,000 for at most
   * about 130 MB) and kept versions per aspect (default 100).
   */
  maxChangeEvents?: number;
  maxAspectVersions?: number;
}

const CAPABILITIES: AdapterCapabilities = Object.freeze({
  durable: false,
  changeToken: true,
  changeFeed: true,
  timeseriesInCommit: true,
});

type MemoryState = CommitStores;

/**
 * A storage adapter that keeps everything in plain maps of this process. Nothing survives `close()`.
 * Every value is copied going in and coming out, so callers can never change stored state.
 *
 * Composed from its parts (`composeAdapter`): each store below serves one part under the contract's
 * names, and the entity store's commit (commit.ts) writes what every part keeps in one step.
 */
export function createMemoryAdapter(options: MemoryAdapterOptions = {}): StorageAdapter & PropertyValueIndex {
  const { faultInjector } = options;
  const now = options.now ?? Date.now;
  let state: MemoryState | undefined = createState(now, options);
  /** Commits so far (failed ones too): the change token. */
  let commits = 0;

  function current(): MemoryState {
    if (!state) throw new Error('adapter is closed');
    return state;
  }

  const entities: EntityStore = {
    name: 'memory',
    capabilities: CAPABILITIES,
    async open() {
      current();
    },
    async close() {
      // Idempotent; dropping the state lets the garbage collector take it.
      state = undefined;
    },
    async readEntities(urns, aspectNames) {
      return current().entities.read(urns, aspectNames);
    },
    async scanEntities(request) {
      return current().entities.scan(request);
    },
    async commit(batch) {
      const stores = current();
      try {
        commitBatch(stores, batch, faultInjector);
      } finally {
        commits++;
      }
      if (batch.events?.length) stores.changes.signal.notify();
    },
    async changeToken() {
      current();
      return String(commits);
    },
  };

  return composeAdapter({
    entities,
    search: {
      async search(request) {
        const response = current().search.search(request);
        response.changeToken = String(commits);
        return response;
      },
      async aggregate(request) {
        return current().search.aggregate(request);
      },
    },
    propertyValues: partOf('propertyValues', () => current().search),
    jobs: partOf('jobs', () => current().jobs),
    timeseries: partOf('timeseries', () => current().timeseries),
    changes: partOf('changes', () => current().changes),
    committedByStore: ['search', 'jobs', 'timeseries', 'changes'],
  });
}

function createState(now: () => number, options: MemoryAdapterOptions): MemoryState {
  return {
    entities: new EntityRows(),
    search: createMemorySearch(),
    jobs: new JobQueue(now),
    timeseries: new TimeseriesStore(),
    changes: new ChangeStore(options.maxChangeEvents, options.maxAspectVersions),
  };
}
