import type { TimeseriesIndexRef } from './types';

/**
 * The index of an (entity type, timeseries aspect) pair: `<entity>_<aspect>aspect_v1`, lowercased.
 * Adapters name their storage after it (a table per index), and index sizes report it.
 */
export function timeseriesIndexName(entityType: string, aspect: string): string {
  return `${entityType}_${aspect}aspect_v1`.toLowerCase();
}

export function timeseriesIndexRef(entityType: string, aspect: string): TimeseriesIndexRef {
  return { indexName: timeseriesIndexName(entityType, aspect), entityType, aspect };
}
