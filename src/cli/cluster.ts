import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { UsageError, type CommandIo } from './io';

/**
 * `metacatalog serve --workers N`: N worker processes behind one port (node:cluster). The primary
 * serves nothing and opens no database: it starts the workers, replaces one that dies (with a
 * back-off), gives up when they keep dying before they could serve, and stops them on SIGINT/SIGTERM.
 * Each worker is a whole `serve` on the shared SQLite file or PostgreSQL database (cluster-worker.ts).
 */

/** Tells a worker it is the first of the first start: it alone may issue the bootstrap token. */
export const FIRST_WORKER_ENV = 'METACATALOG_SERVE_FIRST_WORKER';
/** The message a worker sends once it listens. */
export const READY_MESSAGE = 'metacatalog:worker-ready';

const MAX_WORKERS = 256;
/** Back-off before a replacement: 100 ms, doubled for each death in the last minute, 10 s at most. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 10_000;
const DEATH_WINDOW_MS = 60_000;
/** Deaths before serving, in a row, after which the primary gives up. */
const MAX_START_FAILURES = 5;

/** `--workers`: an integer from 1 to 256, or `auto` (the number of cores this process may use). */
export function parseWorkers(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (text === 'auto') return availableParallelism();
  if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_WORKERS) {
    throw new UsageError(`--workers must be a number from 1 to ${MAX_WORKERS} or auto, got "${text}"`);
  }
  return Number(text);
}

/** True in a process started by `superviseWorkers`. */
export function isServeWorker(): boolean {
  return cluster.isWorker;
}

export interface SupervisorOptions {
  /** The `serve` arguments each worker runs with (the primary's own). */
  args: readonly string[];
  /** Overrides for tests of the supervisor itself. */
  restartBaseMs?: number;
}

function describeExit(code: number | null, signal: string | null): string {
  return signal ? `signal ${signal}` : `exit code ${String(code)}`;
}

/**
 * Runs `count` workers until SIGINT or SIGTERM; resolves with the exit code of the command: 0 after a
 * graceful stop, 1 when the first worker cannot start or workers keep dying before they serve.
 */
export function superviseWorkers(count: number, io: CommandIo, options: SupervisorOptions): Promise<number> {
  const restartBaseMs = options.restartBaseMs ?? RESTART_BASE_MS;
  cluster.setupPrimary({ args: [...options.args] });
  const live = new Set<Worker>();
  const ready = new Set<Worker>();
  const timers = new Set<NodeJS.Timeout>();
  /** Times of recent deaths (within DEATH_WINDOW_MS), for the back-off; at most a few dozen entries. */
  let deaths: number[] = [];
  let startFailures = 0;
  let everReady = false;
  let announced = false;
  let stopping = false;
  let exitCode = 0;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));

  const start = (first: boolean): void => {
    const worker = cluster.fork(first ? { [FIRST_WORKER_ENV]: '1' } : {});
    live.add(worker);
    worker.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== READY_MESSAGE) return;
      ready.add(worker);
      everReady = true;
      startFailures = 0;
      const url = String((message as { url?: unknown }).url);
      if (stopping) return;
      if (first) for (let i = 1; i < count; i++) start(false);
      if (!announced && ready.size === count) {
        announced = true;
        io.stdout(`metacatalog: ${count} workers listening on ${url} (primary pid ${process.pid})\n`);
      }
    });
    worker.on('exit', (code, signal) => onExit(worker, code, signal));
  };

  const stopAll = (reason: string, code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    if (live.size)
      io.stdout(
        `metacatalog: ${reason}: stopping ${live.size} worker(s); each finishes its requests in flight and its current background batch\n`,
      );
    for (const worker of live) worker.process.kill('SIGTERM');
    if (live.size === 0) finish(exitCode);
  };

  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    const wasReady = ready.delete(worker);
    live.delete(worker);
    const how = describeExit(code, signal);
    if (stopping) {
      if (code !== 0 && signal !== 'SIGTERM')
        io.stderr(`metacatalog: worker ${worker.id} (pid ${worker.process.pid}) stopped with ${how}\n`);
      if (live.size === 0) finish(exitCode);
      return;
    }
    if (!everReady) {
      io.stderr(`metacatalog: the first worker could not start (${how}; its message is above): giving up\n`);
      stopAll('giving up', 1);
      return;
    }
    if (!wasReady) startFailures++;
    if (startFailures >= MAX_START_FAILURES) {
      io.stderr(
        `metacatalog: giving up: ${startFailures} workers in a row died before they could serve (the last with ${how}; their messages are above)\n`,
      );
      stopAll('giving up', 1);
      return;
    }
    const now = Date.now();
    deaths = [...deaths.filter((t) => now - t < DEATH_WINDOW_MS).slice(-31), now];
    const delay = Math.min(RESTART_MAX_MS, restartBaseMs * 2 ** (deaths.length - 1));
    io.stderr(`metacatalog: worker ${worker.id} (pid ${worker.process.pid}) died (${how}); starting a new one in ${delay} ms\n`);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopping) start(false);
    }, delay);
    timers.add(timer);
  };

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      io.stderr(`metacatalog: ${signal} again: stopping the workers at once\n`);
      for (const worker of live) worker.process.kill('SIGKILL');
      process.exit(130);
    }
    signalled = true;
    stopAll(signal, exitCode);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  io.stdout(`metacatalog: starting ${count} workers (primary pid ${process.pid})\n`);
  start(true);
  return finished.then((code) => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.stdout('metacatalog: stopped\n');
    return code;
  });
}
