/**
 * The job queue `composeAdapter` supplies when the entity store does not serve jobs itself: the whole
 * queue is one reserved entity whose aspects are the jobs (and a head with the next id). Every change
 * of the queue is a commit of that entity with its version checked, so two claimants, in this process
 * or another, never both take a job: the second one's commit meets a CONFLICT and reads again.
 */
import { CatalogError } from '../errors';
import type { EntityStore, WriteBatch } from './entity-store';
import type { ClaimRequest, Job, JobQueue } from './job-queue';
import { padSequence, readRecord, type RecordWrites } from './store-records';
import type { JsonObject, StoredEntity } from './values';

const QUEUE_URN = 'urn:metacatalog:jobs';
const QUEUE_TYPE = 'metacatalog.jobs';
const HEAD = 'head';
const JOB_PREFIX = 'job.';

interface StoredJob extends Job {
  sequence: number;
  dedupeKey: string | null;
}

/** Runs a read-then-commit change of reserved records, serialized and retried on CONFLICT by the composer. */
export type RecordMutation = <T>(change: (writes: RecordWrites) => Promise<T>) => Promise<T>;

export interface StoreJobQueue extends JobQueue {
  /** Adds the batch's jobs and completes its jobs inside the commit (CONFLICT when a job to complete is not held). */
  plan(batch: WriteBatch, writes: RecordWrites): Promise<void>;
}

export function createStoreJobQueue(store: EntityStore, mutate: RecordMutation): StoreJobQueue {
  async function readQueue(): Promise<{ entity: StoredEntity; jobs: StoredJob[]; next: number }> {
    const entity = await readRecord(store, QUEUE_URN);
    const jobs: StoredJob[] = [];
    for (const [name, aspect] of Object.entries(entity.aspects)) {
      if (name.startsWith(JOB_PREFIX)) jobs.push(aspect.value as unknown as StoredJob);
    }
    const next = (entity.aspects[HEAD]?.value.next as number | undefined) ?? 1;
    return { entity, jobs, next };
  }

  const put = (writes: RecordWrites, version: number, job: StoredJob): void =>
    writes.put(QUEUE_URN, QUEUE_TYPE, version, jobName(job.id), job as unknown as JsonObject);

  /** Changes one job held by the worker; false (nothing written) when it is not held. */
  function changeHeld(id: string, workerId: string, change: (job: StoredJob) => void): Promise<boolean> {
    return mutate(async (writes) => {
      const { entity, jobs } = await readQueue();
      const job = jobs.find((j) => j.id === id);
      if (!job || !isHeldBy(job, workerId)) return false;
      change(job);
      put(writes, entity.version, job);
      return true;
    });
  }

  return {
    async plan(batch, writes) {
      if (!batch.jobs?.length && !batch.completeJobs?.length) return;
      const { entity, jobs, next } = await readQueue();
      const completed = new Set<string>();
      for (const { id, workerId } of batch.completeJobs ?? []) {
        const job = jobs.find((j) => j.id === id);
        if (!job) throw new CatalogError('CONFLICT', `job ${id}: not found, cannot complete it`);
        if (!isHeldBy(job, workerId))
          throw new CatalogError('CONFLICT', `job ${id}: held by ${job.lockedBy ?? 'nobody'}, not by ${workerId}`);
        completed.add(id);
      }
      writes.remove(QUEUE_URN, QUEUE_TYPE, entity.version, [...completed].map(jobName));
      // Completions before insertions: a job that completes itself may queue its follow-up under its own key.
      const pendingKeys = new Set(
        jobs.filter((j) => j.state === 'pending' && !completed.has(j.id) && j.dedupeKey !== null).map((j) => j.dedupeKey),
      );
      let sequence = next;
      for (const newJob of batch.jobs ?? []) {
        if (newJob.dedupeKey !== undefined && pendingKeys.has(newJob.dedupeKey)) continue;
        if (newJob.dedupeKey !== undefined) pendingKeys.add(newJob.dedupeKey);
        const at = batch.now ?? Date.now();
        put(writes, entity.version, {
          id: String(sequence),
          sequence,
          dedupeKey: newJob.dedupeKey ?? null,
          type: newJob.type,
          payload: newJob.payload,
          attempts: 0,
          runAt: newJob.runAt ?? at,
          createdAt: at,
          lockedBy: null,
          lockedUntil: null,
          lastError: null,
          state: 'pending',
        });
        sequence++;
      }
      if (sequence !== next) writes.put(QUEUE_URN, QUEUE_TYPE, entity.version, HEAD, { next: sequence });
      else writes.entity(QUEUE_URN, QUEUE_TYPE, entity.version); // the checks above held at this version
    },

    claimJobs(request: ClaimRequest) {
      if (request.limit <= 0) return Promise.resolve([]);
      return mutate(async (writes) => {
        const { entity, jobs } = await readQueue();
        const claimable = jobs
          .filter((j) => j.state === 'pending' && (request.ignoreRunAt || j.runAt <= request.now))
          .filter((j) => j.lockedUntil === null || j.lockedUntil <= request.now)
          .sort((a, b) => a.runAt - b.runAt || a.sequence - b.sequence)
          .slice(0, request.limit);
        for (const job of claimable) {
          job.lockedBy = request.workerId;
          job.lockedUntil = request.now + request.leaseMs;
          job.attempts += 1;
          put(writes, entity.version, job);
        }
        return claimable.map(publicJob);
      });
    },

    async releaseJob(id, workerId, outcome) {
      await changeHeld(id, workerId, (job) => {
        job.lockedBy = null;
        job.lockedUntil = null;
        job.lastError = outcome.error;
        if (outcome.retryAt === null) job.state = 'dead';
        else job.runAt = outcome.retryAt;
      });
    },

    renewJobLease(id, workerId, lockedUntil) {
      return changeHeld(id, workerId, (job) => {
        job.lockedUntil = lockedUntil;
      });
    },

    async listJobs(request = {}) {
      const { jobs } = await readQueue();
      const listed = jobs
        .filter((j) => request.includeDead || j.state === 'pending')
        .sort((a, b) => a.createdAt - b.createdAt || a.sequence - b.sequence)
        .map(publicJob);
      return request.limit === undefined ? listed : listed.slice(0, Math.max(0, request.limit));
    },
  };
}

function jobName(id: string): string {
  return `${JOB_PREFIX}${padSequence(Number(id))}`;
}

function publicJob({ sequence: _sequence, dedupeKey: _dedupeKey, ...job }: StoredJob): Job {
  return job;
}

/** Held = claimed by this worker and not given back (an expired lease still counts until another worker claims the job). */
function isHeldBy(job: Job, workerId: string): boolean {
  return job.state === 'pending' && job.lockedBy === workerId;
}
