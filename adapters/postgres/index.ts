import pg from 'pg';
import type {
  AdapterCapabilities,
  AggregateRequest,
  FacetResult,
  FaultInjectionOptions,
  SearchRequest,
  SearchResponse,
  StorageAdapter,
} from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { createHandle, type PgHandle } from './database';
import * as changeFeed from './changes';
import { ChangeListener } from './changes';
import * as entities from './entities';
import * as jobs from './jobs';
import { PropertyKeys } from './property-keys';
import { migrate } from './schema';
import { aggregate } from './aggregate';
import * as search from './search';
import * as searchStore from './search-store';
import { TimeseriesStore } from './timeseries';
import { isConnectionFailure, ReplicaSet, replicaViolations, type ReplicaOption, type ReplicaSettings } from './replicas';

const { Pool } = pg;

/** Where the database is: a connection string (the adapter makes and ends its own pool) or a pool of the host's. */
export type PostgresConnection =
  | { connectionString: string; pool?: undefined }
  | {
      /** A `pg` pool owned by the host: the adapter uses it and never ends it. */
      pool: pg.Pool;
      connectionString?: undefined;
    };

export interface PostgresAdapterSettings extends FaultInjectionOptions, ReplicaSettings {
  /**
   * The schema that holds the catalog's tables (created when missing). Default: the connection's
   * current schema (normally `public`). Several catalogs can share one database in different schemas.
   */
  schema?: string;
  /** Connections of the pool the adapter makes from a connection string (default 10); also of each replica's pool. */
  maxConnections?: number;
  /**
   * Hot standbys of the database (streaming replication) that searches, aggregations and scrolls go to,
   * round-robin; writes, entity reads, token checks, jobs and the change feed stay on the primary
   * (docs/deploy.md). A replica that cannot be reached, or lags more than `maxReplicaLagMs`, is skipped
   * until it recovers.
   */
  replicas?: readonly ReplicaOption[];
}

export type { ReplicaOption, ReplicaSettings } from './replicas';

export type PostgresAdapterOptions = PostgresConnection & PostgresAdapterSettings;

/** How long a request waits for a new connection of the adapter's own pool (an unreachable server). */
const CONNECT_TIMEOUT_MS = 5_000;

const CAPABILITIES: AdapterCapabilities = {
  durable: true,
  // A cheap cross-process token would need a round trip per read; the domain reads instead.
  changeToken: false,
  changeFeed: true,
  timeseriesInCommit: true,
};

function validate(options: PostgresAdapterOptions): void {
  const hasString = typeof options?.connectionString === 'string' && options.connectionString !== '';
  const hasPool = typeof options?.pool === 'object' && options.pool !== null;
  if (hasString === hasPool) {
    throw new CatalogError('INVALID_INPUT', 'createPostgresAdapter: give either connectionString or pool', {
      details: [{ path: 'connectionString', message: 'exactly one of connectionString and pool is required' }],
    });
  }
  const replicaProblems = replicaViolations(options.replicas);
  if (replicaProblems.length) {
    throw new CatalogError('INVALID_INPUT', `createPostgresAdapter: ${replicaProblems.map((p) => `${p.path} ${p.message}`).join('; ')}`, {
      details: replicaProblems,
    });
  }
  if (options.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.schema)) {
    throw new CatalogError('INVALID_INPUT', `createPostgresAdapter: schema ${JSON.stringify(options.schema)} is not a plain identifier`, {
      details: [{ path: 'schema', message: 'must match [A-Za-z_][A-Za-z0-9_]* (at most 63 characters)' }],
    });
  }
}

/**
 * The PostgreSQL adapter, for several processes (or machines) on one database: migrations under an
 * advisory lock, every commit one transaction with optimistic version checks, the job queue shared
 * with `FOR UPDATE SKIP LOCKED`, one table per timeseries index.
 *
 * `createPostgresAdapter({ connectionString })` or `createPostgresAdapter({ pool })`; settings may also
 * come as a second argument (`createPostgresAdapter({ pool }, { schema: 'catalog' })`).
 */
