import { randomUUID } from 'node:crypto';
import { CatalogError } from '../../errors';
import { actorUrn, type Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import { previewApply, refusal, type ApplyDependencies } from './apply-check';
import { accessRefusal, accessViolations } from './apply-access';
import { checkApplyInput } from './apply-input';
import { snapshotJob } from './apply-job';
import type { ApplyEdit, CancelOutcome } from './apply-owner';
import { LEASE_SCAN_LIMIT, withLease } from './apply-lease';
import { APPLY_TASK, executionUrn, isFinished, isJobId, recordOf, RESULT_ASPECT, statusOf, type ApplyRecord } from './apply-record';
import type { ApplyJob, ApplyOptions, ApplyPreview, ApplyStatus, ApplyToMatchesInput, CancelApplyResult } from './apply-types';

/** Applying structured property values to every match of a search (docs/structured-properties.md). */
export interface ApplyToMatchesService {
  /**
   * With `dryRun`: how many entities match, a sample with their values before and after, and the
   * violations the change would meet; nothing is written. Otherwise the same checks (INVALID_INPUT when
   * any fails), then a durable background job: `{ jobId, matched }`. Needs EDIT_ENTITY_PROPERTIES.
   */
  applyToMatches(actor: Actor, input: ApplyToMatchesInput, options: ApplyOptions & { dryRun: true }): Promise<ApplyPreview>;
  applyToMatches(actor: Actor, input: ApplyToMatchesInput, options?: ApplyOptions): Promise<ApplyJob | ApplyPreview>;
  /** The job's progress (EDIT_ENTITY_PROPERTIES, or being who started it); NOT_FOUND for an unknown id. */
  applyStatus(actor: Actor, jobId: string): Promise<ApplyStatus>;
  /** Stops the job after its current chunk; a finished job is left as it is (`cancelled: false`). */
  cancelApply(actor: Actor, jobId: string): Promise<CancelApplyResult>;
}

const PRIVILEGE = 'EDIT_ENTITY_PROPERTIES';

export function createApplyToMatches(ctx: CatalogContext, deps: ApplyDependencies): ApplyToMatchesService {
  /** The job's record, once the actor may see it: who started it, or anyone holding the privilege. */
  const authorizedRecord = async (actor: Actor, jobId: string): Promise<ApplyRecord> => {
    const principal = await ctx.principal(actor);
    const record = isJobId(jobId) ? recordOf((await ctx.adapter.readEntities([executionUrn(jobId)]))[0]) : undefined;
    if (!record || actorUrn(record.request.actor) !== actorUrn(principal)) await ctx.authorizer.require(principal, PRIVILEGE);
    if (!record) throw new CatalogError('NOT_FOUND', `no apply job ${JSON.stringify(jobId)}`);
    return record;
  };

  const applyToMatches = async (actor: Actor, input: ApplyToMatchesInput, options: ApplyOptions = {}): Promise<ApplyJob | ApplyPreview> => {
    const principal = await ctx.principal(actor);
    await ctx.authorizer.require(principal, PRIVILEGE);
    const checked = await checkApplyInput(deps.registry, deps.properties, principal, input, options ?? {});
    // ACCESS HOOK: matches the actor may not edit (policies with resources) are counted by the dry run and refuse the run.
    const denied = await accessViolations(ctx, deps.search, principal, checked);
    const preview = await previewApply(deps, principal, checked, denied.length > 0);
    preview.violations.unshift(...denied);
    if (options?.dryRun) return preview;
    const forbidden = accessRefusal(preview.violations);
    if (forbidden) throw forbidden;
    if (preview.violations.length) throw refusal(preview.violations, checked);
    const jobId = randomUUID();
    const urn = executionUrn(jobId);
    const now = ctx.clock();
    // The job's record and its first job: bookkeeping of the job (the actor was authorized above), stamped as the actor.
    const edit: ApplyEdit = {
      kind: 'start',
      record: {
        request: {
          task: APPLY_TASK,
          actor: principal,
          requestedAt: now,
          scope: checked.scope,
          edit: checked.edit,
          chunkSize: checked.chunkSize,
          matched: preview.matched,
        },
        progress: {
          status: 'PENDING',
          done: 0,
          total: preview.matched,
          failed: 0,
          skipped: 0,
          errors: [],
          message: null,
          startTimeMs: null,
          finishedAt: null,
        },
      },
      jobs: [snapshotJob(jobId)],
    };
    await deps.pipeline.bookkeep(actorUrn(principal), [{ op: 'edit', urn, aspect: RESULT_ASPECT, edit, path: '' }], {
      message: `cannot record the apply job ${jobId}`,
    });
    return { jobId, matched: preview.matched };
  };

  return {
    applyToMatches: applyToMatches as ApplyToMatchesService['applyToMatches'],

    async applyStatus(actor, jobId) {
      const status = statusOf(jobId, await authorizedRecord(actor, jobId));
      if (isFinished(status.state)) return status;
      return withLease(status, await ctx.adapter.listJobs({ limit: LEASE_SCAN_LIMIT }), ctx.clock());
    },

    async cancelApply(actor, jobId) {
      await authorizedRecord(actor, jobId);
      const principal = await ctx.principal(actor);
      const urn = executionUrn(jobId);
      const edit: ApplyEdit = { kind: 'cancel', by: actorUrn(principal) };
      const { results } = await deps.pipeline.bookkeep(actorUrn(principal), [{ op: 'edit', urn, aspect: RESULT_ASPECT, edit, path: '' }], {
        message: `cannot cancel the apply job ${jobId}`,
      });
      const { cancelled, state } = results[0] as CancelOutcome;
      return {
        jobId,
        cancelled,
        state,
        message: cancelled ? 'the job stops after its current chunk' : `the job has finished already (${state}); nothing to cancel`,
      };
    },
  };
}
