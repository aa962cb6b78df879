import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const BUILT_ADAPTER = join(root, 'dist/adapters/sqlite.js');

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/**
 * Rounds of 16 concurrent commits on the built adapter (its commit thread, from dist/), each entity with a
 * search document and a change event: every group is one transaction of several savepoints, the shape whose
 * statement journal SQLite spilled to a temporary file once it passed 64 KiB. Prints how many batches committed.
 */
const WRITER = (adapterUrl: string, filename: string) => `
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
const { createSqliteAdapter } = await import(${JSON.stringify(adapterUrl)});
const adapter = createSqliteAdapter({ filename: ${JSON.stringify(filename)}, durability: 'full' });
await adapter.open();
if (!started.some((program) => program.endsWith('/dist/adapters/sqlite-commit-worker.js'))) {
  console.error('no commit thread was started: ' + JSON.stringify(started));
  process.exit(3);
}
const stamp = { time: Date.now(), actor: 'urn:li:corpuser:admin' };
const batch = (name) => {
  const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,temp.' + name + ',PROD)';
  return {
    entities: [{ urn, entityType: 'dataset', expectVersion: 0,
      put: [
        { name: 'datasetProperties', value: { name, description: 'x'.repeat(2000), tags: ['a', 'b'] }, version: 1, created: stamp, lastModified: stamp },
        { name: 'globalTags', value: { tags: [{ tag: 'urn:li:tag:t' + name }] }, version: 1, created: stamp, lastModified: stamp },
      ],
      searchDocument: { urn, entityType: 'dataset', removed: false, text: { name, urnKey: name }, fields: { platform: ['hive'], tags: ['t' + name] }, properties: [] } }],
    events: [{ entityUrn: urn, entityType: 'dataset', aspectName: 'datasetProperties', changeType: 'UPSERT', aspect: { name }, previousAspectValue: null, created: stamp }],
    now: stamp.time,
  };
};
let committed = 0;
for (let round = 0; round < 20; round++) {
  await Promise.all(Array.from({ length: 16 }, (_, w) => adapter.commit(batch('r' + round + 'w' + w)).then(() => committed++)));
}
await adapter.close();
process.stdout.write('committed ' + committed + '\\n');
`;

describe('SQLite commit thread and temporary files', () => {
  it('commits groups of batches without writing a statement journal to a temporary file', async () => {
    if (!existsSync(BUILT_ADAPTER)) throw new Error(`${BUILT_ADAPTER} is missing: run npm run build first`);
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-temp-files-'));
    directories.push(directory);
    // SQLite puts its temporary files in SQLITE_TMPDIR (read when the process loads it): a directory of their own.
    const sqliteTemp = join(directory, 'sqlite-tmp');
    mkdirSync(sqliteTemp);
    const script = join(directory, 'writer.mjs');
    writeFileSync(script, WRITER(pathToFileURL(BUILT_ADAPTER).href, join(directory, 'catalog.db')));
    // A statement journal's file is deleted as soon as it is opened: the directory's events show it.
    const created: string[] = [];
    const watcher = watch(sqliteTemp, (_event, name) => created.push(String(name)));
    try {
      const child = spawn(process.execPath, [script], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, SQLITE_TMPDIR: sqliteTemp },
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(0);
      expect(out.trim()).toBe('committed 320');
      // Events arrive on this process's loop: give the last ones a turn.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      watcher.close();
    }
    expect(created).toEqual([]);
  }, 60_000);
});
