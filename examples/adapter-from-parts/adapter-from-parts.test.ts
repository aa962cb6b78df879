// The adapter built from one part passes the whole conformance suite, durability included: a fresh
// file per test, and `reopen` opens a new adapter over the same file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StorageAdapter } from 'metacatalog';
import { runConformanceSuite } from 'metacatalog/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createJsonFileAdapter } from './index';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-json-lines-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const files = new WeakMap<StorageAdapter, string>();
let count = 0;

function adapterOver(filename: string, faultInjector?: (step: { entityIndex: number; urn: string }) => void): StorageAdapter {
  // Syncing every commit to disk is what a real deployment wants; the suite's thousands of commits do not need it.
  const adapter = createJsonFileAdapter({ filename, sync: false, ...(faultInjector ? { faultInjector } : {}) });
  files.set(adapter, filename);
  return adapter;
}

runConformanceSuite({
  name: 'json-lines store composed from parts',
  describe,
  it,
  skip: it.skip,
  expect,
  capabilities: { durable: true, changeToken: false, changeFeed: true },
  createAdapter: (options) => adapterOver(join(directory, `catalog-${++count}.jsonl`), options.faultInjector),
  reopen: (closed) => adapterOver(files.get(closed)!),
});
