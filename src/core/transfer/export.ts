import type { StorageAdapter } from '../../adapter/types';
import { CatalogError } from '../../errors';
import {
  EXPORT_EXTRAS,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  emptyCounts,
  exportedAspect,
  type ExportExtra,
  type ExportOptions,
  type ExportRecord,
} from './records';

/** What an export reads: the adapter and the catalog clock. */
export interface ExportDeps {
  adapter: StorageAdapter;
  clock: () => number;
}

const DEFAULT_PAGE = 500;
const MAX_PAGE = 5000;

function checkExportOptions(options: ExportOptions): { extras: ExportExtra[]; pageSize: number } {
  const extras = options.with ?? [];
  if (!Array.isArray(extras) || extras.some((e) => !EXPORT_EXTRAS.includes(e))) {
    throw new CatalogError('INVALID_INPUT', `with: must list some of ${EXPORT_EXTRAS.join(', ')}`, {
      details: [{ path: '/with', message: `must list some of ${EXPORT_EXTRAS.join(', ')}` }],
    });
  }
  const pageSize = options.pageSize ?? DEFAULT_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) {
    throw new CatalogError('INVALID_INPUT', `pageSize must be an integer from 1 to ${MAX_PAGE}`, {
      details: [{ path: '/pageSize', message: `must be an integer from 1 to ${MAX_PAGE}` }],
    });
  }
  return { extras: [...new Set(extras)], pageSize };
}

/**
 * Streams the whole catalog as export records (see records.ts for the order). Reads page by page in
 * URN order with a keyset cursor, so memory stays flat and writes made meanwhile do not stop it: an
 * entity is exported as it was when its page was read. For a point-in-time copy of a serving SQLite
 * file, use the backup instead.
 */
export async function* exportRecords(deps: ExportDeps, options: ExportOptions = {}): AsyncGenerator<ExportRecord> {
  const { extras, pageSize } = checkExportOptions(options);
  const { adapter } = deps;
  if (extras.includes('history') && !adapter.readAspectVersions) {
    throw new CatalogError('UNSUPPORTED', `the ${adapter.name} adapter keeps no aspect versions to export`);
  }
  if (extras.includes('changes') && (!adapter.capabilities.changeFeed || !adapter.readChanges)) {
    throw new CatalogError('UNSUPPORTED', `the ${adapter.name} adapter keeps no change feed to export`);
  }
  const counts = emptyCounts();
  yield {
    kind: 'header',
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    exportedAt: deps.clock(),
    source: adapter.name,
    with: extras,
  };

  let afterUrn: string | undefined;
  for (;;) {
    const page = await adapter.scanEntities({ afterUrn, limit: pageSize });
    for (const entity of page) {
      const aspects: Record<string, ReturnType<typeof exportedAspect>> = {};
      for (const [name, aspect] of Object.entries(entity.aspects)) aspects[name] = exportedAspect(aspect);
      counts.entities++;
      counts.aspects += Object.keys(aspects).length;
      yield { kind: 'entity', urn: entity.urn, entityType: entity.entityType, aspects };
      if (extras.includes('history')) {
        for (const aspectName of Object.keys(entity.aspects)) {
          let beforeVersion: number | undefined;
          for (;;) {
            const versions = await adapter.readAspectVersions!({ urn: entity.urn, aspectName, beforeVersion, limit: pageSize });
            for (const version of versions) {
              counts.versions++;
              yield { kind: 'version', urn: entity.urn, entityType: entity.entityType, aspectName, aspect: exportedAspect(version) };
            }
            if (versions.length < pageSize) break;
            beforeVersion = versions[versions.length - 1]!.version;
          }
        }
      }
    }
    if (page.length < pageSize) break;
    afterUrn = page[page.length - 1]!.urn;
  }

  for (const index of await adapter.timeseriesIndexSizes()) {
    let cursor: string | undefined;
    for (;;) {
      const rows = await adapter.queryTimeseries({ ...index, limit: pageSize, cursor });
      for (const row of rows.rows) {
        counts.timeseries++;
        yield {
          kind: 'timeseries',
          entityType: index.entityType,
          aspect: index.aspect,
          urn: row.urn,
          timestampMillis: row.timestampMillis,
          value: row.value,
        };
      }
      if (!rows.nextCursor || rows.rows.length === 0) break;
      cursor = rows.nextCursor;
    }
  }

  if (extras.includes('changes')) {
    let after: string | undefined;
    for (;;) {
      const page = await adapter.readChanges!({ after, limit: Math.min(pageSize, 1000) });
      for (const { id, ...event } of page.events) {
        counts.changes++;
        yield { kind: 'change', id, ...event };
      }
      if (page.events.length === 0) break;
      after = page.events[page.events.length - 1]!.id;
    }
  }

  for (const job of await adapter.listJobs({ limit: 100_000 })) {
    if (job.state !== 'pending') continue;
    counts.jobs++;
    yield { kind: 'job', id: job.id, type: job.type, payload: job.payload, runAt: job.runAt };
  }

  yield { kind: 'end', counts };
}
