import type { Job } from '../../adapter/types';
import { APPLY_JOB_TYPE } from './apply-job';
import type { ApplyStatus } from './apply-types';

/** Queued jobs read to find an apply job's own (snapshot and chunks); far more than ever wait at once. */
export const LEASE_SCAN_LIMIT = 1_000;

/**
 * An unfinished apply job's status with what its queued jobs say: the worker holding it and until when
 * (`leaseExpiresAt`), and a `hint` when that worker stopped renewing (a killed process: the job is taken
 * over once the lease runs out) or a chunk failed and waits for its retry.
 */
export function withLease(status: ApplyStatus, jobs: readonly Job[], now: number): ApplyStatus {
  const own = jobs.filter((job) => job.type === APPLY_JOB_TYPE && job.payload.jobId === status.jobId && job.state === 'pending');
  const held = own.filter((job) => job.lockedBy !== null && job.lockedUntil !== null);
  const at = (ms: number) => new Date(ms).toISOString();
  if (held.length > 0) {
    const latest = held.reduce((a, b) => (b.lockedUntil! > a.lockedUntil! ? b : a));
    const until = latest.lockedUntil!;
    const hint =
      until <= now
        ? `worker ${latest.lockedBy} stopped responding (its lease ran out at ${at(until)}): the next worker to poll takes the job over`
        : `worker ${latest.lockedBy} holds the job until ${at(until)} and renews that while it works; if it stopped, another worker takes the job over then`;
    return { ...status, leaseExpiresAt: until, hint };
  }
  const failed = own.find((job) => job.lastError !== null);
  if (failed) {
    return { ...status, hint: `attempt ${failed.attempts} failed (${failed.lastError}); retried at ${at(Math.max(failed.runAt, now))}` };
  }
  return status;
}
