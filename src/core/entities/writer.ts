import { isDeepStrictEqual } from 'node:util';
import { actorUrn, type Actor } from '../access/actor';
import type {
  AspectVersionPut,
  AuditStamp,
  EntityWrite,
  NewChangeEvent,
  JsonObject,
  StorageAdapter,
  StoredAspect,
  StoredEntity,
  WriteBatch,
} from '../../adapter/types';
import type { EntityRegistry } from './registry';
import { CatalogError } from '../../errors';
import { deriveSearchDocument } from './search-document';
import { entityTypeOf } from '../urn';
import { clientSystemMetadataOf } from './system-metadata';
import type { AspectChange, Decide, WritePlan } from './write-plan';

/** What the unit of work records besides the change itself (docs/changes.md). */
export interface ChangeRecording {
  /** One change event per changed aspect, in the commit batch (default true). */
  events: boolean;
  /** Keep the replaced/deleted aspect values as earlier versions (default true). */
  versions: boolean;
}

/**
 * An event carries the writer's system metadata only: the catalog's bookkeeping (property value keys,
 * definition incarnations, value stamps, a token's salted hash) is never read from an event, derivable
 * from the aspect, and would be a copy stored with every event; secrets are part of it.
 */
const eventMetadata = (systemMetadata: JsonObject | undefined): JsonObject | undefined => clientSystemMetadataOf(systemMetadata);

const MAX_ATTEMPTS = 8;
const NO_CHANGES: Readonly<Record<string, AspectChange>> = Object.freeze({});

/**
 * The unit of work behind every entity write: read the entities, let the caller decide the changes
 * in memory, stamp them, derive the search documents, and hand the adapter one atomic batch with the
 * versions that were read. When another writer got there first (CONFLICT) it starts over from the
 * read, a bounded number of times.
 */
export class EntityWriter {
  constructor(
    private readonly adapter: StorageAdapter,
    private readonly registry: EntityRegistry,
    private readonly clock: () => number,
    private readonly onJobsQueued: () => void,
    private readonly recording: ChangeRecording = { events: true, versions: true },
  ) {}

  /** Whether commits carry change events (the `changes.enabled` option). */
  get recordsEvents(): boolean {
    return this.recording.events;
  }

  async write(
    actor: Actor,
    urns: readonly string[],
    decide: Decide,
    options: { completeJobs?: WriteBatch['completeJobs']; dryRun?: boolean } = {},
  ): Promise<Map<string, StoredEntity | undefined>> {
    for (let attempt = 1; ; attempt++) {
      const current = new Map((await this.adapter.readEntities(urns)).map((e) => [e.urn, e] as const));
      const now = this.clock();
      const plan = await decide(current, now);
      const { batch, after } = this.stamp(actorUrn(actor), urns, current, plan, now);
      // A dry run is planned and checked exactly as a write is, and stops before the commit.
      if (options.dryRun) return after;
      batch.completeJobs = options.completeJobs;
      const rows = (plan.timeseries ?? []).filter((t) => t.rows.length > 0);
      const rowsInCommit = rows.length > 0 && this.adapter.capabilities.timeseriesInCommit === true;
      if (rowsInCommit) batch.timeseries = rows;
      if (!batch.entities?.length && !batch.jobs?.length && !batch.completeJobs?.length && !rowsInCommit) {
        for (const { index, rows: appended } of rows) await this.adapter.appendTimeseries(index, appended);
        return after;
      }
      try {
        await this.adapter.commit(batch);
      } catch (error) {
        if (error instanceof CatalogError && error.code === 'CONFLICT' && attempt < MAX_ATTEMPTS && !options.completeJobs) continue;
        throw error;
      }
      // An adapter that cannot append rows in its commit gets them right after it (checked already, they rarely fail).
      if (!rowsInCommit) for (const { index, rows: appended } of rows) await this.adapter.appendTimeseries(index, appended);
      if (batch.jobs?.length) this.onJobsQueued();
      return after;
    }
  }

