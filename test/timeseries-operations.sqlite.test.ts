import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../adapters/sqlite/index';
import type { StorageAdapter } from '../src/adapter/types';
import { registerTimeseriesOperationsTests } from '../src/testing/timeseries-operations';

const dirs: string[] = [];
const files = new WeakMap<StorageAdapter, string>();

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

registerTimeseriesOperationsTests({
  name: 'sqlite',
  describe,
  it,
  expect,
  createAdapter: (options) => {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-'));
    dirs.push(dir);
    const filename = join(dir, 'catalog.db');
    const adapter = createSqliteAdapter({ filename, ...options });
    files.set(adapter, filename);
    return adapter;
  },
  reopen: (closed) => {
    const filename = files.get(closed);
    if (!filename) throw new Error('reopen: not an adapter of this harness');
    const adapter = createSqliteAdapter({ filename });
    files.set(adapter, filename);
    return adapter;
  },
});
