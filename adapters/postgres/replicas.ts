import pg from 'pg';
import { CatalogError } from '../../src/errors';
import { createHandle, type PgHandle } from './database';
import { PropertyKeys } from './property-keys';

const { Pool } = pg;

/** A hot standby to read from: a connection string, or a pool of the host's (never ended by the adapter). */
export type ReplicaOption = string | { connectionString: string } | { pool: pg.Pool };

export interface ReplicaSettings {
  /** A replica further behind its primary than this is skipped until it catches up (default 10 000 ms). */
  maxReplicaLagMs?: number;
  /**
   * How long a search may wait for a replica to replay this process's own latest commit before it goes
   * to the primary instead (default 100 ms): a process always finds what it wrote.
   */
  replicaWaitMs?: number;
  /** How often each replica's lag and reachability are checked (default 1 000 ms). */
  replicaCheckIntervalMs?: number;
  /** Where replica state changes are reported (default: a line on stderr). */
  onReplicaEvent?: (message: string) => void;
}

/** A write-ahead log position (`16/B374D848`) as a number that compares. */
function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

interface Replica {
  readonly label: string;
  readonly pool: pg.Pool;
  readonly owned: boolean;
  readonly onError: () => void;
  handle: PgHandle;
  keys: PropertyKeys;
  /** Usable: reachable, in recovery or not, and not further behind than the bound. */
  healthy: boolean;
  /** The greatest log position it was seen to have replayed. */
  replayed: bigint;
  /** Why it is not used, for the report when that changes. */
  reason: string | undefined;
}

const CHECK_SQL = `SELECT pg_is_in_recovery() AS recovery,
  COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text AS replayed,
  CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
       ELSE COALESCE(EXTRACT(EPOCH FROM (clock_timestamp() - pg_last_xact_replay_timestamp())) * 1000, 0) END::float8 AS lag_ms`;

function labelOf(option: ReplicaOption, index: number): string {
  const text = typeof option === 'string' ? option : 'connectionString' in option ? option.connectionString : undefined;
  if (text === undefined) return `replica ${index + 1} (a pool)`;
  try {
    const url = new URL(text);
    return `replica ${url.hostname}:${url.port || '5432'}`;
  } catch {
    return `replica ${index + 1}`;
  }
}

/** The `replicas` option is a list of connection strings, `{ connectionString }` or `{ pool }`. */
export function replicaViolations(replicas: unknown): Array<{ path: string; message: string }> {
  if (replicas === undefined) return [];
  if (!Array.isArray(replicas)) return [{ path: 'replicas', message: 'must be an array' }];
  return replicas.flatMap((r: unknown, i) => {
    const ok =
      (typeof r === 'string' && r !== '') ||
      (typeof r === 'object' && r !== null && (typeof (r as { connectionString?: unknown }).connectionString === 'string' || 'pool' in r));
    return ok ? [] : [{ path: `replicas[${i}]`, message: 'must be a connection string, { connectionString } or { pool }' }];
  });
}

/**
 * Hot standbys that searches, aggregations and scrolls are sent to, round-robin; everything else stays
 * on the primary. Each replica is checked every interval: one that cannot be reached, or whose replay is
 * further behind than `maxReplicaLagMs`, is skipped until a later check finds it well again. A search
 * goes to a replica only once that replica has replayed this process's own latest commit (waiting up to
 * `replicaWaitMs`, else the primary answers), so a process never misses what it wrote itself.
 */
export class ReplicaSet {
  private readonly replicas: Replica[];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The primary's log position after this process's latest commit. */
  private written = 0n;
  private readonly maxLagMs: number;
  private readonly waitMs: number;
  private readonly intervalMs: number;
  private readonly report: (message: string) => void;
  private readonly inflight = new Set<Promise<void>>();

  constructor(options: readonly ReplicaOption[], settings: ReplicaSettings, maxConnections: number) {
    this.maxLagMs = settings.maxReplicaLagMs ?? 10_000;
    this.waitMs = settings.replicaWaitMs ?? 100;
    this.intervalMs = settings.replicaCheckIntervalMs ?? 1000;
    this.report = settings.onReplicaEvent ?? ((message) => process.stderr.write(`metacatalog: ${message}\n`));
    this.replicas = options.map((option, index) => {
      const owned = typeof option === 'string' || !('pool' in option);
      const pool = owned
        ? new Pool({
            connectionString: typeof option === 'string' ? option : (option as { connectionString: string }).connectionString,
            max: maxConnections,
          })
        : (option as { pool: pg.Pool }).pool;
      // A standby that restarts ends its idle connections: without a listener that would end the process.
      const onError = (): void => undefined;
      pool.on('error', onError);
      const handle = createHandle(pool, 'public');
      return {
        label: labelOf(option, index),
        pool,
        owned,
        onError,
        handle,
        keys: new PropertyKeys(handle),
        healthy: false,
        replayed: 0n,
        reason: 'not checked yet',
      };
    });
  }

