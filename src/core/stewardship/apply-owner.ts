import type { NewJob, StoredEntity } from '../../adapter/types';
import type { DomainOwners, OwnedChange, OwnedItem } from '../entities/owner';
import type { ApplyStatus } from './apply-types';
import {
  INPUT_ASPECT,
  isFinished,
  progressPut,
  recordOf,
  requestPut,
  RESULT_ASPECT,
  type ApplyProgress,
  type ApplyRecord,
} from './apply-record';

/**
 * The edits of an apply job's record, all of them the catalog's bookkeeping (no user writes the
 * record; `applyToMatches` and `cancelApply` authorize the user themselves, by who started the job or
 * the privilege): the record created with its first job, a cancel (answered as `CancelOutcome`), and
 * a step of the job: finished with nothing to change, failed, or the snapshot of the matches taken.
 */
export type ApplyEdit =
  | { kind: 'start'; record: ApplyRecord; jobs: NewJob[] }
  | { kind: 'cancel'; by: string }
  | { kind: 'finish' }
  | { kind: 'fail'; message: string }
  | { kind: 'snapshot'; total: number; jobs: NewJob[] };

/** What a cancel found: whether it cancelled, and the job's state after it. */
export interface CancelOutcome {
  cancelled: boolean;
  state: ApplyStatus['state'];
}

const REFUSAL = 'an apply job is written only by catalog.properties.applyToMatches and cancelApply';

/** An edit planned on the record as the unit of work reads it; a finished job's record is left as it is. */
function planEdit(item: OwnedItem, entity: StoredEntity | undefined, now: number): OwnedChange | undefined {
  const edit = item.edit as ApplyEdit;
  if (edit.kind === 'start')
    return {
      put: requestPut(edit.record.request, edit.record.progress)[item.aspect]!,
      also: requestPut(edit.record.request, edit.record.progress),
      jobs: edit.jobs,
    };
  const record = recordOf(entity);
  if (edit.kind === 'cancel') {
    if (!record || isFinished(record.progress.status)) {
      const result: CancelOutcome = { cancelled: false, state: record?.progress.status ?? 'CANCELLED' };
      return { result };
    }
    const progress: ApplyProgress = { ...record.progress, status: 'CANCELLED', message: `cancelled by ${edit.by}`, finishedAt: now };
    const result: CancelOutcome = { cancelled: true, state: 'CANCELLED' };
    return { put: progressPut(progress)[RESULT_ASPECT]!, result };
  }
  if (!record || isFinished(record.progress.status) || edit.kind === 'finish') return undefined;
  const p = record.progress;
  if (edit.kind === 'fail') return { put: progressPut({ ...p, status: 'FAILED', message: edit.message, finishedAt: now })[RESULT_ASPECT]! };
  const total = edit.total;
  const progress: ApplyProgress = {
    ...p,
    status: total === 0 ? 'DONE' : 'RUNNING',
    total,
    startTimeMs: now,
    finishedAt: total === 0 ? now : null,
  };
  return { put: progressPut(progress)[RESULT_ASPECT]!, jobs: edit.jobs };
}

/**
 * The record of an apply job is written only by the catalog: its bookkeeping edits are planned here,
 * and a generic write of its aspects is refused.
 */
export function applyOwners(): DomainOwners {
  return {
    aspects: [
      {
        name: 'apply jobs',
        governs: (_type, aspect) => aspect === INPUT_ASPECT || aspect === RESULT_ASPECT,
        privilege: () => 'EDIT_ENTITY',
        async prepare(_principal, items, violations) {
          for (const item of items) if (item.op !== 'edit' || !item.system) violations.push({ path: item.path, message: REFUSAL });
          return { plan: (item, entity, step) => planEdit(item, entity, step.now) };
        },
      },
    ],
  };
}
