import { describe, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, 'pg-test-server.sh');
const IN_CI = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

/**
 * A PostgreSQL cluster of the test's own, started from test/support/pg-test-server.sh, that the test
 * may stop and start again (an outage) without touching the server the other tests share.
 */
export interface OwnPostgres {
  readonly url: string;
  /** The script's record of the cluster (what `pg-test-server.sh standby` copies from). */
  readonly stateFile: string;
  /** Stops the server as an administrator would (`pg_ctl stop -m fast`): every connection gets 57P01. */
  halt(): Promise<void>;
  /** Starts it again, same port and data. */
  resume(): Promise<void>;
  /** Starts it again unless it runs (after a test that failed while it was stopped). */
  ensureRunning(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'mc-outage-'));
  const env = { ...process.env, METACATALOG_PG_STATE: join(dir, 'state') };
  const script = (...args: string[]) => run('bash', [SCRIPT, ...args], { env, timeout: 90_000 });
  const { stdout } = await script('start');
  const url = /METACATALOG_TEST_POSTGRES_URL=(\S+)/.exec(stdout)?.[1];
  if (!url) throw new Error(`pg-test-server.sh start printed no URL: ${stdout}`);
  return ownServer(url, join(dir, 'state'), script, () => rmSync(dir, { recursive: true, force: true }));
}

function ownServer(url: string, stateFile: string, script: (...args: string[]) => Promise<unknown>, cleanUp: () => void): OwnPostgres {
  let running = true;
  const resume = async () => {
    await script('resume');
    running = true;
  };
  return {
    url,
    stateFile,
    halt: async () => {
      running = false;
      await script('halt');
    },
    resume,
    ensureRunning: async () => {
      if (!running) await resume();
    },
    remove: async () => {
      await script('stop').catch(() => undefined);
      cleanUp();
    },
  };
}

/** A primary of the test's own and a hot standby streaming from it (pg_basebackup -R), both on loopback. */
export interface ReplicatedPostgres {
  readonly primary: OwnPostgres;
  /** The standby: `halt` and `resume` stop and start it (a replica outage). */
  readonly standby: OwnPostgres;
}

export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const primary = await startOwnPostgres();
  const dir = mkdtempSync(join(tmpdir(), 'mc-standby-'));
  const env = { ...process.env, METACATALOG_PG_STATE: join(dir, 'state') };
  const script = (...args: string[]) => run('bash', [SCRIPT, ...args], { env, timeout: 90_000 });
  try {
    const { stdout } = await script('standby', primary.stateFile);
    const url = /METACATALOG_TEST_POSTGRES_STANDBY_URL=(\S+)/.exec(stdout)?.[1];
    if (!url) throw new Error(`pg-test-server.sh standby printed no URL: ${stdout}`);
    return { primary, standby: ownServer(url, join(dir, 'state'), script, () => rmSync(dir, { recursive: true, force: true })) };
  } catch (error) {
    await primary.remove();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Whether this machine has PostgreSQL's server binaries (the script needs pg_ctl and initdb). */
function hasServerBinaries(): boolean {
  const onPath = (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, 'pg_ctl')));
  if (onPath) return true;
  try {
    return readdirSync('/usr/lib/postgresql').some((v) => existsSync(join('/usr/lib/postgresql', v, 'bin', 'pg_ctl')));
  } catch {
    return false;
  }
}

/**
 * Registers tests that need a cluster of their own: run them when the server binaries are here; else
 * skip loudly, or fail under CI (where `.ci/run` installs them).
 */
export function withOwnPostgres(file: string, title: string, register: () => void): void {
  if (hasServerBinaries()) return register();
  if (IN_CI) {
    describe(title, () => {
      it('needs PostgreSQL server binaries (pg_ctl, initdb)', () => {
        throw new Error('CI is set but pg_ctl is not installed: .ci/run installs it');
      });
    });
    return;
  }
  console.warn(`\n!! ${file}: SKIPPED — no PostgreSQL server binaries (pg_ctl, initdb) to start a cluster of its own\n`);
  describe.skip(`${title} (no PostgreSQL server binaries)`, () => {
    it('needs PostgreSQL server binaries', () => undefined);
  });
}
