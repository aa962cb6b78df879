// The public face of the transfer domain: export records, and importing them back (docs/deploy.md).
export { exportRecords } from './export';
export type { ExportDeps } from './export';
export { importRecords, MAX_IMPORT_RECORDS } from './restore';
export type { RestoreDeps } from './restore';
export { InitialLoadSession } from './initial';
export type { ImportOptions } from './initial';
export { EXPORT_EXTRAS, EXPORT_FORMAT, EXPORT_FORMAT_VERSION, exportRecordViolations, isExportRecordLike } from './records';
export type {
  ChangeRecord,
  EntityRecord,
  ExportCounts,
  ExportEndRecord,
  ExportExtra,
  ExportHeaderRecord,
  ExportOptions,
  ExportRecord,
  ExportedAspect,
  JobRecord,
  TimeseriesRowRecord,
  VersionRecord,
} from './records';
