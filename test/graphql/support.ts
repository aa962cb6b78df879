import { graphql, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqliteAdapter } from '../../adapters/sqlite';
import type { StorageAdapter } from '../../src/adapter/types';
import { createCatalog, type Catalog, type CatalogOptions } from '../../src';
import { createGraphQLSchema, type GraphQLOptions } from '../../src/graphql';

export const ADMIN = 'urn:li:corpuser:admin';
export const ANA = 'urn:li:corpuser:ana';
export const BOB = 'urn:li:corpuser:bob';
export const SIGNING_KEY = 'graphql-tests-signing-key-0123456789abcdef';

export type AdapterKind = 'memory' | 'sqlite';
export const ADAPTERS: readonly AdapterKind[] = ['memory', 'sqlite'];

export function createAdapter(kind: AdapterKind): StorageAdapter {
  return kind === 'memory' ? createMemoryAdapter() : createSqliteAdapter({ filename: ':memory:' });
}

/** Every call of the adapter's methods, by name: wraps a real adapter. */
export function countingAdapter(adapter: StorageAdapter): { adapter: StorageAdapter; calls: Map<string, number>; reset(): void } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(adapter, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { adapter: proxy, calls, reset: () => calls.clear() };
}

export interface Harness {
  catalog: Catalog;
  schema: GraphQLSchema;
  /** Runs a document as `actor` (no actor: an empty context). */
  run(source: string, variables?: Record<string, unknown>, actor?: string | null): Promise<ExecutionResult>;
  close(): Promise<void>;
}

export function createHarness(
  adapter: StorageAdapter,
  options: Partial<CatalogOptions> = {},
  graphqlOptions: GraphQLOptions = {},
): Harness {
  const catalog = createCatalog({
    adapter,
    tokenSigningKey: SIGNING_KEY,
    superUsers: [ADMIN],
    policies: [
      { name: 'everyone', actors: '*', privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] },
      { name: 'editors', actors: [ANA], privileges: ['EDIT_ENTITY_PROPERTIES', 'EDIT_ENTITY'] },
    ],
    jobs: { background: false },
    ...options,
  });
  const schema = createGraphQLSchema(catalog, graphqlOptions);
  return {
    catalog,
    schema,
    run: (source, variables, actor = ADMIN) =>
      graphql({ schema, source, variableValues: variables, contextValue: actor === null ? {} : { actorUrn: actor } }),
    close: () => catalog.close(),
  };
}

/** The `extensions.code` of each error, in order. */
export function codesOf(result: ExecutionResult): unknown[] {
  return (result.errors ?? []).map((e) => e.extensions.code);
}

/** The data of a result that must have no errors. */
export function dataOf<T = Record<string, unknown>>(result: ExecutionResult): T {
  if (result.errors?.length) throw new Error(`unexpected GraphQL errors: ${JSON.stringify(result.errors)}`);
  return result.data as T;
}
