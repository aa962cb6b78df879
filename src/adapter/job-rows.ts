import type { Job, JsonObject } from './types';

/** The columns every SQL adapter's jobs table has, in this order; never `*` (a prepared statement must not change its result type). */
export const JOB_COLUMNS = 'id, type, payload, run_at, created_at, attempts, locked_by, locked_until, last_error, state';

/**
 * For SQL adapters: one row of the jobs table. Ids and times may arrive as numbers or, from drivers that
 * return BIGINT as text, as strings.
 */
export interface JobRow {
  id: number | string;
  type: string;
  payload: string;
  run_at: number | string;
  created_at: number | string;
  attempts: number;
  locked_by: string | null;
  locked_until: number | string | null;
  last_error: string | null;
  state: 'pending' | 'dead';
}

export function jobOfRow(row: JobRow): Job {
  return {
    id: String(row.id),
    type: row.type,
    payload: JSON.parse(row.payload) as JsonObject,
    attempts: row.attempts,
    runAt: Number(row.run_at),
    createdAt: Number(row.created_at),
    lockedBy: row.locked_by,
    lockedUntil: row.locked_until === null ? null : Number(row.locked_until),
    lastError: row.last_error,
    state: row.state,
  };
}
