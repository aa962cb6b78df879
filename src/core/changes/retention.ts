import type { NewJob } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { PeriodicJob } from '../jobs/periodic';
import type { DeclaredJobs } from '../module';

/** The job type of change retention; one pending job at a time (dedupe key). */
const CHANGE_RETENTION_JOB = 'changes.retention';
const DAY_MS = 86_400_000;
const BATCH = 5000;

export interface ChangeRetentionOptions {
  /** Kept earlier versions per aspect (default 20). */
  keepVersions?: number;
  /** Kept earlier versions younger than this many days only (default: no age limit). */
  versionsKeepDays?: number;
  /** Kept events (default 1 000 000). */
  keepEvents?: number;
  /** Kept events younger than this many days only (default 30). */
  eventsKeepDays?: number;
  /** How often the retention job is queued (default one hour). */
  intervalMs?: number;
}

/**
 * Enforces change-feed and history retention as a durable background job, queued every `intervalMs` by an in-process timer (like the removal of expired tokens). Each run prunes in
 * batches until nothing is left to prune.
 */
export class ChangeRetention {
  private readonly schedule: PeriodicJob;

  constructor(
    private readonly ctx: CatalogContext,
    /** Queues the retention job (the write pipeline's bookkeeping). */
    queue: (job: NewJob) => Promise<unknown>,
    private readonly options: ChangeRetentionOptions,
  ) {
    this.schedule = new PeriodicJob(ctx, queue, CHANGE_RETENTION_JOB, options.intervalMs ?? 3_600_000, 'change retention');
  }

  /** The retention job, declared for createCatalog to register. */
  jobs(): DeclaredJobs {
    return {
      [CHANGE_RETENTION_JOB]: {
        run: async (_job, context) => {
          await this.run(() => context.renewLease());
          return { commit: {} };
        },
      },
    };
  }

  /** Prunes now; answers how many events and versions went. */
  async run(onBatch?: () => Promise<void>): Promise<{ events: number; versions: number }> {
    const prune = this.ctx.adapter.pruneChanges?.bind(this.ctx.adapter);
    const total = { events: 0, versions: 0 };
    if (!prune) return total;
    const now = this.ctx.clock();
    const { keepVersions = 20, versionsKeepDays, keepEvents = 1_000_000, eventsKeepDays = 30 } = this.options;
    for (;;) {
      const went = await prune({
        keepEvents,
        eventsBefore: now - eventsKeepDays * DAY_MS,
        keepVersions,
        ...(versionsKeepDays !== undefined ? { versionsBefore: now - versionsKeepDays * DAY_MS } : {}),
        limit: BATCH,
      });
      total.events += went.events;
      total.versions += went.versions;
      if (went.events < BATCH && went.versions < BATCH) return total;
      await onBatch?.();
    }
  }

  async start(): Promise<void> {
    // The first run comes one interval after start (a job queued at start would be work for every
    // `settle()` of a fresh catalog).
    if (this.ctx.adapter.pruneChanges) this.schedule.schedule();
  }

  stop(): void {
    this.schedule.stop();
  }
}
