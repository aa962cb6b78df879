// A whole metacatalog adapter from one part: the JSON-lines entity store. Search (a scan of the
// stored documents), the job queue, timeseries and the change feed come from `composeAdapter`, which
// keeps them as records in the same file, written by the store's commit: atomic and durable with it.
import { composeAdapter, type StorageAdapter } from 'metacatalog';
import { createJsonLinesStore, type JsonLinesStoreOptions } from './json-lines-store';

export type { JsonLinesStoreOptions } from './json-lines-store';

export function createJsonFileAdapter(options: JsonLinesStoreOptions): StorageAdapter {
  return composeAdapter({ entities: createJsonLinesStore(options) });
}
