import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { Actor } from '../access/actor';
import type { AspectChange } from '../entities/write-plan';
import type { SearchScopeInput } from '../search/input';
import type { CheckedApply } from './apply-input';
import type { ApplyState, ApplyStatus } from './apply-types';

/**
 * The durable record of an apply job: an execution request entity (`urn:li:dataHubExecutionRequest:<id>`)
 * holding the request (who asked, the search, the edit) and the progress, so that the status outlives
 * the process and every chunk updates it in the commit that writes its entities.
 */

const EXECUTION_ENTITY = 'dataHubExecutionRequest';
export const INPUT_ASPECT = 'dataHubExecutionRequestInput';
export const RESULT_ASPECT = 'dataHubExecutionRequestResult';
export const APPLY_TASK = 'applyStructuredProperties';
/** At most this many refusals are kept with the status (the count is in `failed`). */
export const MAX_KEPT_ERRORS = 20;

const URN_PREFIX = `urn:li:${EXECUTION_ENTITY}:`;
const JOB_ID = /^[A-Za-z0-9-]{1,64}$/;

export function executionUrn(jobId: string): string {
  return `${URN_PREFIX}${jobId}`;
}

export function isJobId(jobId: unknown): jobId is string {
  return typeof jobId === 'string' && JOB_ID.test(jobId);
}

/** The request as stored. */
export interface ApplyRequest {
  task: typeof APPLY_TASK;
  actor: Actor;
  requestedAt: number;
  scope: SearchScopeInput;
  edit: CheckedApply['edit'];
  chunkSize: number;
  matched: number;
}

/** The progress as stored. */
export interface ApplyProgress {
  status: ApplyState;
  done: number;
  total: number;
  failed: number;
  skipped: number;
  errors: Array<{ urn: string; message: string }>;
  message: string | null;
  startTimeMs: number | null;
  finishedAt: number | null;
}

export interface ApplyRecord {
  request: ApplyRequest;
  progress: ApplyProgress;
}

/** The record held by an entity; undefined when it holds none (not an apply job). */
export function recordOf(entity: StoredEntity | undefined): ApplyRecord | undefined {
  const request = entity?.aspects[INPUT_ASPECT]?.value as unknown as ApplyRequest | undefined;
  const progress = entity?.aspects[RESULT_ASPECT]?.value as unknown as ApplyProgress | undefined;
  if (!request || !progress || request.task !== APPLY_TASK) return undefined;
  return { request, progress };
}

export function isFinished(state: ApplyState): boolean {
  return state === 'DONE' || state === 'FAILED' || state === 'CANCELLED';
}

export function requestPut(request: ApplyRequest, progress: ApplyProgress): Record<string, AspectChange> {
  return { [INPUT_ASPECT]: { value: json(request) }, [RESULT_ASPECT]: { value: json(progress) } };
}

export function progressPut(progress: ApplyProgress): Record<string, AspectChange> {
  return { [RESULT_ASPECT]: { value: json(progress) } };
}

export function statusOf(jobId: string, record: ApplyRecord): ApplyStatus {
  const { request, progress } = record;
  return {
    jobId,
    state: progress.status,
    done: progress.done,
    total: progress.total,
    failed: progress.failed,
    skipped: progress.skipped,
    errors: progress.errors.map((e) => ({ ...e })),
    message: progress.message,
    startedBy: typeof request.actor === 'string' ? request.actor : request.actor.urn,
    requestedAt: request.requestedAt,
    finishedAt: progress.finishedAt,
  };
}

function json(value: object): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}
