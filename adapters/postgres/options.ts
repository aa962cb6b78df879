import type pg from 'pg';
import type { FaultInjectionOptions } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { replicaViolations, type ReplicaOption, type ReplicaSettings } from './replicas';

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

export type PostgresAdapterOptions = PostgresConnection & PostgresAdapterSettings;

/** Refuses options that name no database, or both kinds, bad replicas or a schema that is not a plain identifier. */
export function validate(options: PostgresAdapterOptions): void {
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
