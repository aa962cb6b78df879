import type { AspectPut, AspectVersionPut, EntityWrite, NewJob, StorageAdapter, StoredAspect, TimeseriesRow } from '../../adapter/types';
import { timeseriesIndexRef } from '../../adapter/timeseries-index';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { EntityRegistry } from '../entities/registry';
import { deriveSearchDocument } from '../entities/search-document';
import { entityTypeOf, urnProblem } from '../urn';
import {
  exportRecordViolations,
  emptyCounts,
  type EntityRecord,
  type ExportCounts,
  type ExportRecord,
  type TimeseriesRowRecord,
} from './records';
import { countEntities, InitialLoadSession, leadingEntities, loadWrite, NOT_EMPTY, type ImportOptions } from './initial';

/** What an import writes through: the adapter and the registry that derives search documents. */
export interface RestoreDeps {
  adapter: StorageAdapter;
  registry: EntityRegistry;
}

const MAX_CONFLICT_RETRIES = 8;
/** Records one import call takes: a chunk of an export file. */
const MAX_IMPORT_RECORDS = 10_000;

/**
 * Writes a chunk of export records back, as they were exported: aspect values, versions, stamps and
 * system metadata are kept (nothing is re-stamped with the time of the import), search documents are
 * derived anew, and an entity is replaced whole (aspects it has here but not in the export go). Entities,
 * kept versions, change events and jobs of the chunk are one atomic commit; the chunk's timeseries rows
 * are appended after it, leaving out rows that are stored already, so that importing a file twice leaves
 * the catalog as after one import. A bad record refuses the chunk (violations at `/<index>/...`) and
 * nothing of it is written. An import is a restore, not a user's write: it writes no change events of its
 * own (the export's events are appended when it carries them) and keeps no versions of what it replaces.
 */
export async function importRecords(
  deps: RestoreDeps,
  records: readonly unknown[],
  options: ImportOptions = {},
  session: InitialLoadSession = new InitialLoadSession(),
): Promise<ExportCounts> {
  if (!Array.isArray(records)) throw new CatalogError('INVALID_INPUT', 'records must be an array of export records');
  if (records.length > MAX_IMPORT_RECORDS) {
    throw new CatalogError('INVALID_INPUT', `at most ${MAX_IMPORT_RECORDS} records per import call, got ${records.length}`);
  }
  const violations: Violation[] = [];
  records.forEach((record, i) => {
    for (const v of exportRecordViolations(record)) violations.push({ path: `/${i}${v.path}`, message: v.message });
    if (violations.length === 0) checkKnown(deps.registry, record as ExportRecord, `/${i}`, violations);
  });
  throwIfViolations(violations, 'the export records cannot be imported');
  const typed = records as readonly ExportRecord[];
  if (options.initial) return importInitial(deps, typed, session);
  const counts = emptyCounts();
  await commitChunk(deps, typed, counts);
  await appendRows(
    deps.adapter,
    typed.filter((r): r is TimeseriesRowRecord => r.kind === 'timeseries'),
    counts,
  );
  return counts;
}

/**
 * A chunk of an initial load: the export's entities go to the adapter's initial-load part (their rows
 * only; an adapter without it commits them as an ordinary import does), the search structures are built
 * when the first record after the entities comes, and what follows takes the ordinary path; the chunk
 * holding the end record completes the load. A failure of the storage abandons the load (the adapter
 * rolls it back: the catalog is empty again), and the next call with `initial` starts it over.
 */
async function importInitial(deps: RestoreDeps, records: readonly ExportRecord[], session: InitialLoadSession): Promise<ExportCounts> {
  const { adapter, registry } = deps;
  const loader = adapter.initialLoad;
  const counts = emptyCounts();
  try {
    if (session.phase === 'none') {
      if (loader) await loader.begin();
      else if ((await adapter.scanEntities({ limit: 1 })).length > 0) throw NOT_EMPTY();
      session.phase = 'entities';
    }
    let rest = 0;
    if (session.phase === 'entities') {
      const lead = leadingEntities(records);
      rest = lead.rest;
      if (lead.entities.length) {
        if (loader) {
          await loader.loadEntities(lead.entities.map((record) => loadWrite(registry, record)));
          countEntities(counts, lead.entities);
        } else await commitChunk(deps, lead.entities, counts);
      }
      if (rest < records.length) {
        await loader?.buildSearch();
        session.phase = 'rest';
      }
    }
    const after = records.slice(rest);
    await commitChunk(deps, after, counts);
    await appendRows(
      adapter,
      after.filter((r): r is TimeseriesRowRecord => r.kind === 'timeseries'),
      counts,
    );
    if (after.some((r) => r.kind === 'end')) {
      await loader?.complete();
      session.phase = 'none';
    }
    return counts;
  } catch (error) {
    if (session.phase !== 'none') {
      session.phase = 'none';
      await loader?.abandon();
    }
    throw error;
  }
}

