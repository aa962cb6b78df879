import type { AuditStamp, JsonObject, NewChangeEvent, StoredAspect } from '../../adapter/types';
import type { Violation } from '../../errors';

/**
 * The records of an export: one JSON object per line of `metacatalog export`, in this order: a
 * header, the entities (URN order, every aspect as stored), the timeseries rows, then (when asked) the
 * kept aspect versions and the change events, the pending background jobs, and an end record that counts
 * them. The end record is how an import tells a whole file from a truncated one.
 */
export const EXPORT_FORMAT = 'metacatalog-export';
export const EXPORT_FORMAT_VERSION = 1;

/** What an export may carry beyond the current state. */
export type ExportExtra = 'history' | 'changes';
export const EXPORT_EXTRAS: readonly ExportExtra[] = ['history', 'changes'];

export interface ExportOptions {
  /** `history`: kept earlier aspect versions; `changes`: the change feed's kept events. */
  with?: readonly ExportExtra[];
  /** Entities (and rows) read per adapter call; default 500. */
  pageSize?: number;
}

interface ExportHeaderRecord {
  kind: 'header';
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  /** Catalog clock when the export started (epoch ms). */
  exportedAt: number;
  /** The adapter it came from (`sqlite`, `postgres`, `memory`, ...). */
  source: string;
  with: ExportExtra[];
}

/** An entity with every aspect as stored: value, version, stamps and system metadata. */
export interface EntityRecord {
  kind: 'entity';
  urn: string;
  entityType: string;
  aspects: Record<string, ExportedAspect>;
}

export interface ExportedAspect {
  value: JsonObject;
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
  systemMetadata?: JsonObject;
}

export interface TimeseriesRowRecord {
  kind: 'timeseries';
  entityType: string;
  aspect: string;
  urn: string;
  timestampMillis: number;
  value: JsonObject;
}

/** A kept earlier version of an aspect (with `history`). */
interface VersionRecord {
  kind: 'version';
  urn: string;
  entityType: string;
  aspectName: string;
  aspect: ExportedAspect;
}

/** A change event (with `changes`); the id is the source's, the import appends it with an id of its own. */
interface ChangeRecord extends NewChangeEvent {
  kind: 'change';
  id: string;
}

/** A background job that was pending (e.g. the clean-up of a hard-deleted property's values). */
interface JobRecord {
  kind: 'job';
  id: string;
  type: string;
  payload: JsonObject;
  runAt: number;
}

export interface ExportEndRecord {
  kind: 'end';
  counts: ExportCounts;
}

export interface ExportCounts {
  entities: number;
  aspects: number;
  timeseries: number;
  versions: number;
  changes: number;
  jobs: number;
}

export type ExportRecord =
  ExportHeaderRecord | EntityRecord | TimeseriesRowRecord | VersionRecord | ChangeRecord | JobRecord | ExportEndRecord;

export const emptyCounts = (): ExportCounts => ({ entities: 0, aspects: 0, timeseries: 0, versions: 0, changes: 0, jobs: 0 });

export function exportedAspect(aspect: StoredAspect): ExportedAspect {
  const out: ExportedAspect = { value: aspect.value, version: aspect.version, created: aspect.created, lastModified: aspect.lastModified };
  if (aspect.systemMetadata !== undefined) out.systemMetadata = aspect.systemMetadata;
  return out;
}

/** Whether a parsed line is an export record (it has a `kind` an export writes) rather than an entity or proposal line. */
export function isExportRecordLike(value: unknown): boolean {
  return isObject(value) && typeof value.kind === 'string' && KINDS.has(value.kind);
}

const KINDS = new Set(['header', 'entity', 'timeseries', 'version', 'change', 'job', 'end']);

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);
const isStamp = (value: unknown): boolean => isObject(value) && Number.isFinite(value.time) && typeof value.actor === 'string';
const isCount = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 0;

