import { availableParallelism } from 'node:os';
import type {
  AdapterCapabilities,
  AggregateRequest,
  EntityStore,
  FacetResult,
  PropertyValueIndex,
  SearchRequest,
  SearchResponse,
  StorageAdapter,
} from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { ChangeSignal } from '../../src/adapter/change-signal';
import { composeAdapter } from '../../src/adapter/compose-adapter';
import { partOverHandle } from '../../src/adapter/part-binding';
import { matchAspects } from './aspect-match';
import * as aspects from './aspects';
import * as changes from './changes';
import { waitForChanges } from './change-wait';
import { openConnection } from './connection';
import { createSqliteCommitter } from './committer';
import { createSqliteInitialLoad } from './initial-load';
import { registerInternals } from './internals';
import * as jobs from './jobs';
import { checkedDurability, checkedReaderThreads, type SqliteAdapterOptions } from './options';
import { startReadPool, type ReadPool } from './read-pool';
import * as propertyValues from './property-values';
import { scanEntities } from './scan';
import * as search from './search';
import * as searchStore from './search-store';
import { flushSearchText } from './search-text-queue';
import { createHandle, type SqliteHandle } from './statements';
import { mainFileOf } from './wal-sync';
import { refreshStatistics, StatisticsKeeper } from './statistics';
import * as timeseries from './timeseries';

export { backupSqliteDatabase } from './backup';
export type { SqliteBackupResult } from './backup';

export type { SqliteAdapterOptions, SqliteDurability } from './options';

const CAPABILITIES: AdapterCapabilities = {
  durable: true,
  changeToken: true,
  changeFeed: true,
  timeseriesInCommit: true,
};

/**
 * The SQLite adapter: better-sqlite3 on a real file (or `':memory:'`), WAL, cached prepared
 * statements, migrations on `user_version`, every multi-row write in one transaction. Composed from
 * its parts (`composeAdapter`): the entity store below, whose commit (write-batch.ts) writes what every
 * part keeps, and the modules that read each part, over the same connection.
 */
