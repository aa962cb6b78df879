import cluster from 'node:cluster';
import type { RunningServer } from '../http/server';
import { FIRST_WORKER_ENV, READY_MESSAGE } from './cluster';
import type { CommandIo } from './io';

/** Every answer of a worker of `serve --workers N` names it: the worker's id (a replacement gets a new one). */
const WORKER_HEADER = 'X-Metacatalog-Worker';

/** The worker's own messages say which worker wrote them; the access log and the token line stay as they are. */
function workerIo(io: CommandIo, id: number): CommandIo {
  const prefix = `metacatalog: worker ${id} (pid ${process.pid}): `;
  return {
    stdout: (text) => io.stdout(text.replace(/^metacatalog: /gm, prefix)),
    stderr: (text) => io.stderr(text.replace(/^metacatalog: /gm, prefix)),
  };
}

/**
 * Resolves when this worker should stop: SIGTERM (the primary's stop, or an operator's for this worker
 * alone, which the primary then replaces), or the primary gone. SIGINT from a terminal reaches the whole
 * process group: the primary takes it and sends SIGTERM, so the worker leaves it alone.
 */
function stopRequest(): Promise<string> {
  return new Promise((resolve) => {
    process.on('SIGINT', () => undefined);
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('disconnect', () => resolve('the primary process is gone'));
  });
}

interface ServeWorkerHandle {
  server: RunningServer;
  stop(): Promise<void>;
}

/**
 * One worker of `serve --workers N`: the service as one process runs it (`start`), except that only the
 * first worker of the first start may print a bootstrap token (`--bootstrap-token` is not repeated by
 * the others or by replacements), every answer carries `X-Metacatalog-Worker`, and the primary is told
 * when it listens. Resolves with the exit code once stopped.
 */
export async function runServeWorker<O extends { bootstrapToken?: boolean }>(
  options: O,
  io: CommandIo,
  start: (options: O, io: CommandIo) => Promise<ServeWorkerHandle>,
): Promise<number> {
  const id = cluster.worker?.id ?? 0;
  const own = workerIo(io, id);
  const stopping = stopRequest();
  let handle: ServeWorkerHandle;
  try {
    const first = process.env[FIRST_WORKER_ENV] === '1';
    handle = await start({ ...options, bootstrapToken: first && options.bootstrapToken === true }, own);
  } catch (error) {
    // The IPC channel would keep this process alive: let go of it, so that the process ends with the
    // command's exit code once the error is printed (a disconnect would exit at once, with 0).
    process.channel?.unref();
    throw error;
  }
  handle.server.server.prependListener('request', (_request, response) => response.setHeader(WORKER_HEADER, String(id)));
  process.send?.({ type: READY_MESSAGE, url: handle.server.url });
  const reason = await stopping;
  own.stdout(`metacatalog: ${reason}: finishing ${handle.server.inFlight()} request(s) in flight and the current background batch\n`);
  await handle.stop();
  own.stdout('metacatalog: stopped\n');
  if (process.connected) process.disconnect();
  return 0;
}
