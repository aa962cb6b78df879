import { actorUrn, type Actor } from '../access/actor';
import type {
  EntityWrite,
  JsonObject,
  NewJob,
  StorageAdapter,
  StoredAspect,
  StoredEntity,
  WriteBatch,
} from '../../adapter/types';
import type { EntityRegistry } from './registry';
import { CatalogError } from '../../errors';
import { deriveSearchDocument } from '../search/document';
import { entityTypeOf } from '../urn';

export interface AspectChange {
  value: JsonObject;
  systemMetadata?: JsonObject;
}

/** What to do to one entity. */
export interface EntityPlan {
  urn: string;
  put?: Record<string, AspectChange>;
  delete?: readonly string[];
  deleteEntity?: boolean;
}

export interface WritePlan {
  entities: EntityPlan[];
  jobs?: NewJob[];
}

export type Decide = (current: ReadonlyMap<string, StoredEntity>) => WritePlan | Promise<WritePlan>;

const MAX_ATTEMPTS = 8;

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
  ) {}

  async write(
    actor: Actor,
    urns: readonly string[],
    decide: Decide,
    options: { completeJobs?: WriteBatch['completeJobs'] } = {},
  ): Promise<Map<string, StoredEntity | undefined>> {
    for (let attempt = 1; ; attempt++) {
      const current = new Map((await this.adapter.readEntities(urns)).map((e) => [e.urn, e] as const));
      const plan = await decide(current);
      const { batch, after } = this.stamp(actorUrn(actor), urns, current, plan);
      batch.completeJobs = options.completeJobs;
      if (!batch.entities?.length && !batch.jobs?.length && !batch.completeJobs?.length) return after;
      try {
        await this.adapter.commit(batch);
      } catch (error) {
        if (error instanceof CatalogError && error.code === 'CONFLICT' && attempt < MAX_ATTEMPTS && !options.completeJobs) continue;
        throw error;
      }
      if (batch.jobs?.length) this.onJobsQueued();
      return after;
    }
  }

  private stamp(
    actor: string,
    urns: readonly string[],
    current: ReadonlyMap<string, StoredEntity>,
    plan: WritePlan,
  ): { batch: WriteBatch; after: Map<string, StoredEntity | undefined> } {
    const now = this.clock();
    const allowed = new Set(urns);
    const writes: EntityWrite[] = [];
    const after = new Map<string, StoredEntity | undefined>(current);
    for (const entityPlan of plan.entities) {
      const { urn } = entityPlan;
      if (!allowed.has(urn)) throw new Error(`internal: plan touches ${urn}, which was not read`);
      const existing = current.get(urn);
      const entityType = existing?.entityType ?? entityTypeOf(urn);
      if (entityPlan.deleteEntity) {
        if (!existing) continue;
        writes.push({ urn, entityType, expectVersion: existing.version, deleteEntity: true, searchDocument: null });
        after.set(urn, undefined);
        continue;
      }
      const aspects: Record<string, StoredAspect> = { ...(existing?.aspects ?? {}) };
      const put = Object.entries(entityPlan.put ?? {}).map(([name, change]) => {
        const previous = aspects[name];
        const stored: StoredAspect = {
          name,
          value: change.value,
          version: (previous?.version ?? 0) + 1,
          created: previous?.created ?? { time: now, actor },
          lastModified: { time: now, actor },
          ...(change.systemMetadata ? { systemMetadata: change.systemMetadata } : {}),
        };
        aspects[name] = stored;
        return stored;
      });
      const deleted = (entityPlan.delete ?? []).filter((name) => aspects[name] !== undefined);
      for (const name of deleted) delete aspects[name];
      if (!put.length && !deleted.length) continue;
      const remaining = Object.keys(aspects).length;
      if (remaining === 0) {
        // Deleting the last aspect deletes the entity: an entity is its aspects.
        if (existing) writes.push({ urn, entityType, expectVersion: existing.version, deleteEntity: true, searchDocument: null });
        after.set(urn, undefined);
        continue;
      }
      writes.push({
        urn,
        entityType,
        expectVersion: existing?.version ?? 0,
        put,
        delete: deleted,
        searchDocument:
          this.registry.entityType(entityType).searchable === false ? null : deriveSearchDocument(this.registry, urn, entityType, aspects),
      });
      after.set(urn, { urn, entityType, version: (existing?.version ?? 0) + 1, aspects });
    }
    return { batch: { entities: writes, jobs: (plan.jobs ?? []).map((job) => ({ ...job, runAt: job.runAt ?? now })) }, after };
  }
}
