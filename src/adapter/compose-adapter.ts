/**
 * `composeAdapter(parts)`: a whole `StorageAdapter` from an entity store and whichever other parts the
 * store's backend serves itself.
 *
 * The commit is the entity store's, always: it is the one place where atomicity and durability come
 * from. So a part that keeps what a commit carries (jobs, change events, kept versions, and the rows a
 * deleted entity takes with it) is either served by the store's own commit (the store itself, or a part
 * named in `committedByStore`: the same backend, read by that part), or left out: the composer then
 * supplies a generic one that keeps its data as reserved records in the store (see store-records.ts)
 * and turns the batch's share into writes of those records, appended to the same commit. Search
 * documents are kept the same way (one reserved aspect on each entity) unless the store's commit keeps
 * them for its search index; any other search index reads them from there, as
 * `createScanSearchIndex` (the default) does. The property-value index is optional: left out, the
 * composed adapter does not declare it and the domain scans instead.
 *
 * The members of each part come from one list (parts.ts), checked against the part interfaces by the
 * compiler.
 */
import { CatalogError, isCatalogError } from '../errors';
import type { ChangeLog } from './change-log';
import type { EntityStore, EntityWrite, WriteBatch } from './entity-store';
import type { JobQueue } from './job-queue';
import type { InitialLoad } from './initial-load';
import { ADAPTER_PARTS, PART_NAMES, partMethods, type PartName } from './parts';
import type { PropertyValueIndex } from './property-value-index';
import { createScanSearchIndex } from './scan-search-index';
import type { SearchIndex } from './search-index';
import { createStoreChangeLog } from './store-change-log';
import { createStoreJobQueue, type RecordMutation } from './store-job-queue';
import { isReservedType, isReservedUrn, RecordWrites, recordAspect, SEARCH_DOCUMENT_ASPECT, withoutRecords } from './store-records';
import { createStoreTimeseries } from './store-timeseries';
import type { TimeseriesStore } from './timeseries-store';
import type { AdapterCapabilities, StorageAdapter } from './types';
import type { JsonObject } from './values';

/** The parts whose share of a batch a store's commit may write itself. */
export type CommittedPart = 'search' | 'jobs' | 'timeseries' | 'changes';
const COMMITTED_PARTS: readonly CommittedPart[] = ['search', 'jobs', 'timeseries', 'changes'];

export interface AdapterParts {
  /** Entities, aspects and the atomic commit. Required. */
  entities: EntityStore;
  /** Default: `createScanSearchIndex(entities)` over the documents the composer keeps in the store. */
  search?: SearchIndex;
  /** Optional: which entities carry values of a property. Left out, the domain scans the stored aspects. */
  propertyValues?: PropertyValueIndex;
  /** Served by the store's commit (it adds and completes jobs), or left out for a queue kept in the store. */
  jobs?: JobQueue;
  /** Served by the store's commit (it deletes an entity's rows), or left out for rows kept in the store. */
  timeseries?: TimeseriesStore;
  /**
   * Served by the store's commit (it appends events and keeps versions), or left out for a log kept in
   * the store. A whole adapter given here must have the change log's members.
   */
  changes?: ChangeLog | StorageAdapter;
  /**
   * The parts given beside the store whose share of a batch the store's own commit writes, because they
   * read the same backend: `search` (each write's `searchDocument`), `jobs` (`jobs`, `completeJobs`),
   * `timeseries` (`timeseries` rows, and an entity's rows on `deleteEntity`), `changes` (`events`,
   * `aspectVersions`). A part that is the store itself needs no mention. With every one of the four
   * served so, the composer keeps no records and hands every call straight to its part.
   */
  committedByStore?: readonly CommittedPart[];
  /**
   * Optional: the restore of an export into an empty store at the engine's pace (initial-load.ts),
   * handed on as the adapter's `initialLoad`. Only for a store whose commit serves every part (the
   * composer keeps no records of its own a load could leave out).
   */
  initialLoad?: InitialLoad;
}

