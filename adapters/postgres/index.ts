import { composeAdapter } from '../../src/adapter/compose-adapter';
import { partOf, partOverHandle } from '../../src/adapter/part-binding';
import type { AdapterCapabilities, EntityStore, PropertyValueIndex, StorageAdapter } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { openDatabase } from './connection';
import type { PgHandle } from './database';
import * as changeFeed from './changes';
import { ChangeListener } from './changes';
import * as entityRows from './entities';
import { createPostgresInitialLoad } from './initial-load';
import * as jobs from './jobs';
import { validate, type PostgresAdapterOptions, type PostgresAdapterSettings } from './options';
import { aggregate } from './aggregate';
import * as search from './search';
import * as searchStore from './search-store';
import type { TimeseriesStore } from './timeseries';
import { isConnectionFailure, ReplicaSet } from './replicas';

export type { PostgresAdapterOptions, PostgresAdapterSettings, PostgresConnection } from './options';
export type { ReplicaOption, ReplicaSettings } from './replicas';

const CAPABILITIES: AdapterCapabilities = {
  durable: true,
  // A cheap cross-process token would need a round trip per read; the domain reads instead.
  changeToken: false,
  changeFeed: true,
  timeseriesInCommit: true,
};

/**
 * The PostgreSQL adapter, for several processes (or machines) on one database: migrations under an
 * advisory lock, every commit one transaction with optimistic version checks, the job queue shared
 * with `FOR UPDATE SKIP LOCKED`, one table per timeseries index.
 *
 * `createPostgresAdapter({ connectionString })` or `createPostgresAdapter({ pool })`; settings may also
 * come as a second argument (`createPostgresAdapter({ pool }, { schema: 'catalog' })`).
 */
export function createPostgresAdapter(
  connection: PostgresAdapterOptions,
  settings: PostgresAdapterSettings = {},
): StorageAdapter & PropertyValueIndex {
  const options: PostgresAdapterOptions = { ...connection, ...settings };
  validate(options);
  const ownsPool = options.pool === undefined;
  let handle: PgHandle | undefined;
  let stores: entityRows.Stores | undefined;
  let opening: Promise<void> | undefined;
  let closed = false;
  const listener = new ChangeListener(() => h());
  const replicas = options.replicas?.length ? new ReplicaSet(options.replicas, options, options.maxConnections ?? 10) : undefined;

  function base(): PgHandle {
    if (closed) throw new Error('the PostgreSQL adapter is closed');
    if (!handle) throw new Error('the PostgreSQL adapter is not open: call open() first');
    return handle;
  }
  /** While an initial load runs, every statement goes through its connection (its tables are locked by it). */
  function h(): PgHandle {
    return initialLoad.active()?.handle ?? base();
  }
  function ts(): TimeseriesStore {
    h();
    return (initialLoad.active()?.stores ?? stores!).timeseries;
  }
  const initialLoad = createPostgresInitialLoad(base, () => stores!);

  // An idle pooled connection that the server ends (a restart, 57P01) is an 'error' event of the pool:
  // without a listener it would end the process. The pool drops the connection itself; the next
  // statement that fails reports the outage.
  const onPoolError = (): void => undefined;

  async function doOpen(): Promise<void> {
    ({ handle, stores } = await openDatabase(options, replicas, onPoolError));
  }

  const entities: EntityStore = {
    name: 'postgres',
    capabilities: CAPABILITIES,
    async open() {
      if (closed) throw new Error('the PostgreSQL adapter is closed');
      opening ??= doOpen().catch((error: unknown) => {
        opening = undefined;
        throw error;
      });
      await opening;
    },
    async close() {
      if (closed) return;
      closed = true;
      await opening?.catch(() => undefined);
      await initialLoad.closing().catch(() => undefined);
      await listener.close();
      await replicas?.close();
      const pool = handle?.pool;
      handle = undefined;
      if (pool && ownsPool) await pool.end();
      else pool?.off('error', onPoolError);
    },
    async readEntities(urns, aspectNames) {
      if (!replicas) return entityRows.readEntities(h(), urns, aspectNames);
      try {
        return await entityRows.readEntities(h(), urns, aspectNames);
      } catch (error) {
        // The primary cannot be reached: a standby answers entity reads (token checks among them) meanwhile.
        if (!isConnectionFailure(error)) throw error;
        const answered = await replicas.readWhilePrimaryAway((db) => entityRows.readEntities(db, urns, aspectNames));
        if (!answered) throw error;
        return answered.value;
      }
    },
    scanEntities: async (request) => entityRows.scanEntities(h(), request),
    async commit(batch) {
      const loading = initialLoad.active();
      if (loading?.loadingEntities) throw new CatalogError('UNAVAILABLE', 'an initial load is in progress: writes wait for its end');
      await entityRows.commit(h(), loading?.stores ?? stores!, batch, options.faultInjector);
      if (batch.events?.length) listener.signal.notify();
      if (replicas) {
        // Where the primary's log stands after this commit: searches wait for a replica to replay it.
        const [row] = await h().query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
        if (row) replicas.noteCommit(row.lsn);
      }
    },
  };

  return composeAdapter({
    entities,
    search: {
      async search(request) {
        const primary = () => search.search(h(), stores!.keys, request);
        return replicas ? replicas.read((db, keys) => search.search(db, keys, request), primary) : primary();
      },
      async aggregate(request) {
        const primary = () => aggregate(h(), stores!.keys, request);
        return replicas ? replicas.read((db, keys) => aggregate(db, keys, request), primary) : primary();
      },
      // Full text is indexed inside every commit: nothing is deferred.
      flushSearchIndex: async () => void h(),
    },
    propertyValues: partOverHandle('propertyValues', h, {
      ...searchStore,
      findEntitiesWithSeveralPropertyValues: (db, request) => searchStore.findEntitiesWithSeveralPropertyValues(db, stores!.keys, request),
    }),
    jobs: partOverHandle('jobs', h, jobs),
    timeseries: partOf('timeseries', ts),
    changes: partOverHandle('changes', h, {
      ...changeFeed,
      async waitForChanges(db, request) {
        const after = BigInt(request.afterId ?? '0');
        await listener.wait(request.timeoutMs, request.signal, async () => {
          const [row] = await db.query<{ last_id: string }>(`SELECT last_id FROM ${db.s}.change_counter`);
          return row !== undefined && BigInt(row.last_id) > after;
        });
      },
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
}
