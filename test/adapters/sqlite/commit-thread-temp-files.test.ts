import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openOnCommitThread, requireBuiltSqliteAdapter } from '../../support/built-sqlite-child';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/**
 * Rounds of 16 concurrent commits on the built adapter (its commit thread, from dist/), each entity with a
 * search document and a change event: every group is one transaction of several savepoints, the shape whose
 * statement journal SQLite spilled to a temporary file once it passed 64 KiB. Prints how many batches committed.
 */
const WRITER = (filename: string) => `${openOnCommitThread(filename)}const stamp = { time: Date.now(), actor: 'urn:li:corpuser:admin' };
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
    requireBuiltSqliteAdapter();
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-temp-files-'));
    directories.push(directory);
    // SQLite puts its temporary files in SQLITE_TMPDIR (read when the process loads it): a directory of their own.
    const sqliteTemp = join(directory, 'sqlite-tmp');
    mkdirSync(sqliteTemp);
    const script = join(directory, 'writer.mjs');
    writeFileSync(script, WRITER(join(directory, 'catalog.db')));
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