/** How often a commit is tried again when only the composer's own records moved (another writer's commit). */
const RECORD_RETRIES = 20;

/** With a property-value index given, the adapter has it (and declares `capabilities.propertyValues`). */
export function composeAdapter(parts: AdapterParts & { propertyValues: PropertyValueIndex }): StorageAdapter & PropertyValueIndex;
export function composeAdapter(parts: AdapterParts): StorageAdapter;
export function composeAdapter(parts: AdapterParts): StorageAdapter {
  checkParts(parts);
  const store = parts.entities;
  const served = (part: CommittedPart): boolean =>
    parts[part] !== undefined && ((parts[part] as unknown) === store || (parts.committedByStore ?? []).includes(part));
  const native = { search: served('search'), jobs: served('jobs'), timeseries: served('timeseries'), changes: served('changes') };
  /** Whether the composer keeps records of its own in the store (and so filters them out of reads). */
  const keepsRecords = !(native.search && native.jobs && native.timeseries && native.changes);
  if (parts.initialLoad !== undefined && keepsRecords)
    throw new CatalogError('INVALID_INPUT', 'composeAdapter: initialLoad needs a store whose commit serves every part (committedByStore)', {
      details: [{ path: '/parts/initialLoad', message: 'needs search, jobs, timeseries and changes served by the store' }],
    });

  // Read-then-commit changes of the composer's records run one at a time in this process; another
  // process's commit in between shows up as a CONFLICT on a record, and the change is read again.
  let queue: Promise<unknown> = Promise.resolve();
  function serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }
  const mutate: RecordMutation = (change) =>
    serialized(async () => {
      for (let attempt = 0; ; attempt++) {
        const writes = new RecordWrites(Date.now());
        const result = await change(writes);
        const entities = writes.list();
        try {
          if (entities.length) await store.commit({ entities, now: writes.now });
          return result;
        } catch (error) {
          if (!isConflict(error) || attempt >= RECORD_RETRIES) throw error;
        }
      }
    });

  const jobs = native.jobs ? undefined : createStoreJobQueue(store, mutate);
  const changes = native.changes ? undefined : createStoreChangeLog(store, mutate);
  const timeseries = native.timeseries ? undefined : createStoreTimeseries(store, mutate);
  const search = parts.search ?? createScanSearchIndex(store);

  async function commit(batch: WriteBatch): Promise<void> {
    checkBatchMembers(batch);
    const domainWrites = (batch.entities ?? []).map((write) => (native.search ? write : withSearchRecord(write, batch.now ?? Date.now())));
    for (let attempt = 0; ; attempt++) {
      const writes = new RecordWrites(batch.now ?? Date.now());
      await jobs?.plan(batch, writes);
      await changes?.plan(batch, writes);
      await timeseries?.plan(batch, writes);
      const records = writes.list();
      const passed: WriteBatch = {
        entities: [...domainWrites, ...records],
        ...(batch.now !== undefined ? { now: batch.now } : {}),
        ...(native.jobs ? { jobs: batch.jobs, completeJobs: batch.completeJobs } : {}),
        ...(native.changes ? { events: batch.events, aspectVersions: batch.aspectVersions } : {}),
        ...(native.timeseries && batch.timeseries ? { timeseries: batch.timeseries } : {}),
      };
      try {
        await store.commit(passed);
        changes?.committed(batch);
        return;
      } catch (error) {
        // A CONFLICT is the domain's to handle unless only the composer's records moved.
        if (!isConflict(error) || !records.length || attempt >= RECORD_RETRIES || !(await versionsHold(store, domainWrites))) throw error;
      }
    }
  }

  const declared = store.capabilities as Partial<AdapterCapabilities>;
  const capabilities: AdapterCapabilities = Object.freeze({
    durable: store.capabilities.durable,
    changeToken: store.capabilities.changeToken,
    changeFeed: native.changes ? declared.changeFeed === true : true,
    // Rows kept in the store go into its commit as records; a store with its own rows must say it can.
    timeseriesInCommit: native.timeseries ? declared.timeseriesInCommit === true : true,
    ...(parts.propertyValues ? { propertyValues: true } : {}),
  });
  const changeLog: Partial<ChangeLog> = changes ?? (parts.changes as Partial<ChangeLog>);

  const entityMembers = keepsRecords
    ? {
        open: () => store.open(),
        close: () => store.close(),
        async readEntities(urns: readonly string[], aspectNames?: readonly string[]) {
          const entities = await store.readEntities(
            urns.filter((urn) => !isReservedUrn(urn)),
            aspectNames,
          );
          return entities.map(withoutRecords);
        },
        async scanEntities(request: Parameters<EntityStore['scanEntities']>[0]) {
          if (request.entityType !== undefined && isReservedType(request.entityType)) return [];
          const out = [];
          let afterUrn = request.afterUrn;
          // Reserved records are left out; page on until the limit is filled or the store has no more.
          while (out.length < request.limit) {
            const wanted = request.limit - out.length;
            const page = await store.scanEntities({ ...request, afterUrn, limit: wanted });
            for (const entity of page) if (!isReservedType(entity.entityType)) out.push(withoutRecords(entity));
            if (page.length < wanted) break;
            afterUrn = page.at(-1)!.urn;
          }
          return out;
        },
        commit: (batch: WriteBatch) => serialized(() => commit(batch)),
        ...(store.capabilities.changeToken && store.changeToken ? { changeToken: () => store.changeToken!() } : {}),
      }
    : // Every part is served by the store's commit: nothing of the composer's own stands between.
      storeMembers(store);

  return {
    name: store.name,
    capabilities,
    ...entityMembers,
    ...(parts.search ? bound(parts.search, 'search') : { search: search.search.bind(search), aggregate: search.aggregate.bind(search) }),
    ...(parts.propertyValues ? bound(parts.propertyValues, 'propertyValues') : {}),
    ...bound(jobs ?? parts.jobs!, 'jobs'),
    ...bound(timeseries ?? parts.timeseries!, 'timeseries'),
    ...(capabilities.changeFeed ? bound(changeLog as ChangeLog, 'changes') : {}),
    ...(parts.initialLoad ? { initialLoad: parts.initialLoad } : {}),
  } as StorageAdapter;
}

