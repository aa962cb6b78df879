import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = join('test', 'support', 'pg-test-server.sh');

/**
 * The project's test/support/pg-test-server.sh. Found by walking up from this module: the bench runs
 * it bundled from bench/.build (bench/run.mjs), from bench/ under a TypeScript loader, or elsewhere.
 */
function serverScript(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, SCRIPT))) return join(dir, SCRIPT);
    if (dirname(dir) === dir) throw new Error(`${SCRIPT} not found above ${fileURLToPath(import.meta.url)}`);
  }
}

/**
 * A server for the run: METACATALOG_BENCH_POSTGRES_URL, else (unless `durable`) METACATALOG_TEST_POSTGRES_URL,
 * else a throw-away cluster of our own (its own state file), started with the durability settings kept
 * when `durable` (a test server runs with fsync off: commits measured there would wait for no sync).
 */
export function acquireServer(options: { durable?: boolean } = {}): { url: string; release(): void } {
  const given = process.env.METACATALOG_BENCH_POSTGRES_URL ?? (options.durable ? undefined : process.env.METACATALOG_TEST_POSTGRES_URL);
  if (given) return { url: given, release: () => undefined };
  const script = serverScript();
  const stateDir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-pg-'));
  const env = { ...process.env, METACATALOG_PG_STATE: join(stateDir, 'state'), METACATALOG_PG_DURABLE: options.durable ? 'on' : 'off' };
  const out = execFileSync('bash', [script, 'start'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = /METACATALOG_TEST_POSTGRES_URL=(\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`pg-test-server.sh printed no URL: ${out}`);
  return {
    url,
    release: () => {
      execFileSync('bash', [script, 'stop'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