  private stamp(
    actor: string,
    urns: readonly string[],
    current: ReadonlyMap<string, StoredEntity>,
    plan: WritePlan,
    now: number,
  ): { batch: WriteBatch; after: Map<string, StoredEntity | undefined> } {
    const { events: recordEvents, versions: recordVersions } = this.recording;
    const events: NewChangeEvent[] = [];
    let aspectVersions: AspectVersionPut[] = [];
    /** The URNs read, as a set once the plan leaves their order (plans usually follow it: no set is made). */
    let allowed: Set<string> | undefined;
    let next = 0;
    const wasRead = (urn: string): boolean => {
      if (!allowed) {
        while (next < urns.length) if (urns[next++] === urn) return true;
        allowed = new Set(urns);
      }
      return allowed.has(urn);
    };
    const writes: EntityWrite[] = [];
    const after = new Map<string, StoredEntity | undefined>(current);
    /**
     * One audit stamp serves every aspect and event of the commit: the adapters store their own copies,
     * and nothing changes a stamp in place.
     */
    let stamp: AuditStamp | undefined;
    /** Whether the entity type last looked up has search documents. */
    let searchableOf: string | undefined;
    let searchable: boolean | undefined;
    for (const entityPlan of plan.entities) {
      const { urn } = entityPlan;
      if (!wasRead(urn)) throw new Error(`internal: plan touches ${urn}, which was not read`);
      const existing = current.get(urn);
      const entityType = existing?.entityType ?? entityPlan.entityType ?? entityTypeOf(urn);
      if (entityPlan.deleteEntity) {
        if (!existing) continue;
        if (recordEvents) pushDeletions(events, existing, Object.keys(existing.aspects), actor, now);
        writes.push({ urn, entityType, expectVersion: existing.version, deleteEntity: true, searchDocument: null });
        after.set(urn, undefined);
        continue;
      }
      const aspects: Record<string, StoredAspect> = existing ? { ...existing.aspects } : {};
      const changes = entityPlan.put ?? NO_CHANGES;
      let count = 0;
      for (const name in changes) if (Object.hasOwn(changes, name)) count++;
      const put = new Array<StoredAspect>(count);
      let written = 0;
      for (const name in changes) {
        if (!Object.hasOwn(changes, name)) continue;
        const change = changes[name]!;
        const previous = aspects[name];
        if (previous && isDeepStrictEqual(previous.value, change.value)) {
          // Unchanged: no new version, no event, no kept version (re-ingesting a file leaves the history as
          // it was). The writer's system metadata (lastObserved, runId, ...) is still kept when it changed.
          if (!change.systemMetadata || isDeepStrictEqual(previous.systemMetadata, change.systemMetadata)) continue;
          const refreshed: StoredAspect = { ...previous, systemMetadata: change.systemMetadata };
          aspects[name] = refreshed;
          put[written++] = refreshed;
          continue;
        }
        stamp ??= { time: now, actor };
        const stored: StoredAspect = {
          name,
          value: change.value,
          version: (previous?.version ?? 0) + 1,
          created: previous?.created ?? stamp,
          lastModified: stamp,
        };
        if (change.systemMetadata) stored.systemMetadata = change.systemMetadata;
        aspects[name] = stored;
        if (recordEvents) {
          const systemMetadata = eventMetadata(change.systemMetadata);
          const event: NewChangeEvent = {
            entityUrn: urn,
            entityType,
            aspectName: name,
            changeType: 'UPSERT',
            aspect: change.value,
            previousAspectValue: previous?.value ?? null,
            created: stamp,
          };
          if (systemMetadata) event.systemMetadata = systemMetadata;
          events.push(event);
        }
        if (recordVersions && previous) aspectVersions.push({ urn, entityType, aspect: previous });
        put[written++] = stored;
      }
      if (written < count) put.length = written;
      const deleted = entityPlan.delete?.length ? entityPlan.delete.filter((name) => aspects[name] !== undefined) : [];
      if (existing && deleted.length) {
        if (recordEvents) pushDeletions(events, existing, deleted, actor, now);
        if (recordVersions)
          for (const name of deleted) if (existing.aspects[name]) aspectVersions.push({ urn, entityType, aspect: existing.aspects[name] });
      }
      for (const name of deleted) delete aspects[name];
      if (!put.length && !deleted.length) continue;
      let remaining = false;
      for (const name in aspects)
        if (Object.hasOwn(aspects, name)) {
          remaining = true;
          break;
        }
      if (!remaining) {
        // Deleting the last aspect deletes the entity: an entity is its aspects (and its kept versions go too).
        aspectVersions = aspectVersions.filter((v) => v.urn !== urn);
        if (existing) writes.push({ urn, entityType, expectVersion: existing.version, deleteEntity: true, searchDocument: null });
        after.set(urn, undefined);
        continue;
      }
      if (entityType !== searchableOf) {
        searchableOf = entityType;
        searchable = this.registry.entityType(entityType).searchable;
      }
      writes.push({
        urn,
        entityType,
        expectVersion: existing?.version ?? 0,
        put,
        delete: deleted,
        searchDocument: searchable === false ? null : deriveSearchDocument(this.registry, urn, entityType, aspects),
      });
      after.set(urn, { urn, entityType, version: (existing?.version ?? 0) + 1, aspects });
    }
    const batch: WriteBatch = { entities: writes, jobs: (plan.jobs ?? []).map((job) => ({ ...job, runAt: job.runAt ?? now })) };
    if (events.length) batch.events = events;
    if (aspectVersions.length) batch.aspectVersions = aspectVersions;
    return { batch, after };
  }
}

/** DELETE events for aspects of an existing entity (an aspect delete, or every aspect of a deleted entity). */
function pushDeletions(events: NewChangeEvent[], existing: StoredEntity, names: readonly string[], actor: string, now: number): void {
  for (const name of names) {
    const previous = existing.aspects[name];
    if (!previous) continue;
    events.push({
      entityUrn: existing.urn,
      entityType: existing.entityType,
      aspectName: name,
      changeType: 'DELETE',
      aspect: null,
      previousAspectValue: previous.value,
      created: { time: now, actor },
    });
  }
}