/** The members of `WriteBatch` the composer knows how to hand on or keep as records. */
const BATCH_MEMBERS = new Set(['entities', 'jobs', 'completeJobs', 'now', 'events', 'aspectVersions', 'timeseries']);

/** A batch member added to the contract later must be handled here before any of it is written, not dropped. */
function checkBatchMembers(batch: WriteBatch): void {
  for (const [key, value] of Object.entries(batch)) {
    if (value !== undefined && !BATCH_MEMBERS.has(key)) throw new Error(`composeAdapter: WriteBatch.${key} is not handled by the composer`);
  }
}

/** The domain's write with its search document turned into the reserved aspect. */
function withSearchRecord(write: EntityWrite, now: number): EntityWrite {
  const { searchDocument, ...rest } = write;
  if (searchDocument === undefined || write.deleteEntity) return rest;
  if (searchDocument === null) return { ...rest, delete: [...(rest.delete ?? []), SEARCH_DOCUMENT_ASPECT] };
  return { ...rest, put: [...(rest.put ?? []), recordAspect(SEARCH_DOCUMENT_ASPECT, searchDocument as unknown as JsonObject, now)] };
}

/** True when every domain entity of the batch is still at the version the batch expects. */
async function versionsHold(store: EntityStore, writes: readonly EntityWrite[]): Promise<boolean> {
  const first = new Map<string, number>();
  for (const write of writes) if (!first.has(write.urn)) first.set(write.urn, write.expectVersion);
  const found = new Map((await store.readEntities([...first.keys()], [])).map((e) => [e.urn, e.version]));
  return [...first].every(([urn, expected]) => (found.get(urn) ?? 0) === expected);
}

