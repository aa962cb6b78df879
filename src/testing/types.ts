import type { AdapterCapabilities, FaultInjectionOptions, StorageAdapter } from '../adapter/types';

/**
 * The few matchers the suite uses. Structural and small on purpose: vitest's and jest's `expect`
 * are assignable to `ConformanceExpect`, and so is any runner's that offers these names.
 */
export interface ConformanceMatchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeUndefined(): void;
  toBeDefined(): void;
  toHaveLength(length: number): void;
  toBeGreaterThan(value: number): void;
  toBeLessThan(value: number): void;
  readonly not: {
    toBe(expected: unknown): void;
    toEqual(expected: unknown): void;
  };
}

export type ConformanceExpect = (actual: unknown) => ConformanceMatchers;

/** The test functions of the runner (vitest, jest, node:test with an expect library...). */
export interface ConformanceTestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void> | void): void;
  /** Registers a test the runner reports as skipped (vitest's and jest's `it.skip`, node:test's `it.skip`). */
  skip(name: string, fn: () => Promise<void> | void): void;
  expect: ConformanceExpect;
}

export type FaultInjector = NonNullable<FaultInjectionOptions['faultInjector']>;

/** Reads the store itself, beside the adapter (e.g. a second read-only connection to a SQLite file). */
export interface StoreInspector {
  /** Rows of stored aspects, over all entities. */
  countAspects(adapter: StorageAdapter): Promise<number>;
  /** Rows of jobs (pending and dead). */
  countJobs(adapter: StorageAdapter): Promise<number>;
}

export interface ConformanceHarness extends ConformanceTestApi {
  /** Names the run in test titles, e.g. `sqlite`. */
  name: string;
  /**
   * What the adapter under test declares (`adapter.capabilities`), known before any adapter is created so
   * that the suite registers each capability's tests or reports them skipped. The suite checks that every
   * adapter it creates declares exactly these.
   */
  capabilities: AdapterCapabilities;
  /** A fresh, empty adapter per test; options carry the fault injector. The suite calls `open()` itself. */
  createAdapter(options: FaultInjectionOptions): StorageAdapter | Promise<StorageAdapter>;
  /**
   * Durable adapters: a new adapter over the same data, after `closed` was closed. Given exactly when
   * the adapter declares `capabilities.durable`; the durability tests run only then.
   */
  reopen?: (closed: StorageAdapter) => StorageAdapter | Promise<StorageAdapter>;
  /** When given, the suite also checks what a commit left in the store, not only what the adapter reads back. */
  inspect?: StoreInspector;
}
