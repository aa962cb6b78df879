import type { AggregateRequest, FacetResult, SearchDocument, SearchRequest, SearchResponse } from '../../src/adapter/types';
import { CatalogError } from '../../src/core/errors';

/**
 * The memory adapter's search engine: evaluates search and aggregation requests over the search
 * documents. It reads the adapter's document map (never changes it) and is told about every change
 * of that map, including the undo of a failed commit, so it can keep indexes of its own (full text).
 */
export interface MemorySearch {
  search(request: SearchRequest): SearchResponse;
  aggregate(request: AggregateRequest): FacetResult[];
  /** Called after the document of `urn` was replaced (`document`) or removed (undefined). */
  documentChanged(urn: string, document: SearchDocument | undefined): void;
}

/** Placeholder until search and aggregation are implemented. */
export function createMemorySearch(documents: ReadonlyMap<string, SearchDocument>): MemorySearch {
  void documents;
  return {
    search() {
      throw new CatalogError('UNSUPPORTED', 'search is not implemented yet in the memory adapter');
    },
    aggregate() {
      throw new CatalogError('UNSUPPORTED', 'search is not implemented yet in the memory adapter');
    },
    documentChanged() {
      // Nothing indexed yet.
    },
  };
}
