import type { ClaimRequest, Job, NewJob } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { copyJson } from './json-copy';
import type { UndoLog } from './undo-log';

interface JobRecord {
  /** The stored job: a private copy, never handed out. */
  readonly job: Job;
  /** The counter behind `job.id`, for "then by id" ordering. */
  readonly sequence: number;
  readonly dedupeKey: string | undefined;
}

/** The job queue: leases, retries, dead jobs, and de-duplication of pending jobs by key. */
export class JobQueue {
  private readonly records = new Map<string, JobRecord>();
  /** dedupeKey → id of the pending job that carries it. */
  private readonly pendingByDedupeKey = new Map<string, string>();
  private lastSequence = 0;

  constructor(private readonly now: () => number) {}

  /** CONFLICT unless the job exists and is held by `workerId`. */
  checkHeld(id: string, workerId: string): void {
    const record = this.records.get(id);
    if (!record) throw new CatalogError('CONFLICT', `job ${id}: not found, cannot complete it`);
    if (!isHeldBy(record.job, workerId)) {
      throw new CatalogError('CONFLICT', `job ${id}: held by ${record.job.lockedBy ?? 'nobody'}, not by ${workerId}`);
    }
  }

  /** Adds a job unless a pending job with the same dedupe key exists. */
  insert(newJob: NewJob, log: UndoLog, at?: number): void {
    if (newJob.dedupeKey !== undefined && this.pendingByDedupeKey.has(newJob.dedupeKey)) return;
    const now = at ?? this.now();
    const previousSequence = this.lastSequence;
    const sequence = ++this.lastSequence;
    const record: JobRecord = {
      sequence,
      dedupeKey: newJob.dedupeKey,
      job: {
        id: String(sequence),
        type: newJob.type,
        payload: copyJson(newJob.payload),
        attempts: 0,
        runAt: newJob.runAt ?? now,
        createdAt: now,
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        state: 'pending',
      },
    };
    this.add(record);
    log.record(() => {
      this.remove(record);
      this.lastSequence = previousSequence;
    });
  }

  /** Deletes a job (its work is done). */
  complete(id: string, log: UndoLog): void {
    const record = this.records.get(id);
    if (!record) return;
    this.remove(record);
    log.record(() => this.add(record));
  }

  claimJobs(request: ClaimRequest): Job[] {
    if (request.limit <= 0) return [];
    const claimable: JobRecord[] = [];
    for (const record of this.records.values()) {
      const { job } = record;
      if (job.state !== 'pending') continue;
      if (!request.ignoreRunAt && job.runAt > request.now) continue;
      if (job.lockedUntil !== null && job.lockedUntil > request.now) continue;
      claimable.push(record);
    }
    claimable.sort((a, b) => a.job.runAt - b.job.runAt || a.sequence - b.sequence);
    return claimable.slice(0, request.limit).map(({ job }) => {
      job.lockedBy = request.workerId;
      job.lockedUntil = request.now + request.leaseMs;
      job.attempts += 1;
      return copyJob(job);
    });
  }

  releaseJob(id: string, workerId: string, outcome: { error: string; retryAt: number | null }): void {
    const record = this.records.get(id);
    if (!record || !isHeldBy(record.job, workerId)) return;
    const { job } = record;
    job.lockedBy = null;
    job.lockedUntil = null;
    job.lastError = outcome.error;
    if (outcome.retryAt === null) {
      job.state = 'dead';
      this.forgetDedupeKey(record);
    } else {
      job.runAt = outcome.retryAt;
    }
  }

  renewJobLease(id: string, workerId: string, lockedUntil: number): boolean {
    const record = this.records.get(id);
    if (!record || !isHeldBy(record.job, workerId)) return false;
    record.job.lockedUntil = lockedUntil;
    return true;
  }

  /** Pending jobs (and dead ones when asked), oldest first: by `createdAt`, then by id. */
  listJobs(request: { includeDead?: boolean; limit?: number } = {}): Job[] {
    const records = [...this.records.values()].filter((record) => request.includeDead || record.job.state === 'pending');
    records.sort((a, b) => a.job.createdAt - b.job.createdAt || a.sequence - b.sequence);
    const limited = request.limit === undefined ? records : records.slice(0, Math.max(0, request.limit));
    return limited.map(({ job }) => copyJob(job));
  }

  private add(record: JobRecord): void {
    this.records.set(record.job.id, record);
    if (record.dedupeKey !== undefined && record.job.state === 'pending') this.pendingByDedupeKey.set(record.dedupeKey, record.job.id);
  }

  private remove(record: JobRecord): void {
    this.records.delete(record.job.id);
    this.forgetDedupeKey(record);
  }

  private forgetDedupeKey(record: JobRecord): void {
    if (record.dedupeKey !== undefined && this.pendingByDedupeKey.get(record.dedupeKey) === record.job.id) {
      this.pendingByDedupeKey.delete(record.dedupeKey);
    }
  }
}

function copyJob(job: Job): Job {
  return { ...job, payload: copyJson(job.payload) };
}

/** Held = claimed by this worker and not given back (an expired lease still counts until another worker claims the job). */
function isHeldBy(job: Job, workerId: string): boolean {
  return job.state === 'pending' && job.lockedBy === workerId;
}
