import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import type { StorageAdapter } from '../../src/index';

/**
 * A fresh adapter of each reference kind that needs no server, by name: memory, and SQLite on a real
 * temporary file (removed after each test of the calling file).
 */
export function freshAdapters(): Record<'memory' | 'sqlite', () => StorageAdapter> {
  const directories: string[] = [];
  afterEach(() => {
    for (const d of directories.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    memory: () => createMemoryAdapter(),
    sqlite: () => {
      const directory = mkdtempSync(join(tmpdir(), 'metacatalog-test-'));
      directories.push(directory);
      return createSqliteAdapter({ filename: join(directory, 'catalog.db') });
    },
  };
}