/** The URN and types a record names must be ones this catalog knows (its search documents are derived here). */
function checkKnown(registry: EntityRegistry, record: ExportRecord, prefix: string, violations: Violation[]): void {
  const check = (urn: string, entityType: string, urnPath: string): void => {
    const problem = urnProblem(urn);
    if (problem) violations.push({ path: `${prefix}${urnPath}`, message: problem });
    else if (entityTypeOf(urn) !== entityType)
      violations.push({ path: `${prefix}/entityType`, message: `is ${entityType}, but the URN is of type ${entityTypeOf(urn)}` });
    else if (!registry.hasEntityType(entityType))
      violations.push({ path: `${prefix}/entityType`, message: `${entityType} is not an entity type of this catalog` });
  };
  if (record.kind === 'entity' || record.kind === 'version' || record.kind === 'timeseries') check(record.urn, record.entityType, '/urn');
  if (
    record.kind === 'timeseries' &&
    !registry.timeseriesAspectsOf(record.entityType).includes(record.aspect) &&
    registry.hasEntityType(record.entityType)
  )
    violations.push({ path: `${prefix}/aspect`, message: `${record.aspect} is not a timeseries aspect of ${record.entityType}` });
}

const asStored = (name: string, aspect: EntityRecord['aspects'][string]): StoredAspect => ({ name, ...aspect });

async function commitChunk(deps: RestoreDeps, records: readonly ExportRecord[], counts: ExportCounts): Promise<void> {
  const { adapter, registry } = deps;
  // The last record of an entity in the chunk wins (an export has one per entity).
  const entities = new Map<string, EntityRecord>();
  const versions: AspectVersionPut[] = [];
  const jobs: NewJob[] = [];
  const events = [];
  for (const record of records) {
    if (record.kind === 'entity') entities.set(record.urn, record);
    else if (record.kind === 'version')
      versions.push({ urn: record.urn, entityType: record.entityType, aspect: asStored(record.aspectName, record.aspect) });
    else if (record.kind === 'job')
      jobs.push({ type: record.type, payload: record.payload, runAt: record.runAt, dedupeKey: `import:${record.id}` });
    else if (record.kind === 'change') {
      const { kind: _kind, id: _id, ...event } = record;
      events.push(event);
    }
  }
  if (entities.size === 0 && versions.length === 0 && jobs.length === 0 && events.length === 0) return;
  for (let attempt = 1; ; attempt++) {
    const current = new Map((await adapter.readEntities([...entities.keys()])).map((e) => [e.urn, e]));
    const writes: EntityWrite[] = [];
    for (const record of entities.values()) {
      const stored = current.get(record.urn);
      const put: AspectPut[] = Object.entries(record.aspects).map(([name, aspect]) => asStored(name, aspect));
      const aspects = Object.fromEntries(put.map((a) => [a.name, a as StoredAspect]));
      const write: EntityWrite = {
        urn: record.urn,
        entityType: record.entityType,
        expectVersion: stored?.version ?? 0,
        put,
        searchDocument: deriveSearchDocument(registry, record.urn, record.entityType, aspects),
      };
      const gone = stored ? Object.keys(stored.aspects).filter((name) => !(name in record.aspects)) : [];
      if (gone.length) write.delete = gone;
      writes.push(write);
    }
    try {
      await adapter.commit({ entities: writes, aspectVersions: versions, jobs, events });
      break;
    } catch (error) {
      if (!(error instanceof CatalogError && error.code === 'CONFLICT') || attempt >= MAX_CONFLICT_RETRIES) throw error;
    }
  }
  counts.entities += entities.size;
  for (const record of entities.values()) counts.aspects += Object.keys(record.aspects).length;
  counts.versions += versions.length;
  counts.jobs += jobs.length;
  counts.changes += events.length;
}

/** JSON text with object keys sorted, so that equal values compare equal whatever order a store gives their keys in. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const rowKey = (row: TimeseriesRow): string => `${row.urn}\u0000${row.timestampMillis}\u0000${sortedJson(row.value)}`;

/** Appends the rows per index, leaving out rows equal to one stored already (same URN, time and value). */
async function appendRows(adapter: StorageAdapter, rows: readonly TimeseriesRowRecord[], counts: ExportCounts): Promise<void> {
  const byIndex = new Map<string, { entityType: string; aspect: string; rows: TimeseriesRow[] }>();
  for (const r of rows) {
    const key = `${r.entityType}\u0000${r.aspect}`;
    let group = byIndex.get(key);
    if (!group) byIndex.set(key, (group = { entityType: r.entityType, aspect: r.aspect, rows: [] }));
    group.rows.push({ urn: r.urn, timestampMillis: r.timestampMillis, value: r.value });
  }
  for (const group of byIndex.values()) {
    const index = timeseriesIndexRef(group.entityType, group.aspect);
    const stored = new Set<string>();
    const existing = new Set((await adapter.timeseriesIndexSizes()).map((i) => i.indexName));
    if (existing.has(index.indexName)) {
      for (const urn of new Set(group.rows.map((r) => r.urn))) {
        const times = group.rows.filter((r) => r.urn === urn).map((r) => r.timestampMillis);
        let cursor: string | undefined;
        for (;;) {
          const page = await adapter.queryTimeseries({
            ...index,
            urn,
            startTimeMillis: Math.min(...times),
            endTimeMillis: Math.max(...times),
            limit: 1000,
            cursor,
          });
          for (const row of page.rows) stored.add(rowKey(row));
          if (!page.nextCursor || page.rows.length === 0) break;
          cursor = page.nextCursor;
        }
      }
    }
    const fresh = group.rows.filter((row) => !stored.has(rowKey(row)));
    if (fresh.length) await adapter.appendTimeseries(index, fresh);
    counts.timeseries += fresh.length;
  }
}
