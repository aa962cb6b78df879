import type { ChangeSignal } from '../../src/adapter/change-signal';
import type { SqliteHandle } from './statements';

/** How often a change-feed follower looks for commits of other processes (PRAGMA data_version). */
const CHANGE_POLL_MS = 20;

/**
 * `waitForChanges`: in process, woken by commit (`signal`). Other processes: PRAGMA data_version moves
 * when another connection commits to the file; it is polled every CHANGE_POLL_MS while waiting.
 * `isOpen` ends the wait when the adapter closes meanwhile.
 */
export async function waitForChanges(
  db: SqliteHandle,
  request: { afterId?: string; timeoutMs: number; signal?: AbortSignal },
  signal: ChangeSignal,
  isOpen: () => boolean,
): Promise<void> {
  const newest = db.stmt('SELECT MAX(id) AS m FROM change_events').get() as { m: number | null };
  if ((newest.m ?? 0) > Number(request.afterId ?? 0)) return; // committed since the follower read
  const deadline = Date.now() + request.timeoutMs;
  const start = db.db.pragma('data_version', { simple: true }) as number;
  const commits = db.commits;
  while (!request.signal?.aborted && Date.now() < deadline) {
    await signal.wait(Math.min(CHANGE_POLL_MS, deadline - Date.now()), request.signal);
    if (!isOpen()) return;
    if (db.commits !== commits || (db.db.pragma('data_version', { simple: true }) as number) !== start) return;
  }
}
