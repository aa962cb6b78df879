import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { WritePipeline } from '../entities/write-pipeline';
import { HOUSEKEEPING_ACTOR, PeriodicJob } from '../jobs/periodic';
import type { DeclaredJobs } from '../module';
import { expiresAtOf, TOKEN_ASPECT, TOKEN_SCAN } from './model';
import type { TokenEdit } from './owner';
import { scanPages } from '../../adapter/scan-pages';

/** The job type of the clean-up; one pending job at a time (dedupe key). */
const REMOVE_EXPIRED_TOKENS_JOB = 'accessTokens.removeExpired';
/** The actor stamped on the clean-up's writes. */
const TOKEN_CLEANUP_ACTOR = HOUSEKEEPING_ACTOR;

const DEFAULT_INTERVAL_MS = 3_600_000;
const BATCH = 500;

/**
 * Removes the records of expired tokens, revoked ones included (they fail verification anyway, and a
 * verifier's deny-list needs a revoked token only until it expires; this keeps the store and the
 * listings small). Runs as a durable job, queued at start when expired records exist and then every
 * `cleanupIntervalMs` by an in-process timer, and on demand through `catalog.tokens.removeExpired`.
 *
 * The job does not re-queue itself: `catalog.settle()` runs every pending job regardless of its
 * `runAt`, so a self-perpetuating job would never let it settle.
 */
export class TokenCleanup {
  private readonly schedule: PeriodicJob;

  constructor(
    private readonly ctx: CatalogContext,
    private readonly pipeline: WritePipeline,
    intervalMs: number | undefined,
  ) {
    this.schedule = new PeriodicJob(
      ctx,
      (job) => pipeline.bookkeep(HOUSEKEEPING_ACTOR, [], { message: 'cannot queue the removal of expired access tokens', jobs: [job] }),
      REMOVE_EXPIRED_TOKENS_JOB,
      intervalMs ?? DEFAULT_INTERVAL_MS,
      'the removal of expired access tokens',
    );
  }

  /** The clean-up's job, declared for createCatalog to register. */
  jobs(): DeclaredJobs {
    return {
      [REMOVE_EXPIRED_TOKENS_JOB]: {
        run: async (_job, context) => {
          await this.removeExpired(TOKEN_CLEANUP_ACTOR, () => context.renewLease());
          return { commit: {} };
        },
      },
    };
  }

  /** `catalog.tokens.removeExpired(actor)`: MANAGE_ACCESS_TOKENS; returns how many records went. */
  async removeExpiredAs(actor: Actor): Promise<number> {
    const caller = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor, 'MANAGE_ACCESS_TOKENS', "remove expired access tokens' records");
    return this.removeExpired(caller);
  }

  /** Called once the catalog is open: queue a run if there is work, then every interval. */
  async start(): Promise<void> {
    if (this.schedule.isStopped) return;
    if (await this.hasExpired()) await this.schedule.enqueue();
    this.schedule.schedule();
  }

  stop(): void {
    this.schedule.stop();
  }

  private async hasExpired(): Promise<boolean> {
    const now = this.ctx.clock();
    for await (const page of scanPages(this.ctx.adapter, TOKEN_SCAN, BATCH)) {
      if (page.some((e) => isExpired(expiresAtOf(e), now))) return true;
    }
    return false;
  }

  /** Deletes in batches of 500 (one atomic commit each); idempotent, so a re-run after a crash is harmless. */
  private async removeExpired(actor: string, onBatch?: () => Promise<void>): Promise<number> {
    const now = this.ctx.clock();
    let removed = 0;
    for await (const page of scanPages(this.ctx.adapter, TOKEN_SCAN, BATCH)) {
      const expired = page.filter((e) => isExpired(expiresAtOf(e), now)).map((e) => e.urn);
      if (expired.length) {
        // The token owner re-checks each record on the fresh read (the unit of work may retry): only what is still there and still expired goes.
        const edit: TokenEdit = { kind: 'expire', now };
        const { results } = await this.pipeline.bookkeep(
          actor,
          expired.map((urn) => ({ op: 'edit', urn, aspect: TOKEN_ASPECT, edit, path: '' })),
          { message: 'cannot remove expired access tokens' },
        );
        removed += results.filter((gone) => gone === true).length;
        await onBatch?.();
      }
    }
    return removed;
  }
}

function isExpired(expiresAt: number | null | undefined, now: number): boolean {
  return typeof expiresAt === 'number' && expiresAt <= now;
}