  get size(): number {
    return this.replicas.length;
  }

  /** Binds the replicas to the primary's schema, checks each once (an unreachable one is reported, not fatal) and starts the checks. */
  async open(schema: string): Promise<void> {
    for (const replica of this.replicas) {
      replica.handle = createHandle(replica.pool, schema);
      replica.keys = new PropertyKeys(replica.handle);
    }
    await Promise.all(this.replicas.map((r) => this.check(r)));
    this.timer = setInterval(() => {
      for (const replica of this.replicas) this.track(this.check(replica));
    }, this.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.inflight]);
    for (const replica of this.replicas) {
      if (replica.owned) await replica.pool.end().catch(() => undefined);
      else replica.pool.off('error', replica.onError);
    }
  }

  /** Records the primary's log position after a commit of this process. */
  noteCommit(lsn: string): void {
    const position = parseLsn(lsn);
    if (position > this.written) this.written = position;
  }

  /**
   * Runs a read on the next healthy replica that has replayed this process's writes, or on the
   * primary (`onPrimary`) when none has. A replica that fails with a connection error is marked
   * down and the primary answers.
   */
  async read<T>(onReplica: (handle: PgHandle, keys: PropertyKeys) => Promise<T>, onPrimary: () => Promise<T>): Promise<T> {
    const replica = await this.pick();
    if (!replica) return onPrimary();
    try {
      return await onReplica(replica.handle, replica.keys);
    } catch (error) {
      if (error instanceof CatalogError || !isConnectionFailure(error)) throw error;
      this.setState(replica, false, `unreachable (${(error as Error).message})`);
      return onPrimary();
    }
  }

  /**
   * A read the primary could not answer because it cannot be reached: on the healthy standby furthest
   * along (its replay is all the primary had sent it), `undefined` when none answers. The standby's data
   * may miss the primary's last commits that never reached it (asynchronous replication).
   */
  async readWhilePrimaryAway<T>(onReplica: (handle: PgHandle, keys: PropertyKeys) => Promise<T>): Promise<{ value: T } | undefined> {
    const healthy = this.replicas.filter((r) => r.healthy).sort((a, b) => (b.replayed > a.replayed ? 1 : b.replayed < a.replayed ? -1 : 0));
    for (const replica of healthy) {
      try {
        return { value: await onReplica(replica.handle, replica.keys) };
      } catch (error) {
        if (error instanceof CatalogError || !isConnectionFailure(error)) throw error;
        this.setState(replica, false, `unreachable (${(error as Error).message})`);
      }
    }
    return undefined;
  }

  private async pick(): Promise<Replica | undefined> {
    const healthy = this.replicas.filter((r) => r.healthy);
    if (healthy.length === 0) return undefined;
    const first = this.next++ % healthy.length;
    const ordered = [...healthy.slice(first), ...healthy.slice(0, first)];
    const caughtUp = ordered.find((r) => r.replayed >= this.written);
    if (caughtUp) return caughtUp;
    // Wait (a little) for one of them to replay this process's latest commit.
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      for (const replica of ordered) {
        if (await this.hasReplayed(replica, this.written)) return replica;
      }
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private async hasReplayed(replica: Replica, position: bigint): Promise<boolean> {
    try {
      const [row] = await replica.handle.query<{ replayed: string }>(
        'SELECT COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text AS replayed',
      );
      if (row) replica.replayed = parseLsn(row.replayed);
      return replica.replayed >= position;
    } catch (error) {
      this.setState(replica, false, `unreachable (${(error as Error).message})`);
      return false;
    }
  }

  private track(work: Promise<void>): void {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
  }

  private async check(replica: Replica): Promise<void> {
    try {
      const [row] = await replica.handle.query<{ recovery: boolean; replayed: string; lag_ms: number }>(CHECK_SQL);
      if (!row) return;
      const replayed = parseLsn(row.replayed);
      if (replayed > replica.replayed) replica.replayed = replayed;
      const lag = Number(row.lag_ms);
      if (lag > this.maxLagMs) this.setState(replica, false, `${Math.round(lag)} ms behind its primary (the bound is ${this.maxLagMs} ms)`);
      else this.setState(replica, true, undefined);
    } catch (error) {
      this.setState(replica, false, `unreachable (${(error as Error).message})`);
    }
  }

  private setState(replica: Replica, healthy: boolean, reason: string | undefined): void {
    const changed = replica.healthy !== healthy || (!healthy && replica.reason === 'not checked yet');
    replica.healthy = healthy;
    replica.reason = reason;
    if (!changed) return;
    this.report(healthy ? `${replica.label}: serving searches` : `${replica.label}: skipped, ${reason}; searches go to the primary`);
  }
}

/** A failure to reach the server (refused, reset, terminated, timed out), as opposed to an error in a statement. */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P03' || /^E[A-Z]+$/.test(code))) return true;
  return /Connection terminated|connection timeout|not queryable/i.test((error as Error | null)?.message ?? '');
}
