import { describe, it, expect } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { runConformanceSuite } from '../../src/testing/index';

runConformanceSuite({
  name: 'memory',
  describe,
  it,
  skip: it.skip,
  expect,
  capabilities: { durable: false, changeToken: true, changeFeed: true, timeseriesInCommit: true },
  createAdapter: (options) => createMemoryAdapter(options),
});
