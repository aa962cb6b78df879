import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openOnCommitThread, requireBuiltSqliteAdapter } from '../../support/built-sqlite-child';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** What the writer prints first once its commits run on the adapter's commit thread (the built program). */
const ON_THREAD = 'commits on the commit thread';

/**
 * The writer: 16 concurrent single-entity commits on the built adapter (durability full: committed and
 * synced on the adapter's commit thread), each URN printed once its commit is acknowledged, until it is
 * killed. It checks first that the adapter started its commit thread from dist/.
 */
const WRITER = (
  filename: string,
  writers: number,
) => `${openOnCommitThread(filename)}process.stdout.write(${JSON.stringify(ON_THREAD)} + '\\n');
const stamp = { time: Date.now(), actor: 'urn:li:corpuser:admin' };
const writer = async (w) => {
  for (let i = 0; ; i++) {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,kill.' + process.argv[2] + '.w' + w + '.n' + i + ',PROD)';
    await adapter.commit({ entities: [{ urn, entityType: 'dataset', expectVersion: 0,
      put: [{ name: 'datasetProperties', value: { name: 'n' + i }, version: 1, created: stamp, lastModified: stamp }] }] });
    process.stdout.write(urn + '\\n');
  }
};
await Promise.all(Array.from({ length: ${writers} }, (_, w) => writer(w)));
`;

describe('SQLite durability under SIGKILL', () => {
  it('loses no acknowledged write when the writing process is killed with SIGKILL, at several points', async () => {
    requireBuiltSqliteAdapter();
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-kill-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    const script = join(directory, 'writer.mjs');
    writeFileSync(script, WRITER(filename, 16));
    const acknowledged: string[] = [];
    let onThread = 0;
    // Killed after different numbers of acknowledgements, each run appending to the same file.
    const runs = [50, 400, 1_500];
    for (const killAfter of runs) {
      const child = spawn(process.execPath, [script, `run${killAfter}`], { stdio: ['ignore', 'pipe', 'inherit'] });
      const before = acknowledged.length;
      let pending = '';
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          pending += chunk.toString('utf8');
          const lines = pending.split('\n');
          pending = lines.pop()!;
          if (lines[0] === ON_THREAD) {
            onThread++;
            lines.shift();
          }
          acknowledged.push(...lines);
          if (acknowledged.length - before >= killAfter && child.exitCode === null && !child.killed) {
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.once('exit', () => resolve());
      });
      expect(await exited).toBe('SIGKILL');
      expect(onThread).toBe(runs.indexOf(killAfter) + 1);
      // A line cut in half by the kill was never a whole acknowledgement.
      expect(acknowledged.length - before).toBeGreaterThanOrEqual(killAfter);
    }
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    try {
      const found = new Set<string>();
      for (let i = 0; i < acknowledged.length; i += 500) {
        for (const entity of await adapter.readEntities(acknowledged.slice(i, i + 500))) found.add(entity.urn);
      }
      const lost = acknowledged.filter((urn) => !found.has(urn));
      expect(lost).toEqual([]);
      expect(found.size).toBe(acknowledged.length);
    } finally {
      await adapter.close();
    }
  }, 120_000);
});
