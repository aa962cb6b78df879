/**
 * `metacatalog/testing`: the adapter conformance suite. Every adapter runs it in one call, a fresh
 * adapter per test; what an adapter cannot do is skipped by its declared capabilities (and the
 * harness's `reopen` / `inspect`), never by editing the suite.
 *
 * ```ts
 * import { describe, it, expect } from 'vitest';
 * import { runConformanceSuite } from 'metacatalog/testing';
 * import { countRows, createMyAdapter, fileOf, freshFile } from './my-adapter';
 *
 * runConformanceSuite({
 *   name: 'my-adapter',
 *   describe,
 *   it,
 *   skip: it.skip, // capabilities the adapter does not declare: their tests are reported skipped
 *   expect,
 *   // What the adapter declares; the suite checks that every adapter it creates declares exactly this.
 *   capabilities: { durable: true, changeToken: false, changeFeed: true, timeseriesInCommit: true },
 *   // A fresh, empty store per test; the options carry the suite's fault injector.
 *   createAdapter: (options) => createMyAdapter({ ...options, filename: freshFile() }),
 *   // Durable adapters: the same store again after close, to prove that what was committed survives.
 *   reopen: (closed) => createMyAdapter({ filename: fileOf(closed) }),
 *   // Optional: read the store itself, not only through the adapter.
 *   inspect: { countAspects: (adapter) => countRows(adapter, 'aspects'), countJobs: (adapter) => countRows(adapter, 'jobs') },
 * });
 * ```
 *
 * docs/adapters.md walks through writing an adapter from an entity store alone that passes all of it.
 */
import type { ConformanceHarness } from './types';
import { registerCatalogTests } from './catalog';
import { registerChangeTests } from './changes';
import { registerCommitTests } from './commits';
import { registerCommitTimeseriesTests } from './commit-timeseries';
import { registerDurabilityTests } from './durability';
import { registerEntityTests } from './entities';
import { registerJobTests } from './jobs';
import { registerPropertyValueTests } from './property-values';
import { registerSearchApiTests } from './search-api';
import { registerRandomSearchTests } from './search-random';
import { registerSearchSemanticsTests } from './search-semantics';
import { registerStructuredPropertyTests } from './structured-properties';
import { registerTimeseriesTests } from './timeseries';
import { registerTokenTests } from './tokens';
import { registerTimeseriesOperationsTests } from './timeseries-operations';

export { seededRandom } from './random';
export type {
  ConformanceExpect,
  ConformanceHarness,
  ConformanceMatchers,
  ConformanceTestApi,
  FaultInjector,
  StoreInspector,
} from './types';

/** Registers the whole suite with the runner's `describe` / `it`. */
export function runConformanceSuite(harness: ConformanceHarness): void {
  harness.describe(`adapter conformance: ${harness.name}`, () => {
    registerEntityTests(harness);
    registerCommitTests(harness);
    registerCommitTimeseriesTests(harness);
    registerPropertyValueTests(harness);
    registerSearchSemanticsTests(harness);
    registerRandomSearchTests(harness);
    registerJobTests(harness);
    registerTimeseriesTests(harness);
    registerCatalogTests(harness);
    registerStructuredPropertyTests(harness);
    registerTokenTests(harness);
    registerSearchApiTests(harness);
    registerTimeseriesOperationsTests(harness);
    registerChangeTests(harness);
    if (harness.capabilities.durable && harness.reopen) registerDurabilityTests(harness, harness.reopen);
    else
      harness.describe('durability (close and reopen)', () =>
        harness.skip('the adapter does not declare capabilities.durable', () => undefined),
      );
  });
}

/**
 * Only the search sections of the suite: property values in search documents, search semantics, the
 * seeded random comparison with the reference evaluator, and the catalog's search API. For an adapter
 * whose searches are answered elsewhere than its writes (PostgreSQL with replicas), beside the whole
 * suite on the plain adapter.
 */
export function runSearchConformanceSuite(harness: ConformanceHarness): void {
  harness.describe(`search conformance: ${harness.name}`, () => {
    registerPropertyValueTests(harness);
    registerSearchSemanticsTests(harness);
    registerRandomSearchTests(harness);
    registerSearchApiTests(harness);
  });
}
