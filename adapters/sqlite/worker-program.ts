/**
 * Where a thread of the SQLite adapter finds its program: the built file next to the adapter's built code
 * (in the published package), or, when the adapter runs from its TypeScript sources (the test runner), those
 * sources bundled once per process with esbuild (a development dependency, never loaded from dist/). The
 * same rules for the commit thread (commit-worker-host.ts) and the reader threads (read-pool.ts).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';

export type WorkerProgram = { file: URL } | { code: string };

const bundled = new Map<string, Promise<WorkerProgram>>();

/**
 * `source`: the program's TypeScript file beside this one; `built`: its name under dist/adapters/.
 * Undefined when neither is found (the adapter bundled into another program).
 */
export async function findWorkerProgram(source: string, built: string): Promise<WorkerProgram | undefined> {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    let program = bundled.get(source);
    if (!program) {
      program = bundleSources(new URL(`./${source}`, here));
      bundled.set(source, program);
    }
    return program;
  }
  const candidates = [
    // dist/chunk-*.js: the adapter's code lives in a chunk at the root of dist/.
    `./adapters/${built}`,
    // dist/adapters/sqlite.js, should the code end up in the entry itself.
    `./${built}`,
    // The sources bundled into a file two levels under the package's root (the benchmarks' bench/.build/).
    `../../dist/adapters/${built}`,
  ];
  for (const candidate of candidates) {
    const file = new URL(candidate, here);
    if (existsSync(file)) return { file };
  }
  return undefined;
}

async function bundleSources(entry: URL): Promise<WorkerProgram> {
  // A variable specifier: the bundler that builds dist/ must not follow it.
  const esbuildModule = 'esbuild';
  const { build } = (await import(esbuildModule)) as typeof import('esbuild');
  const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'native-peer',
        // The native module stays outside, named by its absolute path: the code is evaluated, not read from a file.
        setup: (b) => b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: betterSqlite3, external: true })),
      },
    ],
  });
  return { code: result.outputFiles[0]!.text };
}

/**
 * The host's Node options for a thread (a worker inherits them), less `--input-type`: a host started as
 * `node --input-type=module -e ...` would make the thread refuse to load its program file.
 */
export function threadExecArgv(): { execArgv?: string[] } {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--input-type') i++;
    else if (!args[i]!.startsWith('--input-type=')) out.push(args[i]!);
  }
  // Given explicitly, the options are checked (some a worker refuses); inherited, they are not: only when needed.
  return out.length === args.length ? {} : { execArgv: out };
}

/** Drops the listeners an adapter put on its thread (only those events: Node keeps listeners of its own). */
export function detachThread(worker: Worker): void {
  for (const event of ['message', 'error', 'exit'] as const) worker.removeAllListeners(event);
}

/**
 * Threads whose adapter closed, kept (unreferenced: they never hold the process open) for the next adapter
 * this process opens: starting a thread and loading the SQLite driver in it takes 50–100 ms, which a
 * program that opens and closes catalogs (a test suite, a tool) would otherwise pay per adapter. At most
 * `max` of one kind; a parked thread holds no connection. `take` hands one back without the listeners its
 * last adapter put on it.
 */
export function threadParking(max: number): { park(worker: Worker): void; take(): Worker | undefined } {
  const parked: Worker[] = [];
  return {
    park(worker) {
      detachThread(worker);
      if (parked.length >= max) {
        void worker.terminate();
        return;
      }
      worker.unref();
      parked.push(worker);
      worker.once('exit', () => {
        const at = parked.indexOf(worker);
        if (at >= 0) parked.splice(at, 1);
      });
    },
    take() {
      const worker = parked.pop();
      if (worker) detachThread(worker);
      return worker;
    },
  };
}
