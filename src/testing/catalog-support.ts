import type { StorageAdapter, WriteBatch } from '../adapter/types';
import { createCatalog, type Catalog, type CatalogOptions } from '../catalog';
import { T0 } from './support';
import type { ConformanceHarness } from './types';

/** Actors of the catalog-level tests. */
export const ADMIN = 'urn:li:corpuser:admin';
export const MANAGER = 'urn:li:corpuser:manager';
export const ALICE = 'urn:li:corpuser:alice';
export const BOB = 'urn:li:corpuser:bob';
/** Holds no privilege at all. */
export const CAROL = 'urn:li:corpuser:carol';

export const KEY_A = 'conformance-signing-key-A-0123456789abcdef';
export const KEY_B = 'conformance-signing-key-B-fedcba9876543210';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The catalog clock of a test: moved by hand, never by waiting. */
interface TestClock {
  now(): number;
  advance(ms: number): void;
}

function testClock(start = T0): TestClock {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

export interface CatalogFixture {
  catalog: Catalog;
  clock: TestClock;
  adapter: StorageAdapter;
}

/** Superuser ADMIN; MANAGER manages tokens; ALICE and BOB may have personal tokens; CAROL nothing. */
function baseOptions(adapter: StorageAdapter, clock: TestClock): CatalogOptions {
  return {
    adapter,
    clock: clock.now,
    tokenSigningKey: KEY_A,
    superUsers: [ADMIN],
    policies: [
      { name: 'managers', actors: [MANAGER], privileges: ['MANAGE_ACCESS_TOKENS', 'GENERATE_PERSONAL_ACCESS_TOKENS'] },
      { name: 'users', actors: [ALICE, BOB], privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] },
    ],
    jobs: { background: false },
    onError: () => undefined,
  };
}

/** A catalog over a fresh adapter of the harness, closed afterwards whatever happens. */
export async function withCatalog(
  harness: ConformanceHarness,
  test: (fixture: CatalogFixture) => Promise<void>,
  options: Partial<CatalogOptions> & { wrapAdapter?: (adapter: StorageAdapter) => StorageAdapter } = {},
): Promise<void> {
  const { wrapAdapter, ...catalogOptions } = options;
  const adapter = await harness.createAdapter({});
  const clock = testClock();
  const catalog = createCatalog({ ...baseOptions(wrapAdapter ? wrapAdapter(adapter) : adapter, clock), ...catalogOptions });
  try {
    await catalog.ready();
    await test({ catalog, clock, adapter });
  } finally {
    await catalog.close();
  }
}

/** The same store seen by a second catalog (another process, another configuration); its `close` leaves the store open. */
function sharedAdapter(adapter: StorageAdapter): StorageAdapter {
  return new Proxy(adapter, {
    get(target, property) {
      if (property === 'close') return async () => undefined;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The adapter, with every batch handed to `commit` also pushed onto `batches`. */
export function recordingAdapter(adapter: StorageAdapter, batches: WriteBatch[]): StorageAdapter {
  return new Proxy(adapter, {
    get(target, property) {
      if (property === 'commit') {
        return (batch: WriteBatch) => {
          batches.push(batch);
          return target.commit(batch);
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A second catalog on the fixture's store, with other options. Close it before the fixture ends. */
export async function secondCatalog(fixture: CatalogFixture, options: Partial<CatalogOptions>): Promise<Catalog> {
  const catalog = createCatalog({ ...baseOptions(sharedAdapter(fixture.adapter), fixture.clock), ...options });
  await catalog.ready();
  return catalog;
}

export interface Failure {
  code: string;
  reason?: string;
}

/** What a promise rejected with: `code` and `reason`; `{ code: 'none' }` when it resolved. */
export async function failure(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise;
    return { code: 'none' };
  } catch (error) {
    const e = error as { code?: unknown; reason?: unknown };
    const out: Failure = { code: typeof e.code === 'string' ? e.code : `not a CatalogError: ${String(error)}` };
    if (typeof e.reason === 'string') out.reason = e.reason;
    return out;
  }
}

/** Error `details` paths of a rejection. */
export async function failurePaths(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
    return [];
  } catch (error) {
    const details = (error as { details?: unknown }).details;
    return Array.isArray(details) ? details.map((d: { path?: unknown }) => String(d.path)) : [];
  }
}

/** Everything a caller could see of an error, as one string (to check that no secret is in it). */
export async function errorText(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return '';
  } catch (error) {
    const e = error as Error & Record<string, unknown>;
    const own = Object.fromEntries(Object.getOwnPropertyNames(e).map((k) => [k, e[k]]));
    return `${String(e.message)}\n${String(e.stack)}\n${JSON.stringify(own)}\n${JSON.stringify(e)}`;
  }
}
