import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../src/index';

/** Most tests call the CLI's main in process; a few run the built bin (dist/cli.js: `npm test` builds first). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = process.env.METACATALOG_TEST_CLI ?? join(ROOT, 'dist/cli.js');
export const EXAMPLE_YAML = join(ROOT, 'examples/properties.yaml');
export const ADMIN = 'urn:li:corpuser:admin';

export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
}

const dirs: string[] = [];
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-cli-'));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a CLI run: no inherited METACATALOG_* variables, and a configuration file in a
 * temporary directory, so that the developer's ~/.metacatalog.yaml never takes part.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('METACATALOG_')) env[k] = v;
  return { ...env, METACATALOG_CONFIG: join(tempDir(), 'config.yaml'), ...extra };
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  cwd?: string;
  /** Run the built bin in a child process (the smoke tests of the bin itself); default: in this process. */
  spawn?: boolean;
}

/** Calls of `main` run one at a time: each sets the process environment (and directory) it needs. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI with `args`, resolving with the exit code and both outputs: in this process through the
 * CLI's `main` (with the environment and directory given, stdout and stderr captured), or, with
 * `spawn`, as `node dist/cli.js` in a child process. Standard input needs the child process.
 */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  if (options.spawn || options.input !== undefined) return runCliSpawned(args, options);
  const run = async (): Promise<CliResult> => {
    const { main } = await import('../../src/cli/program');
    const savedEnv = process.env;
    const savedCwd = process.cwd();
    process.env = { ...(options.env ?? cliEnv()) };
    if (options.cwd) process.chdir(options.cwd);
    let stdout = '';
    let stderr = '';
    try {
      const code = await main(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
      return { code, stdout, stderr };
    } finally {
      process.env = savedEnv;
      process.chdir(savedCwd);
    }
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}

/** Runs `node dist/cli.js ...args` in a child process; resolves with the exit code and both outputs. */
export function runCliSpawned(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, env: options.env ?? cliEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** `script` gives the CLI a pseudo-terminal, so that its questions can be answered in a test. */
export const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

export function runCliOnTerminal(args: readonly string[], answer: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-qec', quoted, '/dev/null'], { cwd: ROOT, env });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stdout += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr: '' }));
    // Answer once the question is there.
    const timer = setInterval(() => {
      if (/\[y\/N\]/.test(stdout)) {
        clearInterval(timer);
        child.stdin.write(`${answer}\n`);
      }
    }, 20);
    child.on('close', () => clearInterval(timer));
  });
}

/** The library on the same file, for setting up and checking what the CLI cannot show. */
export async function withCatalog<T>(db: string, work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: db }), superUsers: [ADMIN], jobs: { background: false } });
  try {
    return await work(catalog);
  } finally {
    await catalog.close();
  }
}

export interface Served {
  url: string;
  /** The bootstrap admin token (printed when the file or its key is new). */
  token: string;
  db: string;
  stop(): Promise<void>;
}

/** A running `metacatalog serve` child: its URL, the bootstrap token it printed, what it wrote, its exit. */
export interface ServeChild {
  child: ChildProcessWithoutNullStreams;
  /** As printed, e.g. `http://127.0.0.1:41234/`. */
  url: string;
  /** The bootstrap admin token, when it printed one (a new file or key). */
  token: string | undefined;
  /** stdout then stderr so far. */
  output(): string;
  exit: Promise<number | null>;
}

/** Spawns `metacatalog serve --port 0 <args>` and waits (20 s at most) until it is listening. */
export async function spawnServe(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd: ROOT, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const listening = /listening on (http:\/\/\S+)/;
  const deadline = Date.now() + 20_000;
  while (!listening.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve did not start: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    child,
    url: listening.exec(out)![1]!,
    token: /^export METACATALOG_TOKEN=(\S+)$/m.exec(out)?.[1],
    output: () => out + err,
    exit,
  };
}

/**
 * `serve` (the function behind `metacatalog serve`) in this process, on a temporary SQLite file and a free
 * loopback port: the remote mode of the command tests. Starting the bin for each test cost about 2 s; the
 * bin itself, its flags and its signals are tested with `startServe`.
 */
export async function serveInProcess(db: string = join(tempDir(), 'served.db')): Promise<Served> {
  const { serve } = await import('../../src/cli/commands/serve');
  let out = '';
  const collect = (text: string): void => void (out += text);
  const handle = await serve({ db, port: 0, host: '127.0.0.1', accessLog: false }, { stdout: collect, stderr: collect });
  // A file that existed gets no bootstrap token (empty, as `startServe` gives).
  const token = /^export METACATALOG_TOKEN=(\S+)$/m.exec(out)?.[1] ?? '';
  const stop = async (): Promise<void> => {
    const stopping = handle.stop();
    // The test's requests are answered: its idle keep-alive connections (this process's fetch pool) need
    // not wait out the stop's grace for a request already on its way (1 s).
    handle.server.server.closeIdleConnections();
    await stopping;
  };
  return { url: `${handle.url.replace(/\/$/, '')}/gms`, token, db, stop };
}

/** `metacatalog serve` on a temporary SQLite file and a free loopback port. */
export async function startServe(db: string = join(tempDir(), 'served.db')): Promise<Served> {
  const served = await spawnServe(['--db', db, '--quiet'], cliEnv());
  return {
    url: `${served.url.replace(/\/$/, '')}/gms`,
    token: served.token ?? '',
    db,
    async stop() {
      if (served.child.exitCode === null) {
        served.child.kill('SIGTERM');
        await served.exit;
      }
    },
  };
}
