/** A `metacatalog serve` child process for the benchmarks that drive the service with wrk. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServeProcess {
  child: ChildProcess;
  port: number;
  /** The bootstrap admin token the service printed. */
  token: string;
}

/**
 * Starts `node <cli> serve <args>` (which must include `--port 0 --bootstrap-token`) and waits until it
 * prints the line `ready` matches (its first group: the port), within two minutes.
 */
export async function startServe(cli: string, args: readonly string[], ready: RegExp): Promise<ServeProcess> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const deadline = Date.now() + 120_000;
  while (!ready.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`serve ${args.join(' ')} did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const token = /export METACATALOG_TOKEN=(\S+)/.exec(out)?.[1];
  if (!token) throw new Error(`no bootstrap token: ${out}`);
  return { child, port: Number(ready.exec(out)![1]), token };
}

/** Stops the service with SIGTERM and waits for it to exit. */
export async function stopServe(service: ServeProcess): Promise<void> {
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;
}