export function createPostgresAdapter(connection: PostgresAdapterOptions, settings: PostgresAdapterSettings = {}): StorageAdapter {
  const options: PostgresAdapterOptions = { ...connection, ...settings };
  validate(options);
  const ownsPool = options.pool === undefined;
  let handle: PgHandle | undefined;
  let stores: entities.Stores | undefined;
  let opening: Promise<void> | undefined;
  let closed = false;
  const listener = new ChangeListener(() => h());
  const replicas = options.replicas?.length ? new ReplicaSet(options.replicas, options, options.maxConnections ?? 10) : undefined;

  function h(): PgHandle {
    if (closed) throw new Error('the PostgreSQL adapter is closed');
    if (!handle) throw new Error('the PostgreSQL adapter is not open: call open() first');
    return handle;
  }
  function ts(): TimeseriesStore {
    h();
    return stores!.timeseries;
  }

  // An idle pooled connection that the server ends (a restart, 57P01) is an 'error' event of the pool:
  // without a listener it would end the process. The pool drops the connection itself; the next
  // statement that fails reports the outage.
  const onPoolError = (): void => undefined;

  async function doOpen(): Promise<void> {
    const pool =
      options.pool ??
      new Pool({
        connectionString: options.connectionString,
        max: options.maxConnections ?? 10,
        // A server that does not answer (a network partition) fails the request after this, rather than never.
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        // TCP keep-alive notices a peer that vanished without closing the connection.
        keepAlive: true,
      });
    pool.on('error', onPoolError);
    try {
      let schema = options.schema;
      if (schema === undefined) {
        const result = await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema');
        schema = result.rows[0]?.schema ?? 'public';
      }
      const opened = createHandle(pool, schema);
      await migrate(opened);
      handle = opened;
      stores = { timeseries: new TimeseriesStore(opened), keys: new PropertyKeys(opened) };
      await replicas?.open(schema);
    } catch (error) {
      if (ownsPool) await pool.end().catch(() => undefined);
      else pool.off('error', onPoolError);
      throw error;
    }
  }

  return {
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
      await listener.close();
      await replicas?.close();
      const pool = handle?.pool;
      handle = undefined;
      if (pool && ownsPool) await pool.end();
      else pool?.off('error', onPoolError);
    },
    async readEntities(urns, aspectNames) {
      if (!replicas) return entities.readEntities(h(), urns, aspectNames);
      try {
        return await entities.readEntities(h(), urns, aspectNames);
      } catch (error) {
        // The primary cannot be reached: a standby answers entity reads (token checks among them) meanwhile.
        if (!isConnectionFailure(error)) throw error;
        const answered = await replicas.readWhilePrimaryAway((db) => entities.readEntities(db, urns, aspectNames));
        if (!answered) throw error;
        return answered.value;
      }
    },
    async scanEntities(request) {
      return entities.scanEntities(h(), request);
    },
    async commit(batch) {
      await entities.commit(h(), stores!, batch, options.faultInjector);
      if (batch.events?.length) listener.signal.notify();
      if (replicas) {
        // Where the primary's log stands after this commit: searches wait for a replica to replay it.
        const [row] = await h().query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
        if (row) replicas.noteCommit(row.lsn);
      }
    },
    async readChanges(query) {
      return changeFeed.readChanges(h(), query);
    },
    async readAspectVersions(request) {
      return changeFeed.readAspectVersions(h(), request);
    },
    async pruneChanges(request) {
      return changeFeed.pruneChanges(h(), request);
    },
    async waitForChanges(request) {
      const db = h();
      const after = BigInt(request.afterId ?? '0');
      await listener.wait(request.timeoutMs, request.signal, async () => {
        const [row] = await db.query<{ last_id: string }>(`SELECT last_id FROM ${db.s}.change_counter`);
        return row !== undefined && BigInt(row.last_id) > after;
      });
    },
    async flushSearchIndex() {
      // Full text is indexed inside every commit: nothing is deferred.
      h();
    },
    async search(request: SearchRequest): Promise<SearchResponse> {
      const primary = () => search.search(h(), stores!.keys, request);
      return replicas ? replicas.read((db, keys) => search.search(db, keys, request), primary) : primary();
    },
    async aggregate(request: AggregateRequest): Promise<FacetResult[]> {
      const primary = () => aggregate(h(), stores!.keys, request);
      return replicas ? replicas.read((db, keys) => aggregate(db, keys, request), primary) : primary();
    },
    async findEntitiesWithPropertyValues(request) {
      return searchStore.findEntitiesWithPropertyValues(h(), request);
    },
    async countEntitiesWithPropertyValues(propertyUrn, definitionKey) {
      return searchStore.countEntitiesWithPropertyValues(h(), propertyUrn, definitionKey);
    },
    async findEntitiesWithSeveralPropertyValues(request) {
      return searchStore.findEntitiesWithSeveralPropertyValues(h(), stores!.keys, request);
    },
    async claimJobs(request) {
      return jobs.claimJobs(h(), request);
    },
    async releaseJob(id, workerId, outcome) {
      await jobs.releaseJob(h(), id, workerId, outcome);
    },
    async renewJobLease(id, workerId, lockedUntil) {
      return jobs.renewJobLease(h(), id, workerId, lockedUntil);
    },
    async listJobs(request) {
      return jobs.listJobs(h(), request);
    },
    async appendTimeseries(index, rows) {
      await ts().append(index, rows);
    },
    async queryTimeseries(query) {
      return ts().query(query);
    },
    async timeseriesIndexSizes() {
      return ts().sizes();
    },
    async countTimeseries(index, endTimeMillis) {
      return ts().count(index, endTimeMillis);
    },
    async deleteTimeseriesBatch(index, endTimeMillis, limit) {
      return ts().deleteBatch(index, endTimeMillis, limit);
    },
    async rebuildTimeseriesIndex(index, endTimeMillis) {
      return ts().rebuild(index, endTimeMillis);
    },
  };
}
