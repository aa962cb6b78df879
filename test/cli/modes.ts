import { join } from 'node:path';
import { cliEnv, runCli, serveInProcess, tempDir, type Served } from './helpers';

/**
 * The two ways the CLI reaches a catalog. Each test opens its own: a fresh SQLite file (embedded), or
 * `serve` on a fresh file and a free loopback port (remote, with the bootstrap admin token), run in this process
 * (the bin's own start is tested in serve.test.ts).
 */
export interface ModeCatalog {
  /** The arguments that name the catalog: `--db <file>` or `--server <url> --token <token>`. */
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The SQLite file behind it. */
  db: string;
  /** Remote only: the server and its admin token, for requests made by the test itself. */
  server?: Served;
  close(): Promise<void>;
}

export interface Mode {
  name: 'embedded' | 'remote';
  open(): Promise<ModeCatalog>;
}

export const MODES: readonly Mode[] = [
  {
    name: 'embedded',
    async open() {
      const db = join(tempDir(), 'catalog.db');
      return { args: ['--db', db], env: cliEnv(), db, close: async () => undefined };
    },
  },
  {
    name: 'remote',
    async open() {
      const server = await serveInProcess();
      return { args: ['--server', server.url, '--token', server.token], env: cliEnv(), db: server.db, server, close: () => server.stop() };
    },
  },
];

/** Runs `work` against a fresh catalog of the mode, with a `cli(...)` that names it; closes it after. */
export async function withMode(
  mode: Mode,
  work: (mc: ModeCatalog, cli: (...args: string[]) => ReturnType<typeof runCli>) => Promise<void>,
): Promise<void> {
  const mc = await mode.open();
  try {
    await work(mc, (...args) => runCli([...args, ...mc.args], { env: mc.env }));
  } finally {
    await mc.close();
  }
}
