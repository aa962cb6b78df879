import type { Job, NewJob, StoredEntity } from '../../adapter/types';
import { isCatalogError, type CatalogError } from '../../errors';
import { actorUrn, type Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import type { JobContext } from '../jobs/runner';
import type { DeclaredJobs } from '../module';
import { applyItem, entityIndexOf, type ApplyDependencies } from './apply-check';
import type { ApplyEdit } from './apply-owner';
import {
  executionUrn,
  isFinished,
  MAX_KEPT_ERRORS,
  progressPut,
  recordOf,
  RESULT_ASPECT,
  type ApplyProgress,
  type ApplyRecord,
} from './apply-record';

/**
 * The background work of an apply job. The first job takes the snapshot: it lists the matches of the
 * search (as the actor who asked, in URN order) and, in one commit, stores the total, queues one job per
 * chunk of URNs and completes itself. Each chunk job then writes its entities through the one write path
 * (checked by the values' own rules and the actor's privileges) and, in the same commit, adds its counts
 * to the progress and completes itself: a process stopped mid-way loses nothing and repeats nothing.
 */

export const APPLY_JOB_TYPE = 'structuredProperty.applyToMatches';
/** Matches listed per search page while taking the snapshot. */
const SNAPSHOT_PAGE = 10_000;
const MAX_CONFLICT_RETRIES = 5;

export function snapshotJob(jobId: string): NewJob {
  return { type: APPLY_JOB_TYPE, payload: { jobId } };
}

function chunkJob(jobId: string, chunk: number, urns: readonly string[]): NewJob {
  return { type: APPLY_JOB_TYPE, payload: { jobId, chunk, urns: [...urns] } };
}

function readPayload(job: Job): { jobId: string; chunk?: { index: number; urns: string[] } } {
  const { jobId, chunk, urns } = job.payload;
  if (typeof jobId !== 'string') throw new Error(`job ${job.id} has a malformed payload`);
  if (chunk === undefined) return { jobId };
  if (typeof chunk !== 'number' || !Array.isArray(urns) || urns.some((u) => typeof u !== 'string'))
    throw new Error(`job ${job.id} has a malformed payload`);
  return { jobId, chunk: { index: chunk, urns: urns as string[] } };
}

/** Thrown inside a chunk's unit of work when the job was cancelled or failed meanwhile: nothing of the chunk is written. */
class JobStopped extends Error {}

/** The apply job's handler, declared for createCatalog to register. */
export function applyJobs(ctx: CatalogContext, deps: ApplyDependencies): DeclaredJobs {
  const readRecord = async (urn: string): Promise<ApplyRecord | undefined> => recordOf((await ctx.adapter.readEntities([urn]))[0]);

  /** Commits the job's completion, with the record's bookkeeping edit (nothing changes once the job is finished). */
  const finish = async (job: Job, jobContext: JobContext, actor: Actor, urn: string, edit: ApplyEdit): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.pipeline.bookkeep(actorUrn(actor), [{ op: 'edit', urn, aspect: RESULT_ASPECT, edit, path: '' }], {
          message: `cannot record the progress of ${urn}`,
          completeJobs: [{ id: job.id, workerId: jobContext.workerId }],
        });
        return;
      } catch (error) {
        // A cancel got there first: read again.
        if (!isCatalogError(error) || error.code !== 'CONFLICT' || attempt >= MAX_CONFLICT_RETRIES) throw error;
        await jobContext.renewLease();
      }
    }
  };

  const failed = (message: string): ApplyEdit => ({ kind: 'fail', message });

  const takeSnapshot = async (job: Job, jobContext: JobContext, jobId: string): Promise<void> => {
    const urn = executionUrn(jobId);
    const record = await readRecord(urn);
    if (!record || isFinished(record.progress.status))
      return finish(job, jobContext, record?.request.actor ?? 'urn:li:corpuser:unknown', urn, { kind: 'finish' });
    const { actor, scope, chunkSize } = record.request;
    const urns: string[] = [];
    try {
      let scrollId: string | null | undefined;
      do {
        const page = await deps.search.scroll(actor, { ...scope, count: SNAPSHOT_PAGE, ...(scrollId ? { scrollId } : {}) });
        for (const r of page.searchResults) urns.push(r.entity.urn);
        scrollId = page.nextScrollId;
        await jobContext.renewLease();
      } while (scrollId);
    } catch (error) {
      // The search is refused now (a filter's property soft-deleted meanwhile, the actor gone): the job fails.
      if (!refusal(error)) throw error;
      return finish(job, jobContext, actor, urn, failed(`the search is refused: ${(error as Error).message}`));
    }
    const chunks: NewJob[] = [];
    for (let i = 0; i * chunkSize < urns.length; i++) chunks.push(chunkJob(jobId, i, urns.slice(i * chunkSize, (i + 1) * chunkSize)));
    return finish(job, jobContext, actor, urn, { kind: 'snapshot', total: urns.length, jobs: chunks });
  };

  const runChunk = async (job: Job, jobContext: JobContext, jobId: string, urns: readonly string[]): Promise<void> => {
    const urn = executionUrn(jobId);
    const record = await readRecord(urn);
    if (!record || isFinished(record.progress.status))
      return finish(job, jobContext, record?.request.actor ?? 'urn:li:corpuser:unknown', urn, { kind: 'finish' });
    const { actor } = record.request;
    const checked = { scope: record.request.scope, edit: record.request.edit, chunkSize: record.request.chunkSize };
    let pending = [...urns];
    const refused: Array<{ urn: string; message: string }> = [];
    const thrownMessages = new Set<string>();
    for (let attempt = 1; ;) {
      const items = pending.map((u, i) => applyItem(u, i, checked));
      const planned = pending;
      try {
        await deps.pipeline.write(actor, items, {
          message: 'entities of the chunk refuse the change',
          completeJobs: [{ id: job.id, workerId: jobContext.workerId }],
          alongside: {
            urn,
            plan: (current: ReadonlyMap<string, StoredEntity>, now: number) => {
              const latest = recordOf(current.get(urn));
              if (!latest || isFinished(latest.progress.status)) throw new JobStopped();
              const p = latest.progress;
              const skipped = planned.filter((u) => !current.has(u)).length;
              const done = p.done + planned.length;
              const failedCount = p.failed + refused.length;
              const finished = done + failedCount >= p.total;
              const progress: ApplyProgress = {
                ...p,
                done,
                failed: failedCount,
                skipped: p.skipped + skipped,
                errors: [...p.errors, ...refused].slice(0, MAX_KEPT_ERRORS),
                ...(finished ? { status: 'DONE' as const, finishedAt: now } : {}),
              };
              return { put: progressPut(progress) };
            },
          },
        });
        return;
      } catch (error) {
        if (error instanceof JobStopped) return finish(job, jobContext, actor, urn, { kind: 'finish' });
        if (isCatalogError(error) && (error.code === 'FORBIDDEN' || error.code === 'UNAUTHENTICATED'))
          return finish(job, jobContext, actor, urn, failed(`stopped: ${error.message}`));
        if (isCatalogError(error) && error.code === 'INVALID_INPUT') {
          const bad = refusedEntities(error, planned.length, thrownMessages);
          for (const index of bad) refused.push({ urn: planned[index]!, message: messageFor(error, index) });
          pending = planned.filter((_, i) => !bad.has(i));
          continue;
        }
        if (isCatalogError(error) && error.code === 'CONFLICT' && attempt < MAX_CONFLICT_RETRIES) {
          // Someone wrote one of these entities (or cancelled) meanwhile: plan again on what is there now.
          attempt++;
          await jobContext.renewLease();
          continue;
        }
        throw error;
      }
    }
  };

  /** A step that gave up after its retries (storage down, say) fails the whole job, so its status does not stay RUNNING. */
  const gaveUp = async (job: Job, error: string): Promise<void> => {
    const urn = executionUrn(readPayload(job).jobId);
    const record = await readRecord(urn);
    if (!record || isFinished(record.progress.status)) return;
    await deps.pipeline.bookkeep(
      actorUrn(record.request.actor),
      [{ op: 'edit', urn, aspect: RESULT_ASPECT, edit: failed(`a step gave up after its retries: ${error}`), path: '' }],
      { message: `cannot record the failure of ${urn}` },
    );
  };

  return {
    [APPLY_JOB_TYPE]: {
      run: async (job, jobContext) => {
        const { jobId, chunk } = readPayload(job);
        if (chunk) await runChunk(job, jobContext, jobId, chunk.urns);
        else await takeSnapshot(job, jobContext, jobId);
        return { done: true };
      },
      onGiveUp: gaveUp,
    },
  };
}

