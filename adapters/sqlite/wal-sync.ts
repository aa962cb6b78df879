import { closeSync, existsSync, fsync, openSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

/**
 * The commit's sync, off the event loop. With durability `full`, SQLite would fsync the WAL inside
 * every COMMIT, on the thread that runs it: the host's event loop stops for the length of a disk
 * flush per commit group. Instead the connection commits with `synchronous = NORMAL` (the frames are
 * written to the WAL, no fsync) and the adapter fsyncs the WAL file itself on libuv's thread pool
 * (`fs.fsync`), acknowledging the group's writers only when that fsync, started after their commit,
 * has completed. An fsync flushes every frame written before it, so an acknowledged write is on disk
 * exactly as with `synchronous = FULL`; SQLite still syncs the WAL before each checkpoint copies it
 * into the database file (which `NORMAL` also does).
 *
 * Syncs are coalesced: while one runs, every commit that finished meanwhile waits for the next one,
 * a single fsync for all of them.
 *
 * Once an fsync has failed, every later one fails too: after a failed flush the kernel may have
 * dropped the dirty pages, and what is on disk is unknown (the adapter must be reopened).
 */
export interface WalSync {
  /** Resolves once everything committed before the call is on disk. */
  sync(): Promise<void>;
  /** Closes the file descriptor (after the database connection has closed). */
  close(): void;
}

/** The file of the connection's main database when it is a file in WAL mode, or undefined (in memory, a temporary file, no WAL yet). */
export function mainFileOf(db: Database): string | undefined {
  const main = (db.pragma('database_list') as Array<{ name: string; file: string }>).find((d) => d.name === 'main');
  if (!main?.file) return undefined;
  return existsSync(`${main.file}-wal`) ? main.file : undefined;
}

/** The WAL file of the connection's main database, or undefined (see mainFileOf). */
function walPathOf(db: Database): string | undefined {
  const file = mainFileOf(db);
  return file === undefined ? undefined : `${file}-wal`;
}

/** Opens the WAL file for syncing, or returns undefined when the connection must sync inside COMMIT. */
export function openWalSync(db: Database): WalSync | undefined {
  const path = walPathOf(db);
  if (path === undefined) return undefined;
  let fd: number;
  try {
    // Read-only: this descriptor only ever syncs. It stays open as long as the connection (closing a
    // descriptor of a file never drops SQLite's locks: they are on the database and -shm files).
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let failure: unknown;
  let open = true;

  const flush = () =>
    new Promise<void>((resolve, reject) => {
      if (failure !== undefined) return reject(failure);
      if (!open) return reject(new Error('the SQLite adapter is closed'));
      fsync(fd, (error) => {
        if (error) {
          failure = error;
          reject(error);
        } else resolve();
      });
    });

  function sync(): Promise<void> {
    if (!running) {
      running = flush().finally(() => {
        running = undefined;
      });
      return running;
    }
    // The running fsync may have started before this commit: wait for the next one (shared by every caller meanwhile).
    next ??= running.then(
      () => {
        next = undefined;
        return sync();
      },
      () => {
        next = undefined;
        return sync();
      },
    );
    return next;
  }

  return {
    sync,
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
