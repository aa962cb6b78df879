// Stubs for test/types/conformance-harness.ts (checked by `tsc --noEmit`, never run): the adapter a
// reader of docs/adapters.md is writing.
import type { FaultInjectionOptions, StorageAdapter } from 'metacatalog';

export declare function createMyAdapter(options: FaultInjectionOptions & { filename: string }): StorageAdapter;
/** A new, empty file for one test. */
export declare function freshFile(): string;
/** The file an adapter was created over. */
export declare function fileOf(adapter: StorageAdapter): string;
/** Rows of a table, read from the file itself. */
export declare function countRows(adapter: StorageAdapter, table: 'aspects' | 'jobs'): Promise<number>;
