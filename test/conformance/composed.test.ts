import { describe, it, expect } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { composeAdapter } from '../../src/adapter/compose-adapter';
import { runConformanceSuite } from '../../src/testing/index';

// The memory adapter used as an entity store only: search, jobs, timeseries and the change log are the
// composer's generic parts, kept as records in it. The store declares a change token, so this run also
// covers the scan index's tokens on search answers (the example's file store declares none).
runConformanceSuite({
  name: 'memory entity store composed with generic parts',
  describe,
  it,
  skip: it.skip,
  expect,
  capabilities: { durable: false, changeToken: true, changeFeed: true, timeseriesInCommit: true },
  createAdapter: (options) => composeAdapter({ entities: createMemoryAdapter(options) }),
});
