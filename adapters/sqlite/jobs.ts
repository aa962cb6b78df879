import type { ClaimRequest, Job, NewJob } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { JOB_COLUMNS, jobOfRow, type JobRow } from '../../src/adapter/job-rows';
import { params, type SqliteHandle } from './statements';

/** Inside the caller's transaction. */
export function insertJobs(h: SqliteHandle, jobs: readonly NewJob[], now: number): void {
  const insert = h.stmt(
    `INSERT INTO jobs (type, payload, run_at, created_at, dedupe_key) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  );
  for (const job of jobs) insert.run(job.type, JSON.stringify(job.payload), job.runAt ?? now, now, job.dedupeKey ?? null);
}

/** Inside the caller's transaction: only the claimant may complete a job. */
export function completeJobs(h: SqliteHandle, jobs: ReadonlyArray<{ id: string; workerId: string }>): void {
  const remove = h.stmt("DELETE FROM jobs WHERE id = ? AND locked_by = ? AND state = 'pending'");
  for (const job of jobs) {
    if (remove.run(Number(job.id), job.workerId).changes !== 1) {
      throw new CatalogError('CONFLICT', `job ${job.id} is not held by worker ${job.workerId}`);
    }
  }
}

export function claimJobs(h: SqliteHandle, request: ClaimRequest): Job[] {
  const claim = h.db.transaction(() => {
    const rows = h
      .stmt(
        `UPDATE jobs SET locked_by = @p1, locked_until = @p2 + @p3, attempts = attempts + 1
         WHERE id IN (
           SELECT id FROM jobs
           WHERE state = 'pending' AND (@p4 OR run_at <= @p2) AND (locked_until IS NULL OR locked_until <= @p2)
           ORDER BY run_at, id LIMIT @p5
         )
         RETURNING ${JOB_COLUMNS}`,
      )
      .all(params(request.workerId, request.now, request.leaseMs, request.ignoreRunAt ? 1 : 0, request.limit)) as JobRow[];
    return rows.map(jobOfRow).sort((a, b) => a.runAt - b.runAt || Number(a.id) - Number(b.id));
  });
  return claim.immediate();
}

export function releaseJob(h: SqliteHandle, id: string, workerId: string, outcome: { error: string; retryAt: number | null }): void {
  if (outcome.retryAt === null) {
    h.stmt("UPDATE jobs SET state = 'dead', locked_by = NULL, locked_until = NULL, last_error = ? WHERE id = ? AND locked_by = ?").run(
      outcome.error,
      Number(id),
      workerId,
    );
  } else {
    h.stmt('UPDATE jobs SET locked_by = NULL, locked_until = NULL, last_error = ?, run_at = ? WHERE id = ? AND locked_by = ?').run(
      outcome.error,
      outcome.retryAt,
      Number(id),
      workerId,
    );
  }
}

export function renewJobLease(h: SqliteHandle, id: string, workerId: string, lockedUntil: number): boolean {
  return (
    h.stmt("UPDATE jobs SET locked_until = ? WHERE id = ? AND locked_by = ? AND state = 'pending'").run(lockedUntil, Number(id), workerId)
      .changes === 1
  );
}

export function listJobs(h: SqliteHandle, request: { includeDead?: boolean; limit?: number } = {}): Job[] {
  const rows = h
    .stmt(`SELECT ${JOB_COLUMNS} FROM jobs WHERE state = 'pending' OR (@p1 AND state = 'dead') ORDER BY run_at, id LIMIT @p2`)
    .all(params(request.includeDead ? 1 : 0, request.limit ?? -1)) as JobRow[];
  return rows.map(jobOfRow);
}
