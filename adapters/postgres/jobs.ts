import type { ClaimRequest, Job, NewJob } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { JOB_COLUMNS, jobOfRow, type JobRow } from '../../src/adapter/job-rows';
import type { PgHandle, Queryable } from './database';

/** Job ids are the decimal text of a bigint; anything else names no job. */
function jobId(id: string): string | undefined {
  return /^[1-9][0-9]{0,18}$/.test(id) ? id : undefined;
}

/**
 * Inside the caller's transaction, in the batch's order (ids follow it). A job whose dedupe key is held
 * by a pending job (or by an earlier job of the same batch) is not added.
 */
export async function insertJobs(tx: Queryable, s: string, jobs: readonly NewJob[], now: number): Promise<void> {
  await tx.execute(
    `INSERT INTO ${s}.jobs (type, payload, run_at, created_at, dedupe_key)
     SELECT j.type, j.payload, j.run_at, $5, j.dedupe_key
     FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) WITH ORDINALITY AS j(type, payload, run_at, dedupe_key, n)
     ORDER BY j.n
     ON CONFLICT DO NOTHING`,
    [
      jobs.map((j) => j.type),
      jobs.map((j) => JSON.stringify(j.payload)),
      jobs.map((j) => j.runAt ?? now),
      jobs.map((j) => j.dedupeKey ?? null),
      now,
    ],
  );
}

/** Inside the caller's transaction: only the claimant may complete a job; otherwise the whole batch is a CONFLICT. */
export async function completeJobs(tx: Queryable, s: string, jobs: ReadonlyArray<{ id: string; workerId: string }>): Promise<void> {
  const wanted = new Map<string, string>();
  for (const job of jobs) {
    const id = jobId(job.id);
    if (id === undefined || (wanted.has(id) && wanted.get(id) !== job.workerId)) {
      throw new CatalogError('CONFLICT', `job ${job.id} is not held by worker ${job.workerId}`);
    }
    wanted.set(id, job.workerId);
  }
  const deleted = await tx.query<{ id: string }>(
    `DELETE FROM ${s}.jobs j USING unnest($1::bigint[], $2::text[]) AS c(id, worker)
     WHERE j.id = c.id AND j.locked_by = c.worker AND j.state = 'pending'
     RETURNING j.id`,
    [[...wanted.keys()], [...wanted.values()]],
  );
  if (deleted.length !== wanted.size) {
    const gone = new Set(deleted.map((r) => String(r.id)));
    const missing = [...wanted].find(([id]) => !gone.has(id));
    throw new CatalogError('CONFLICT', `job ${missing?.[0]} is not held by worker ${missing?.[1]}`);
  }
}

/**
 * One statement: the inner SELECT locks the claimable rows it picks and skips rows another claimant has
 * locked (`FOR UPDATE SKIP LOCKED`), so several processes share the queue without waiting on each other
 * and never take the same job. A row claimed and committed by another process since this statement's
 * snapshot is re-checked against the WHERE clause after locking, and left out.
 */
export async function claimJobs(h: PgHandle, request: ClaimRequest): Promise<Job[]> {
  const rows = await h.query<JobRow>(
    `UPDATE ${h.s}.jobs SET locked_by = $1, locked_until = $2::bigint + $3::bigint, attempts = attempts + 1
     WHERE id IN (
       SELECT id FROM ${h.s}.jobs
       WHERE state = 'pending' AND ($4::boolean OR run_at <= $2::bigint) AND (locked_until IS NULL OR locked_until <= $2::bigint)
       ORDER BY run_at, id
       LIMIT $5
       FOR UPDATE SKIP LOCKED
     )
     RETURNING ${JOB_COLUMNS}`,
    [request.workerId, request.now, request.leaseMs, request.ignoreRunAt === true, request.limit],
  );
  return rows.map(jobOfRow).sort((a, b) => a.runAt - b.runAt || compareIds(a.id, b.id));
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

export async function releaseJob(
  h: PgHandle,
  id: string,
  workerId: string,
  outcome: { error: string; retryAt: number | null },
): Promise<void> {
  const key = jobId(id);
  if (key === undefined) return;
  if (outcome.retryAt === null) {
    await h.execute(
      `UPDATE ${h.s}.jobs SET state = 'dead', locked_by = NULL, locked_until = NULL, last_error = $1 WHERE id = $2 AND locked_by = $3`,
      [outcome.error, key, workerId],
    );
  } else {
    await h.execute(
      `UPDATE ${h.s}.jobs SET locked_by = NULL, locked_until = NULL, last_error = $1, run_at = $2 WHERE id = $3 AND locked_by = $4`,
      [outcome.error, outcome.retryAt, key, workerId],
    );
  }
}

export async function renewJobLease(h: PgHandle, id: string, workerId: string, lockedUntil: number): Promise<boolean> {
  const key = jobId(id);
  if (key === undefined) return false;
  const changed = await h.execute(`UPDATE ${h.s}.jobs SET locked_until = $1 WHERE id = $2 AND locked_by = $3 AND state = 'pending'`, [
    lockedUntil,
    key,
    workerId,
  ]);
  return changed === 1;
}

export async function listJobs(h: PgHandle, request: { includeDead?: boolean; limit?: number } = {}): Promise<Job[]> {
  const rows = await h.query<JobRow>(
    `SELECT ${JOB_COLUMNS} FROM ${h.s}.jobs WHERE state = 'pending' OR ($1::boolean AND state = 'dead') ORDER BY run_at, id LIMIT $2`,
    [request.includeDead === true, request.limit ?? null],
  );
  return rows.map(jobOfRow);
}