function aspectViolations(value: unknown, path: string, out: Violation[]): void {
  if (!isObject(value)) {
    out.push({ path, message: 'must be an object { value, version, created, lastModified, systemMetadata? }' });
    return;
  }
  if (!isObject(value.value)) out.push({ path: `${path}/value`, message: 'must be an object' });
  if (!Number.isInteger(value.version) || (value.version as number) < 1)
    out.push({ path: `${path}/version`, message: 'must be an integer >= 1' });
  for (const stamp of ['created', 'lastModified'] as const) {
    if (!isStamp(value[stamp])) out.push({ path: `${path}/${stamp}`, message: 'must be { time, actor }' });
  }
  if (value.systemMetadata !== undefined && !isObject(value.systemMetadata))
    out.push({ path: `${path}/systemMetadata`, message: 'must be an object' });
}

function requireStrings(value: Record<string, unknown>, names: readonly string[], out: Violation[]): void {
  for (const name of names)
    if (typeof value[name] !== 'string' || value[name] === '') out.push({ path: `/${name}`, message: 'must be a non-empty string' });
}

/** What is wrong with one record of an export (paths relative to the line); empty when it can be imported. */
export function exportRecordViolations(value: unknown): Violation[] {
  const out: Violation[] = [];
  if (!isObject(value) || typeof value.kind !== 'string' || !KINDS.has(value.kind)) {
    return [{ path: '/kind', message: `must be one of ${[...KINDS].join(', ')}` }];
  }
  switch (value.kind) {
    case 'header':
      if (value.format !== EXPORT_FORMAT) out.push({ path: '/format', message: `must be "${EXPORT_FORMAT}"` });
      if (value.formatVersion !== EXPORT_FORMAT_VERSION)
        out.push({ path: '/formatVersion', message: `this catalog reads format version ${EXPORT_FORMAT_VERSION}` });
      break;
    case 'entity':
      requireStrings(value, ['urn', 'entityType'], out);
      if (!isObject(value.aspects)) out.push({ path: '/aspects', message: 'must be an object of aspects by name' });
      else for (const [name, aspect] of Object.entries(value.aspects)) aspectViolations(aspect, `/aspects/${name}`, out);
      break;
    case 'timeseries':
      requireStrings(value, ['entityType', 'aspect', 'urn'], out);
      if (!Number.isFinite(value.timestampMillis)) out.push({ path: '/timestampMillis', message: 'must be a number (epoch ms)' });
      if (!isObject(value.value)) out.push({ path: '/value', message: 'must be an object' });
      break;
    case 'version':
      requireStrings(value, ['urn', 'entityType', 'aspectName'], out);
      aspectViolations(value.aspect, '/aspect', out);
      break;
    case 'change':
      requireStrings(value, ['id', 'entityUrn', 'entityType', 'aspectName'], out);
      if (!['UPSERT', 'DELETE', 'TRUNCATE'].includes(value.changeType as string))
        out.push({ path: '/changeType', message: 'must be UPSERT, DELETE or TRUNCATE' });
      for (const name of ['aspect', 'previousAspectValue'] as const) {
        if (value[name] !== null && !isObject(value[name])) out.push({ path: `/${name}`, message: 'must be an object or null' });
      }
      if (!isStamp(value.created)) out.push({ path: '/created', message: 'must be { time, actor }' });
      break;
    case 'job':
      requireStrings(value, ['id', 'type'], out);
      if (!isObject(value.payload)) out.push({ path: '/payload', message: 'must be an object' });
      if (!Number.isFinite(value.runAt)) out.push({ path: '/runAt', message: 'must be a number (epoch ms)' });
      break;
    case 'end': {
      const counts = value.counts;
      if (!isObject(counts)) out.push({ path: '/counts', message: 'must be an object' });
      else
        for (const key of Object.keys(emptyCounts()))
          if (!isCount(counts[key])) out.push({ path: `/counts/${key}`, message: 'must be a count' });
      break;
    }
  }
  return out;
}
