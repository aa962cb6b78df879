import type { AdapterCapabilities, FaultInjectionOptions, StorageAdapter } from '../../src/adapter/types';
import { ChangeSignal } from '../../src/adapter/change-signal';
import { ChangeStore } from './changes';
import { commitBatch, type CommitStores } from './commit';
import { EntityStore } from './entities';
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
   * Change feed bounds: at most this many events (default 10,000, about 13 MB of heap for datasets
   * with five structured properties; a host that follows a long feed in memory passes more, such as
   * 100,000 for about 130 MB) and kept versions per aspect (default 100).
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
 */
export function createMemoryAdapter(options: MemoryAdapterOptions = {}): StorageAdapter {
  const { faultInjector } = options;
  const now = options.now ?? Date.now;
  let state: MemoryState | undefined = createState(now, options);
  const changeSignal = new ChangeSignal();
  /** Commits so far (failed ones too): the change token. */
  let commits = 0;

  function current(): MemoryState {
    if (!state) throw new Error('adapter is closed');
    return state;
  }

  return {
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
      try {
        commitBatch(current(), batch, faultInjector);
      } finally {
        commits++;
      }
      if (batch.events?.length) changeSignal.notify();
    },
    async readChanges(query) {
      return current().changes.read(query);
    },
    async readAspectVersions(request) {
      return current().changes.readVersions(request);
    },
    async pruneChanges(request) {
      return current().changes.prune(request);
    },
    async waitForChanges(request) {
      const page = current().changes.read({ after: request.afterId, limit: 1 });
      if (page.events.length) return;
      await changeSignal.wait(request.timeoutMs, request.signal);
    },
    async changeToken() {
      current();
      return String(commits);
    },

    async search(request) {
      const response = current().search.search(request);
      response.changeToken = String(commits);
      return response;
    },
    async aggregate(request) {
      return current().search.aggregate(request);
    },
    async findEntitiesWithPropertyValues(request) {
      return current().search.findEntitiesWithPropertyValues(request);
    },
    async countEntitiesWithPropertyValues(propertyUrn, definitionKey) {
      return current().search.countEntitiesWithPropertyValues(propertyUrn, definitionKey);
    },
    async findEntitiesWithSeveralPropertyValues(request) {
      return current().search.findEntitiesWithSeveralPropertyValues(request);
    },

    async claimJobs(request) {
      return current().jobs.claim(request);
    },
    async releaseJob(id, workerId, outcome) {
      current().jobs.release(id, workerId, outcome);
    },
    async renewJobLease(id, workerId, lockedUntil) {
      return current().jobs.renewLease(id, workerId, lockedUntil);
    },
    async listJobs(request) {
      return current().jobs.list(request);
    },

    async appendTimeseries(index, rows) {
      current().timeseries.append(index, rows);
    },
    async queryTimeseries(query) {
      return current().timeseries.query(query);
    },
    async timeseriesIndexSizes() {
      return current().timeseries.sizes();
    },
    async countTimeseries(index, endTimeMillis) {
      return current().timeseries.count(index, endTimeMillis);
    },
    async deleteTimeseriesBatch(index, endTimeMillis, limit) {
      return current().timeseries.deleteBatch(index, endTimeMillis, limit);
    },
    async rebuildTimeseriesIndex(index, endTimeMillis) {
      return current().timeseries.rebuild(index, endTimeMillis);
    },
  };
}

function createState(now: () => number, options: MemoryAdapterOptions): MemoryState {
  return {
    entities: new EntityStore(),
    search: createMemorySearch(),
    jobs: new JobQueue(now),
    timeseries: new TimeseriesStore(),
    changes: new ChangeStore(options.maxChangeEvents, options.maxAspectVersions),
  };
}
