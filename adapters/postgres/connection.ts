import pg from 'pg';
import { createHandle, type PgHandle } from './database';
import type { Stores } from './entities';
import type { PostgresAdapterOptions } from './options';
import { PropertyKeys } from './property-keys';
import type { ReplicaSet } from './replicas';
import { migrate } from './schema';
import { TimeseriesStore } from './timeseries';

const { Pool } = pg;

/** How long a request waits for a new connection of the adapter's own pool (an unreachable server). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Opens the database: the host's pool or a new one (with an 'error' listener, so that a connection the
 * server ends does not end the process), the schema migrated, the replicas opened. A failure ends the
 * pool the adapter made (or takes the listener off the host's) and rejects.
 */
export async function openDatabase(
  options: PostgresAdapterOptions,
  replicas: ReplicaSet | undefined,
  onPoolError: () => void,
): Promise<{ handle: PgHandle; stores: Stores }> {
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
    const stores = { timeseries: new TimeseriesStore(opened), keys: new PropertyKeys(opened) };
    await replicas?.open(schema);
    return { handle: opened, stores };
  } catch (error) {
    if (options.pool === undefined) await pool.end().catch(() => undefined);
    else pool.off('error', onPoolError);
    throw error;
  }
}
