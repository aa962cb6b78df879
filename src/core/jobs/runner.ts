import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Job, StorageAdapter, WriteBatch } from '../../adapter/types';
import { isProcessAlive } from '../../adapter/process';

/** What a job handler gets besides the job: its worker id (to complete the job inside its own commit). */
export interface JobContext {
  workerId: string;
  /** Extends the lease while a long batch runs. */
  renewLease(): Promise<void>;
}

/**
 * Handles one claimed job. It either returns `{ done: true }` after committing its work together with
 * `completeJobs: [{ id, workerId }]` (so the effect and the completion are one atomic step), or returns
 * a batch for the runner to commit (the runner adds the completion). Handlers must be idempotent:
 * a job whose process died is run again.
 */
export type JobHandler = (job: Job, context: JobContext) => Promise<{ done: true } | { commit: WriteBatch }>;

/**
 * Called once when a job of the type gives up after its last attempt (it is kept as `dead`): the place
 * for its owner to record the failure where its users look (an apply job's status, for one).
 */
export type GiveUpHandler = (job: Job, error: string) => Promise<void>;

export interface JobRunnerOptions {
  leaseMs?: number;
  pollIntervalMs?: number;
  maxAttempts?: number;
  /** Run queued jobs in the background (default true). When false, only `settle()` runs them. */
  background?: boolean;
  onError?: (error: unknown, job: Job) => void;
}

export interface SettleReport {
  completed: number;
  /** Jobs that gave up during this settle (kept as `dead`, see `catalog.jobs.list({ includeDead: true })`). */
  failed: Array<{ id: string; type: string; error: string }>;
}

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_MS = 1_000;
const DEFAULT_MAX_ATTEMPTS = 5;

function backoffMs(attempts: number): number {
  return Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 5 * 60_000);
}

/**
 * The in-process worker over the adapter's durable queue. Several runners (in one process or
 * several) may share a queue: claims are exclusive while a lease holds, and a lease that expires
 * (its process died) makes the job claimable again.
 */
export class JobRunner {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly giveUpHandlers = new Map<string, GiveUpHandler>();
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxAttempts: number;
  private readonly background: boolean;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private kicked = false;
  private stopped = false;

  constructor(
    private readonly adapter: StorageAdapter,
    private readonly clock: () => number,
    private readonly options: JobRunnerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.background = options.background ?? true;
  }

  register(type: string, handler: JobHandler, options: { onGiveUp?: GiveUpHandler } = {}): void {
    if (this.handlers.has(type)) throw new Error(`internal: job type ${type} registered twice`);
    this.handlers.set(type, handler);
    if (options.onGiveUp) this.giveUpHandlers.set(type, options.onGiveUp);
  }

  /** Starts the background loop (when enabled) after releasing jobs held by dead processes on this host. */
  async start(): Promise<void> {
    await this.releaseOrphans();
    if (!this.background || this.stopped) return;
    this.timer = setInterval(() => this.kick(), this.pollIntervalMs);
    this.timer.unref();
    this.kick();
  }

  /** Asks the background loop to look for work now (called after a commit that queued jobs). */
  kick(): void {
    if (!this.background || this.stopped) return;
    if (this.draining) {
      this.kicked = true;
      return;
    }
    this.draining = this.drain(false)
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.draining = undefined;
        if (this.kicked) {
          this.kicked = false;
          this.kick();
        }
      });
  }

  /**
   * Runs every job queued so far (and the follow-ups they queue) until none is pending, ignoring
   * retry back-off. Waits for jobs leased by others until they finish or their lease expires.
   */
  async settle(): Promise<SettleReport> {
    const report: SettleReport = { completed: 0, failed: [] };
    for (;;) {
      const ran = await this.drain(true, report);
      if (ran > 0) continue;
      const pending = await this.adapter.listJobs({ limit: 1 });
      if (pending.length === 0) {
        if (this.draining) {
          await this.draining;
          continue;
        }
        return report;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Stops the background loop and waits for the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.draining;
  }

  /** Claims and runs jobs until none is claimable; returns how many ran. */
  private async drain(ignoreRunAt: boolean, report?: SettleReport): Promise<number> {
    let ran = 0;
    for (;;) {
      if (this.stopped && !report) return ran;
      const jobs = await this.adapter.claimJobs({
        workerId: this.workerId,
        now: this.clock(),
        leaseMs: this.leaseMs,
        limit: 1,
        ignoreRunAt,
      });
      if (jobs.length === 0) return ran;
      for (const job of jobs) {
        ran++;
        await this.runOne(job, report);
      }
    }
  }

  private async runOne(job: Job, report?: SettleReport): Promise<void> {
    const handler = this.handlers.get(job.type);
    const context: JobContext = {
      workerId: this.workerId,
      renewLease: async () => {
        await this.adapter.renewJobLease(job.id, this.workerId, this.clock() + this.leaseMs);
      },
    };
    try {
      if (!handler) throw new Error(`no handler for job type "${job.type}"`);
      const outcome = await handler(job, context);
      if ('commit' in outcome) {
        const now = this.clock();
        await this.adapter.commit({
          ...outcome.commit,
          jobs: outcome.commit.jobs?.map((queued) => ({ ...queued, runAt: queued.runAt ?? now })),
          completeJobs: [...(outcome.commit.completeJobs ?? []), { id: job.id, workerId: this.workerId }],
        });
      }
      if (report) report.completed++;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const giveUp = job.attempts >= this.maxAttempts;
      await this.adapter.releaseJob(job.id, this.workerId, {
        error: message,
        retryAt: giveUp ? null : this.clock() + backoffMs(job.attempts),
      });
      if (giveUp && report) report.failed.push({ id: job.id, type: job.type, error: message });
      this.options.onError?.(error, job);
      const onGiveUp = giveUp ? this.giveUpHandlers.get(job.type) : undefined;
      if (onGiveUp) await onGiveUp(job, message).catch((failure: unknown) => this.options.onError?.(failure, job));
    }
  }

  /** Jobs leased by a process on this host that no longer runs are released at once instead of waiting for the lease. */
  private async releaseOrphans(): Promise<void> {
    const host = hostname();
    const now = this.clock();
    for (const job of await this.adapter.listJobs({ limit: 10_000 })) {
      if (!job.lockedBy || job.lockedUntil === null || job.lockedUntil <= now) continue;
      const [jobHost, pidText] = job.lockedBy.split(':');
      const pid = Number(pidText);
      if (jobHost !== host || !Number.isInteger(pid) || pid === process.pid || isProcessAlive(pid)) continue;
      await this.adapter.releaseJob(job.id, job.lockedBy, { error: `worker ${job.lockedBy} stopped before finishing`, retryAt: now });
    }
  }
}
