import type { CatalogContext } from '../context';
import type { NewJob } from '../../adapter/types';

/** The actor stamped on the writes of the catalog's own housekeeping jobs. */
export const HOUSEKEEPING_ACTOR = 'urn:li:corpuser:__metacatalog';

/**
 * Queues one durable housekeeping job every `intervalMs` by an in-process timer (unref'd: it never
 * keeps a process alive). The job is deduplicated on its type, so at most one is pending; the job itself
 * does not re-queue, since `catalog.settle()` runs every pending job whatever its `runAt`.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: CatalogContext,
    /** Queues the job (the write pipeline's bookkeeping, as the housekeeping actor). */
    private readonly queue: (job: NewJob) => Promise<unknown>,
    private readonly jobType: string,
    private readonly intervalMs: number,
    /** What the job does, for the error report when queueing fails. */
    private readonly what: string,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts the timer (no-op once stopped). */
  schedule(): void {
    if (this.stopped) return;
    this.timer = setInterval(() => {
      this.enqueue().catch((error: unknown) => this.ctx.reportError(error, `queueing ${this.what}`));
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Queues the job now (one pending at a time). */
  async enqueue(): Promise<void> {
    await this.queue({ type: this.jobType, payload: {}, dedupeKey: this.jobType });
  }
}
