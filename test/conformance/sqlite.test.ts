import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, it, expect } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import type { StorageAdapter } from '../../src/adapter/types';
import { runConformanceSuite } from '../../src/testing/index';

// One temp file per test; the file of each adapter is remembered so the suite can reopen and inspect it.
const directories: string[] = [];
const files = new WeakMap<StorageAdapter, string>();

function fileOf(adapter: StorageAdapter): string {
  const file = files.get(adapter);
  if (!file) throw new Error('this adapter was not created by the conformance harness');
  return file;
}

function track(adapter: StorageAdapter, file: string): StorageAdapter {
  files.set(adapter, file);
  return adapter;
}

/** Counts rows with a second, read-only connection: the store itself, not the adapter's reads. */
function countRows(adapter: StorageAdapter, table: 'aspects' | 'jobs'): Promise<number> {
  const db = new Database(fileOf(adapter), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
    return Promise.resolve(row.n);
  } finally {
    db.close();
  }
}

afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

runConformanceSuite({
  name: 'sqlite',
  describe,
  it,
  skip: it.skip,
  expect,
  capabilities: { durable: true, changeToken: true, changeFeed: true, timeseriesInCommit: true },
  createAdapter: (options) => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    return track(createSqliteAdapter({ filename, ...options }), filename);
  },
  reopen: (closed) => {
    const filename = fileOf(closed);
    return track(createSqliteAdapter({ filename }), filename);
  },
  inspect: {
    countAspects: (adapter) => countRows(adapter, 'aspects'),
    countJobs: (adapter) => countRows(adapter, 'jobs'),
  },
});
