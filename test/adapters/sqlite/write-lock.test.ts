import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { openWalSync } from '../../../adapters/sqlite/wal-sync';
import type { StorageAdapter, WriteBatch } from '../../../src/adapter/types';
import { tempDatabases } from '../../support/temp-database';

const newFile = tempDatabases('write-lock');

const STAMP = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:admin' };

function put(urn: string, name: string): WriteBatch {
  return {
    entities: [
      {
        urn,
        entityType: 'dataset',
        expectVersion: 0,
        put: [{ name: 'datasetProperties', value: { name }, version: 1, created: STAMP, lastModified: STAMP }],
      },
    ],
  };
}

const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,lock.t${i},PROD)`;

/** Another process's writer, as far as this adapter can tell: a second connection holding the write lock. */
function holdWriteLock(filename: string): Database.Database {
  const other = new Database(filename);
  other.exec('BEGIN IMMEDIATE');
  return other;
}

async function opened(filename: string, busyTimeoutMs?: number): Promise<StorageAdapter> {
  const adapter = createSqliteAdapter({ filename, ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}) });
  await adapter.open();
  return adapter;
}

describe('the SQLite write lock held by another connection', () => {
  it('waits for it on timers: the event loop keeps running, and the queued writes commit once it is released', async () => {
    const filename = newFile();
    const adapter = await opened(filename);
    try {
      await adapter.commit(put(urnOf(0), 'first'));
      const other = holdWriteLock(filename);
      let settled = 0;
      const commits = [1, 2, 3].map((i) => adapter.commit(put(urnOf(i), `t${i}`)).then(() => settled++));
      // Timers fire while the lock is held: nothing sleeps in SQLite's busy handler.
      const ticks: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        await new Promise((r) => setTimeout(r, 5));
        ticks.push(performance.now() - started);
      }
      expect(settled).toBe(0);
      // Under a busy handler, one tick would last the whole busy timeout (5 s).
      expect(Math.max(...ticks)).toBeLessThan(1_000);
      other.exec('COMMIT');
      other.close();
      await Promise.all(commits);
      expect(settled).toBe(3);
      const read = await adapter.readEntities([urnOf(1), urnOf(2), urnOf(3)]);
      expect(read.map((e) => e.aspects.datasetProperties?.value)).toEqual([{ name: 't1' }, { name: 't2' }, { name: 't3' }]);
    } finally {
      await adapter.close();
    }
  });

  it('gives up past the busy timeout with SQLITE_BUSY, writing nothing, and commits again once the lock is free', async () => {
    const filename = newFile();
    const adapter = await opened(filename, 300);
    try {
      await adapter.commit(put(urnOf(0), 'first'));
      const other = holdWriteLock(filename);
      const started = performance.now();
      const failed = await adapter.commit(put(urnOf(1), 'blocked')).then(
        () => undefined,
        (error: { code?: string }) => error,
      );
      other.exec('ROLLBACK');
      other.close();
      expect(failed?.code).toBe('SQLITE_BUSY');
      expect(performance.now() - started).toBeGreaterThanOrEqual(300);
      expect(await adapter.readEntities([urnOf(1)])).toEqual([]);
      await adapter.commit(put(urnOf(2), 'after'));
      expect((await adapter.readEntities([urnOf(2)])).length).toBe(1);
    } finally {
      await adapter.close();
    }
  });

  it('syncs the WAL off the event loop with durability full: concurrent commits are each acknowledged after a sync', async () => {
    const filename = newFile();
    const offLoop = await opened(filename);
    const inCommit = createSqliteAdapter({ filename: newFile(), syncOffEventLoop: false });
    await inCommit.open();
    try {
      await Promise.all(Array.from({ length: 40 }, (_, i) => offLoop.commit(put(urnOf(100 + i), `c${i}`))));
      await Promise.all(Array.from({ length: 10 }, (_, i) => inCommit.commit(put(urnOf(200 + i), `d${i}`))));
      expect((await offLoop.readEntities(Array.from({ length: 40 }, (_, i) => urnOf(100 + i)))).length).toBe(40);
      expect((await inCommit.readEntities(Array.from({ length: 10 }, (_, i) => urnOf(200 + i)))).length).toBe(10);
    } finally {
      await offLoop.close();
      await inCommit.close();
    }
    // What the adapter syncs: the WAL of a file; nothing for a database in memory.
    const db = new Database(filename);
    try {
      db.pragma('journal_mode = WAL');
      db.prepare('SELECT 1').get();
      const sync = openWalSync(db);
      expect(sync).toBeDefined();
      await Promise.all([sync!.sync(), sync!.sync(), sync!.sync()]);
      sync!.close();
      await expect(sync!.sync()).rejects.toThrow(/closed/);
    } finally {
      db.close();
    }
    const memory = new Database(':memory:');
    expect(openWalSync(memory)).toBeUndefined();
    memory.close();
  });
});
