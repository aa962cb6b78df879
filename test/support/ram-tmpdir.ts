import { accessSync, chmodSync, constants, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../../src/adapter/process';

/** Linux's RAM file system, present on every distribution that mounts /dev/shm (Debian, Ubuntu, containers). */
const RAM_DIR = '/dev/shm';
const PREFIX = 'metacatalog-test-';

/** Directories of runs whose process is gone (killed before its exit handler ran): they would hold RAM until a reboot. */
function removeLeftovers(): void {
  for (const name of readdirSync(RAM_DIR)) {
    const pid = name.startsWith(PREFIX) ? Number.parseInt(name.slice(PREFIX.length), 10) : NaN;
    if (Number.isSafeInteger(pid) && pid > 0 && !isProcessAlive(pid)) rmSync(join(RAM_DIR, name), { recursive: true, force: true });
  }
}

/**
 * Points TMPDIR (read by `os.tmpdir()`, `mktemp` and so by everything the tests create: SQLite files, signing
 * keys, exports, the clusters of test/support/pg-test-server.sh started by a test) at a new directory on
 * the RAM file system, removed when this process exits (and by the next run, if this one was killed); the
 * directory, or undefined where there is no such file system (then files go where TMPDIR already said).
 *
 * Why: SQLite at its default durability syncs the WAL at every commit. The code is the same on a RAM file
 * system (SQLite still calls fsync; the file system returns at once), as the PostgreSQL test server runs with
 * `fsync=off`: a sync proves nothing a unit test can see, and the suite's syncs cost a fifth of its time on a
 * 2-core virtual machine (docs/development.md). Set METACATALOG_TEST_TMPDIR=keep to leave TMPDIR alone.
 */
export function useRamTmpdir(): string | undefined {
  if (process.env.METACATALOG_TEST_TMPDIR === 'keep') return undefined;
  try {
    if (!statSync(RAM_DIR).isDirectory()) return undefined;
    accessSync(RAM_DIR, constants.W_OK);
  } catch {
    return undefined;
  }
  removeLeftovers();
  const dir = mkdtempSync(join(RAM_DIR, `${PREFIX}${process.pid}-`));
  // Others may pass through (not list or write): a cluster a test starts as root runs as an unprivileged user
  // in a directory of its own in here (test/support/pg-test-server.sh).
  chmodSync(dir, 0o711);
  process.env.TMPDIR = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
