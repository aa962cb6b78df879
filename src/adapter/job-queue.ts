/**
 * Part of the adapter contract: the durable job queue, with leases. Jobs are added and completed only
 * by the entity store's commit (`WriteBatch.jobs`, `WriteBatch.completeJobs`), atomically with the
 * change that needs them; this part claims, releases, renews and lists them.
 *
 * - Not found: a job that is not there, or not held by the worker, is ignored by `releaseJob` and
 *   answers false from `renewJobLease`; never an error.
 * - Atomic: each call on its own (a claim takes its jobs wholly or not at all).
 * - Order: oldest `runAt` first for claims; oldest first for lists.
 */
import type { JsonObject } from './values';

/** A job to add, as a commit carries it. */
export interface NewJob {
  type: string;
  payload: JsonObject;
  /** Not claimable before this time (epoch ms); default: now. */
  runAt?: number;
  /** When a pending job with the same key exists, this one is not added. */
  dedupeKey?: string;
}

export interface Job {
  id: string;
  type: string;
  payload: JsonObject;
  /** How many times it was claimed. */
  attempts: number;
  runAt: number;
  createdAt: number;
  lockedBy: string | null;
  lockedUntil: number | null;
  lastError: string | null;
  /** `pending` (claimable or leased), or `dead` (gave up after the retries; kept for inspection). */
  state: 'pending' | 'dead';
}

export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Ignore `runAt` (used by `settle()` to run retries without waiting for their back-off). */
  ignoreRunAt?: boolean;
}

/** The job queue part. */
export interface JobQueue {
  /**
   * Claims up to `limit` pending jobs whose `runAt <= now` (unless `ignoreRunAt`) and whose lease is
   * free or expired (`lockedUntil <= now`): sets `lockedBy`, `lockedUntil = now + leaseMs`, `attempts + 1`.
   * Oldest `runAt` first. Two claimants never get the same job while its lease holds.
   */
  claimJobs(request: ClaimRequest): Promise<Job[]>;
  /**
   * Gives a claimed job back for a retry at `retryAt` (lease cleared, `lastError` kept), or marks it
   * `dead` when `retryAt` is null. Ignored when the job is not held by that worker.
   */
  releaseJob(id: string, workerId: string, outcome: { error: string; retryAt: number | null }): Promise<void>;
  /** Extends a held lease; false when the job is no longer held by that worker. */
  renewJobLease(id: string, workerId: string, lockedUntil: number): Promise<boolean>;
  /** Pending jobs (leased or not) and, when asked, dead ones; oldest first. */
  listJobs(request?: { includeDead?: boolean; limit?: number }): Promise<Job[]>;
}
