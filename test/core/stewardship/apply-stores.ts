import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import type { StorageAdapter, WriteBatch } from '../../../src/index';
import { SchemaPool, serverDecision } from '../../support/postgres';

/** A store that outlives a catalog: `open()` gives a new adapter over the same data (a restart). */
export interface ReopenableStore {
  open(): StorageAdapter;
  dispose(): Promise<void>;
}

/**
 * Memory, SQLite (a real file) and, when the test server answers, PostgreSQL (a schema of its own). A
 * memory adapter keeps nothing after `close()`, so its restart is a new catalog over the same adapter
 * object, whose `close()` is left to the test.
 */
export async function reopenableStores(file: string): Promise<Record<string, () => ReopenableStore>> {
  const stores: Record<string, () => ReopenableStore> = {
    memory: () => {
      const base = createMemoryAdapter();
      return {
        open: () => withCommit(base, { close: async () => undefined }),
        dispose: () => base.close(),
      };
    },
    sqlite: () => {
      const dir = mkdtempSync(join(tmpdir(), 'metacatalog-apply-'));
      return {
        open: () => createSqliteAdapter({ filename: join(dir, 'catalog.db') }),
        dispose: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  };
  if ((await serverDecision(file)) === 'run') {
    const pool = new SchemaPool();
    afterAll(() => pool.end());
    stores.postgres = () => {
      const schema = pool.freshSchema();
      return { open: () => pool.adapter({ schema }), dispose: async () => undefined };
    };
  }
  return stores;
}

/** The adapter with some methods replaced (the others reach the original). */
export function withCommit(adapter: StorageAdapter, overrides: Partial<StorageAdapter>): StorageAdapter {
  const wrapped = Object.create(adapter) as StorageAdapter;
  Object.assign(wrapped, overrides);
  return wrapped;
}

/** Calls `after(n)` once the n-th commit that completes a job has been committed (n counts from 1). */
export function watchJobCommits(adapter: StorageAdapter, after: (n: number, batch: WriteBatch) => Promise<void>): StorageAdapter {
  let n = 0;
  return withCommit(adapter, {
    commit: async (batch: WriteBatch) => {
      const result = await adapter.commit(batch);
      if (batch.completeJobs?.length) await after(++n, batch);
      return result;
    },
  });
}