/** Whether an error is the catalog refusing the request (rather than a failure worth a retry). */
function refusal(error: unknown): boolean {
  return isCatalogError(error) && ['INVALID_INPUT', 'FORBIDDEN', 'UNAUTHENTICATED', 'NOT_FOUND'].includes(error.code);
}

/**
 * The entities (by index in the chunk) that refused the edit. Problems collected from the whole chunk
 * name each entity; a problem thrown while planning one entity names only that one, and when the same
 * problem comes back for another entity it is one of the definition (a property soft-deleted meanwhile):
 * every entity of the chunk would refuse it.
 */
function refusedEntities(error: CatalogError, size: number, thrownMessages: Set<string>): Set<number> {
  const indices = new Set<number>();
  for (const v of error.details) {
    const index = entityIndexOf(v.path);
    if (index !== undefined && index < size) indices.add(index);
  }
  if (indices.size === 0) return new Set(Array.from({ length: size }, (_, i) => i));
  if (indices.size === 1) {
    const message = error.details.map((d) => d.message).join('; ');
    if (thrownMessages.has(message)) return new Set(Array.from({ length: size }, (_, i) => i));
    thrownMessages.add(message);
  }
  return indices;
}

function messageFor(error: CatalogError, index: number): string {
  const own = error.details.filter((v) => entityIndexOf(v.path) === index).map((v) => v.message);
  return own.length ? own.join('; ') : (error.details[0]?.message ?? error.message);
}
