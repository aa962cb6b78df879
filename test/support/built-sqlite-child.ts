import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The built SQLite adapter (dist/: `npm test` builds first), for child processes that must run its commit thread. */
export const BUILT_SQLITE_ADAPTER = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/adapters/sqlite.js');

export function requireBuiltSqliteAdapter(): void {
  if (!existsSync(BUILT_SQLITE_ADAPTER)) throw new Error(`${BUILT_SQLITE_ADAPTER} is missing: run npm run build first`);
}

/**
 * The start of a child's ES module script: `adapter`, the built SQLite adapter opened on `filename` with
 * durability full, after checking that it started its commit thread from dist/ (exit code 3 when not).
 */
export function openOnCommitThread(filename: string): string {
  return `
import workerThreads from 'node:worker_threads';
import { syncBuiltinESMExports } from 'node:module';
const started = [];
workerThreads.Worker = class extends workerThreads.Worker {
  constructor(program, options) {
    super(program, options);
    started.push(String(program));
  }
};
syncBuiltinESMExports();
const { createSqliteAdapter } = await import(${JSON.stringify(pathToFileURL(BUILT_SQLITE_ADAPTER).href)});
const adapter = createSqliteAdapter({ filename: ${JSON.stringify(filename)}, durability: 'full' });
await adapter.open();
if (!started.some((program) => program.endsWith('/dist/adapters/sqlite-commit-worker.js'))) {
  console.error('no commit thread was started: ' + JSON.stringify(started));
  process.exit(3);
}
`;
}
