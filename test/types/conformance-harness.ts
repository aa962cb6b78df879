// Checked by `tsc --noEmit` (never run): the harness example of docs/adapters.md and of
// src/testing/index.ts, which test/project/docs-snippets.test.ts keeps equal to the lines below the marker.
// docs:start
import { describe, it, expect } from 'vitest';
import { runConformanceSuite } from 'metacatalog/testing';
import { countRows, createMyAdapter, fileOf, freshFile } from './my-adapter';

runConformanceSuite({
  name: 'my-adapter',
  describe,
  it,
  skip: it.skip, // capabilities the adapter does not declare: their tests are reported skipped
  expect,
  // What the adapter declares; the suite checks that every adapter it creates declares exactly this.
  capabilities: { durable: true, changeToken: false, changeFeed: true },
  // A fresh, empty store per test; the options carry the suite's fault injector.
  createAdapter: (options) => createMyAdapter({ ...options, filename: freshFile() }),
  // Durable adapters: the same store again after close, to prove that what was committed survives.
  reopen: (closed) => createMyAdapter({ filename: fileOf(closed) }),
  // Optional: read the store itself, not only through the adapter.
  inspect: { countAspects: (adapter) => countRows(adapter, 'aspects'), countJobs: (adapter) => countRows(adapter, 'jobs') },
});
