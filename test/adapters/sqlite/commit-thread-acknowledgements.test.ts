import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { sqliteAdapterInternals } from '../../../adapters/sqlite/internals';
import type { WriteBatch } from '../../../src/adapter/types';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const STAMP = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:admin' };

function batch(name: string): WriteBatch {
  const urn = `urn:li:dataset:(urn:li:dataPlatform:hive,acks.${name},PROD)`;
  return {
    entities: [
      {
        urn,
        entityType: 'dataset',
        expectVersion: 0,
        put: [{ name: 'datasetProperties', value: { name }, version: 1, created: STAMP, lastModified: STAMP }],
      },
    ],
    now: STAMP.time,
  };
}

describe('SQLite commit thread: acknowledgements', () => {
  it('tells one writer per turn of the event loop, also when the answers of several groups overlap', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-acks-'));
    directories.push(directory);
    const adapter = createSqliteAdapter({ filename: join(directory, 'catalog.db'), durability: 'normal' });
    await adapter.open();
    try {
      expect(sqliteAdapterInternals(adapter).commitPlace()).toBe('thread');
      // The turn counter: an immediate that schedules itself runs once per turn of the loop (the check phase).
      let turn = 0;
      let counting = true;
      const count = () => {
        turn++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      // 64 writers, 5 writes each: a group's 64 writers take 64 turns to be told, while the thread commits the
      // next groups meanwhile, whose answers arrive while the first group's writers are still being told.
      const toldAt: number[] = [];
      await Promise.all(
        Array.from({ length: 64 }, async (_, w) => {
          for (let i = 0; i < 5; i++) {
            await adapter.commit(batch(`w${w}.n${i}`));
            toldAt.push(turn);
          }
        }),
      );
      counting = false;
      expect(toldAt).toHaveLength(320);
      const sameTurn = toldAt.filter((at, i) => i > 0 && at === toldAt[i - 1]).length;
      expect(sameTurn).toBe(0);
    } finally {
      await adapter.close();
    }
  }, 60_000);
});
