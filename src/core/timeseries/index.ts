// The public face of the timeseries domain: what transports, the test kit and the package root use.
export { DRY_RUN_ENDING, timeseriesIndexName } from './input';
export type { TruncationMethod } from './input';
export { TimeseriesService } from './service';
export type {
  TimeseriesAppendResult,
  TimeseriesBulkAppendResult,
  TimeseriesEntry,
  TimeseriesIndexSizeRecord,
  TimeseriesQueryInput,
  TimeseriesQueryResult,
  TimeseriesRecord,
  TruncateInput,
  TruncateOptions,
  TruncateResult,
} from './service';
export type { TruncationProgressListener, TruncationState, TruncationStatus } from './truncation';
export { isFinal as isTruncationFinal } from './truncation';
export { timeseriesModule } from './module';
