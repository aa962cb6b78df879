// The public face of the transfer domain: export records, and importing them back (docs/deploy.md).
export { exportRecords } from './export';
export { importRecords } from './restore';
export { InitialLoadSession } from './initial';
export type { ImportOptions } from './initial';
export { EXPORT_EXTRAS, isExportRecordLike } from './records';
export type { ExportCounts, ExportEndRecord, ExportExtra, ExportOptions, ExportRecord } from './records';
