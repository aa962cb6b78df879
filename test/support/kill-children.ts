import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/**
 * A setup file (vitest.config.ts): after each test file, every process it started and left running is
 * killed (a `serve` child of a test that timed out before its own clean-up, and that child's workers), so
 * that no process outlives its file and holds up the run. Files stop their children themselves; this is the
 * net under them. Linux (/proc) only; elsewhere nothing is done.
 */
function descendants(root: number): Array<{ pid: number; command: string }> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue; // exited, not yet reaped: nothing to kill
    const list = children.get(Number(ppid)) ?? [];
    list.push(Number(name));
    children.set(Number(ppid), list);
  }
  const found: Array<{ pid: number; command: string }> = [];
  const queue = [...(children.get(root) ?? [])];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    let command: string;
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    found.push({ pid, command });
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** esbuild's service: started by its JavaScript API (a file that bundles a fixture), kept for the process's life. */
const KEPT = /\/esbuild(\.exe)? --service=/;

afterAll(() => {
  if (!existsSync('/proc/self/stat')) return;
  for (const { pid, command } of descendants(process.pid)) {
    if (KEPT.test(command)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      process.stderr.write(`killed pid ${pid}, left running by the test file: ${command.slice(0, 200)}\n`);
    } catch {
      // exited meanwhile
    }
  }
});