function isConflict(error: unknown): boolean {
  return isCatalogError(error) && error.code === 'CONFLICT';
}

/** The entity store's own members, bound to it; its change token only when it declares one. */
function storeMembers(store: EntityStore): Record<string, unknown> {
  const { changeToken, ...members } = bound(store, 'entities');
  return store.capabilities.changeToken ? { ...members, changeToken } : members;
}

/** The methods a part lists (parts.ts) that it has, bound to it (a part may be a class instance). */
function bound(part: object, name: PartName): Record<string, unknown> {
  const target = part as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const method of partMethods(name)) {
    const member = target[method];
    if (typeof member === 'function') out[method] = (member as (...args: unknown[]) => unknown).bind(part);
  }
  return out;
}

/** Refuses parts that are missing or not what they say, naming the part and the member. */
function checkParts(parts: AdapterParts): void {
  const refuse = (path: string, message: string): never => {
    throw new CatalogError('INVALID_INPUT', `composeAdapter: ${path.slice(1).replace(/\//g, '.')} ${message}`, {
      details: [{ path, message }],
    });
  };
  if (parts === null || typeof parts !== 'object')
    refuse('/parts', `must be an object of parts ({ ${PART_NAMES.join(', ')}, committedByStore? })`);
  const known = new Set<string>([...PART_NAMES, 'committedByStore', 'initialLoad']);
  for (const key of Object.keys(parts)) if (!known.has(key)) refuse(`/${key}`, `is not a part (the parts are ${PART_NAMES.join(', ')})`);
  const store = parts.entities as unknown;
  if (store === undefined || store === null) refuse('/entities', 'is required: the entity store with the commit');
  for (const part of PART_NAMES) {
    const value = parts[part] as unknown;
    if (value === undefined) continue;
    if (value === null || typeof value !== 'object') refuse(`/${part}`, 'must be an object');
    const members = value as Record<string, unknown>;
    for (const name of ADAPTER_PARTS[part].required)
      if (typeof members[name] !== 'function') refuse(`/${part}/${name}`, 'must be a function');
    for (const name of ADAPTER_PARTS[part].optional) {
      if (members[name] !== undefined && typeof members[name] !== 'function') refuse(`/${part}/${name}`, 'must be a function when given');
    }
  }
  const committed: readonly CommittedPart[] | undefined = parts.committedByStore;
  if (committed !== undefined && !Array.isArray(committed)) refuse('/committedByStore', `must be a list of ${COMMITTED_PARTS.join(', ')}`);
  (committed ?? []).forEach((part: CommittedPart, i: number) => {
    if (!COMMITTED_PARTS.includes(part)) refuse(`/committedByStore/${i}`, `must be one of ${COMMITTED_PARTS.join(', ')}`);
    if (parts[part] === undefined) refuse(`/committedByStore/${i}`, `names ${part}, which is not given`);
  });
  const entities = parts.entities;
  if (typeof entities.name !== 'string' || !entities.name) refuse('/entities/name', 'must be a non-empty string');
  const capabilities = entities.capabilities as unknown as Record<string, unknown> | undefined;
  if (!capabilities || typeof capabilities !== 'object') refuse('/entities/capabilities', 'must be an object ({ durable, changeToken })');
  for (const flag of ['durable', 'changeToken']) {
    if (typeof capabilities![flag] !== 'boolean') refuse(`/entities/capabilities/${flag}`, 'must be a boolean');
  }
  if (entities.capabilities.changeToken && typeof entities.changeToken !== 'function') {
    refuse('/entities/changeToken', 'must be a function when capabilities.changeToken is true');
  }
  for (const part of ['jobs', 'timeseries', 'changes'] as const) {
    if (parts[part] !== undefined && (parts[part] as unknown) !== entities && !(committed ?? []).includes(part)) {
      refuse(
        `/${part}`,
        "must be served by the entity store's commit (the store itself, or named in committedByStore) or left out (the composer keeps it in the store)",
      );
    }
  }
}