export function createSqliteAdapter(options: SqliteAdapterOptions): StorageAdapter & PropertyValueIndex {
  const durability = checkedDurability(options);
  const readerThreads = checkedReaderThreads(options, availableParallelism());
  /** The reader threads that answer searches, once open (none in memory, with `readerThreads: 0`, or where they cannot start). */
  let readPool: ReadPool | undefined;
  let handle: SqliteHandle | undefined;
  /** While open() starts the commit thread. */
  let opening: Promise<void> | undefined;
  let closed = false;
  const changeSignal = new ChangeSignal();
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const statistics = new StatisticsKeeper();

  function h(): SqliteHandle {
    if (closed) throw new Error('the SQLite adapter is closed');
    if (!handle) throw new Error('the SQLite adapter is not open: call open() first');
    return handle;
  }

  const committer = createSqliteCommitter(
    h,
    { faultInjector: options.faultInjector, busyTimeoutMs },
    {
      committed: (batch) => {
        if (batch.events?.length) changeSignal.notify();
      },
      statistics,
    },
  );
  const durable = <T>(result: T): Promise<T> => committer.durable(result);
  /** A read that fails while an initial load has the indexes dropped (initial-load.ts) is UNAVAILABLE, not an SQL error. */
  function duringLoad<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (!closed && handle && initialLoad.blocksCommits())
        throw new CatalogError('UNAVAILABLE', 'an initial load is in progress: reads wait for its end');
      throw error;
    }
  }
  const initialLoad = createSqliteInitialLoad(h, durability === 'normal' ? 'NORMAL' : 'FULL', () => {
    committer.steady(h());
    readPool?.reset();
  });

  /**
   * A search or an aggregation on a reader thread when there are some (read-pool.ts), else on the host's
   * connection. Pending full text is moved into FTS5 here first (a reader does not write). Its change token
   * is the host connection's, read before and after: equal, nothing was committed meanwhile and the
   * reader read that state; different, the answer gets a token no state has, so that whoever checks it
   * against one reads again (src/core/search/service.ts).
   */
  async function searchOnReader(request: SearchRequest): Promise<SearchResponse> {
    const host = h();
    if (!readPool) return search.search(host, request);
    if (request.text !== undefined) flushSearchText(host);
    const before = searchStore.databaseVersion(host);
    const response = await readPool.run('search', request);
    const after = handle ? searchStore.databaseVersion(handle) : undefined;
    response.changeToken = before === after ? before : `${after ?? before}+`;
    return response;
  }

  /** An aggregation on a reader thread when there are some (see searchOnReader). */
  async function aggregateOnReader(request: AggregateRequest): Promise<FacetResult[]> {
    const host = h();
    if (!readPool) return search.aggregate(host, request);
    if (request.text !== undefined) flushSearchText(host);
    return readPool.run('aggregate', request);
  }

  // Every member is async on the outside (the contract must fit network databases) and synchronous
  // inside: better-sqlite3 never holds a transaction open across an await.
  const entities: EntityStore = {
    name: 'sqlite',
    capabilities: CAPABILITIES,
    open() {
      if (closed) return Promise.reject(new Error('the SQLite adapter is closed'));
      if (handle) return Promise.resolve();
      opening ??= (async () => {
        const opened = createHandle(openConnection(options, durability));
        try {
          // Commits on a thread of their own where they can (committer.ts).
          await committer.attach(opened, { durability, offEventLoop: options.syncOffEventLoop !== false });
        } catch (error) {
          committer.detach();
          opened.db.close();
          throw error;
        }
        const file = readerThreads > 0 ? mainFileOf(opened.db) : undefined;
        if (file !== undefined) {
          try {
            readPool = await startReadPool({ filename: file, busyTimeoutMs }, readerThreads);
          } catch {
            // The threads' program cannot be found or built here: searches stay on the host's connection.
            readPool = undefined;
          }
        }
        handle = opened;
        statistics.start(() => handle?.db); // a long-running process keeps its statistics fresh
      })().finally(() => {
        opening = undefined;
      });
      return opening;
    },
    async close() {
      if (closed) return;
      if (opening) await opening.catch(() => undefined);
      // Writes queued for the next group are committed before the connection goes.
      if (handle) committer.flush();
      // A load that did not complete leaves the catalog as it was before it (empty).
      if (handle) initialLoad.closing();
      closed = true;
      await committer.settled();
      // Searches in flight on the reader threads are answered first.
      await readPool?.close();
      readPool = undefined;
      statistics.stop();
      // What SQLite recommends before closing a connection: refresh stale statistics (never keeping
      // those of tiny tables, which would mislead the next long-running process: statistics.ts).
      if (handle?.db.open) refreshStatistics(handle.db, 'running');
      handle?.db.close();
      handle = undefined;
      committer.detach();
    },
    readEntities: async (urns, aspectNames) => duringLoad(() => aspects.readEntities(h(), urns, aspectNames)),
    scanEntities: async (request) => duringLoad(() => scanEntities(h(), request)),
    matchAspects: async (queries) => duringLoad(() => matchAspects(h(), queries)),
    async commit(batch) {
      h();
      if (initialLoad.blocksCommits()) throw new CatalogError('UNAVAILABLE', 'an initial load is in progress: writes wait for its end');
      return committer.submit(batch);
    },
    changeToken: async () => searchStore.databaseVersion(h()),
  };

  const adapter = composeAdapter({
    entities,
    search: {
      search: searchOnReader,
      aggregate: aggregateOnReader,
      async flushSearchIndex() {
        flushSearchText(h());
      },
    },
    propertyValues: partOverHandle('propertyValues', h, propertyValues),
    // Writes outside the committer are on disk before they are acknowledged (durable, above).
    jobs: partOverHandle('jobs', h, {
      ...jobs,
      claimJobs: (db, request) => durable(jobs.claimJobs(db, request)),
      releaseJob: (db, id, workerId, outcome) => durable(jobs.releaseJob(db, id, workerId, outcome)),
      renewJobLease: (db, id, workerId, lockedUntil) => durable(jobs.renewJobLease(db, id, workerId, lockedUntil)),
    }),
    timeseries: partOverHandle('timeseries', h, {
      ...timeseries,
      appendTimeseries: (db, index, rows) => durable(timeseries.appendTimeseries(db, index, rows)),
      deleteTimeseriesBatch: (db, index, end, limit) => durable(timeseries.deleteTimeseriesBatch(db, index, end, limit)),
      rebuildTimeseriesIndex: (db, index, end) => durable(timeseries.rebuildTimeseriesIndex(db, index, end)),
    }),
    changes: partOverHandle('changes', h, {
      ...changes,
      pruneChanges: (db, request) => durable(changes.pruneChanges(db, request)),
      waitForChanges: (db, request) => waitForChanges(db, request, changeSignal, () => !closed && handle !== undefined),
    }),
    committedByStore: ['search', 'jobs', 'timeseries', 'changes'],
    initialLoad: {
      begin: () => initialLoad.begin(),
      loadEntities: (writes) => initialLoad.loadEntities(writes),
      buildSearch: () => initialLoad.buildSearch(),
      complete: () => initialLoad.complete(),
      abandon: () => initialLoad.abandon(),
    },
  });
  return registerInternals(adapter, {
    commitPlace: () => committer.place(),
    commitThread: () => committer.thread(),
    hostConnectionChanges: () => h().db.prepare('SELECT total_changes()').pluck().get() as number,
    readerThreads: () => readPool?.threads() ?? [],
  });
}
