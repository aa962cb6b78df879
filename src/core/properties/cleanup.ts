import type { Job, NewJob, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { keyBelongsTo } from './definition-key';
import type { EntityPlan } from '../entities/writer';
import { CatalogError } from '../../errors';
import type { JobContext } from '../jobs/runner';
import { assignmentsOf, keysOf, loadDefinitions } from './lookup';
import { VALUES_ASPECT } from './types';
import { PROPERTY_KEYS_METADATA } from '../entities/search-document';
import { propertyValueIndexOf } from '../entities/property-values';

/**
 * The durable background removal of values that no longer count: those of a hard-deleted definition
 * and those written under a version that a breaking change superseded. One job handles one batch of
 * entities and, in the same commit, completes itself and queues its continuation, so a process that
 * dies mid-way loses nothing and repeats nothing: the next runner picks the job up where it stood.
 */

export const CLEANUP_JOB_TYPE = 'structuredProperty.removeStaleValues';
/** Entities per batch (one atomic commit each). */
export const CLEANUP_BATCH_SIZE = 500;
/** The actor stamped on writes made by background work. */
export const SYSTEM_ACTOR = 'urn:li:corpuser:__metacatalog_system';

const MAX_CONFLICT_RETRIES = 5;

/**
 * Removes, from entities after `afterUrn`, the values of `propertyUrn` written under `incarnation`
 * whose key is not the property's current key. Values of another incarnation (a property created
 * again under the same name) are never touched by this job.
 */
export function cleanupJob(propertyUrn: string, incarnation: string, afterUrn?: string): NewJob {
  return { type: CLEANUP_JOB_TYPE, payload: { propertyUrn, incarnation, ...(afterUrn !== undefined ? { afterUrn } : {}) } };
}

function readPayload(job: Job): { propertyUrn: string; incarnation: string; afterUrn?: string } {
  const { propertyUrn, incarnation, afterUrn } = job.payload;
  if (typeof propertyUrn !== 'string' || typeof incarnation !== 'string') {
    throw new Error(`job ${job.id} has a malformed payload: ${JSON.stringify(job.payload)}`);
  }
  return { propertyUrn, incarnation, ...(typeof afterUrn === 'string' ? { afterUrn } : {}) };
}

/** The entity without the stale values of the property, or undefined when it has none. */
function stripPlan(
  entity: StoredEntity | undefined,
  propertyUrn: string,
  incarnation: string,
  currentKey: string | undefined,
): EntityPlan | undefined {
  const aspect = entity?.aspects[VALUES_ASPECT];
  if (!entity || !aspect) return undefined;
  const keys = keysOf(aspect);
  const key = keys[propertyUrn];
  if (key === undefined || !keyBelongsTo(key, incarnation) || key === currentKey) return undefined;
  const kept = assignmentsOf(aspect).filter((a) => a.propertyUrn !== propertyUrn);
  const { [propertyUrn]: _removed, ...keptKeys } = keys;
  return {
    urn: entity.urn,
    put: {
      [VALUES_ASPECT]: {
        value: { ...aspect.value, properties: JSON.parse(JSON.stringify(kept)) },
        systemMetadata: { ...(aspect.systemMetadata ?? {}), [PROPERTY_KEYS_METADATA]: keptKeys },
      },
    },
  };
}

export function registerPropertyCleanup(ctx: CatalogContext): void {
  ctx.jobs.register(CLEANUP_JOB_TYPE, async (job: Job, jobContext: JobContext) => {
    const { propertyUrn, incarnation, afterUrn } = readPayload(job);
    for (let attempt = 1; ; attempt++) {
      const currentKey = (await loadDefinitions(ctx.adapter, [propertyUrn])).get(propertyUrn)?.key;
      const urns = await propertyValueIndexOf(ctx.adapter, ctx.registry).findEntitiesWithPropertyValues({
        propertyUrn,
        keepDefinitionKey: currentKey,
        afterUrn,
        limit: CLEANUP_BATCH_SIZE,
      });
      const next = urns.length === CLEANUP_BATCH_SIZE ? [cleanupJob(propertyUrn, incarnation, urns[urns.length - 1])] : [];
      try {
        await ctx.writer.write(
          SYSTEM_ACTOR,
          urns,
          (current) => ({
            entities: urns.map((urn) => stripPlan(current.get(urn), propertyUrn, incarnation, currentKey)).filter((p) => p !== undefined),
            jobs: next,
          }),
          { completeJobs: [{ id: job.id, workerId: jobContext.workerId }] },
        );
        return { done: true };
      } catch (error) {
        // A user wrote one of these entities meanwhile: read again, as long as the job is still ours.
        const conflict = error instanceof CatalogError && error.code === 'CONFLICT';
        if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw error;
        await jobContext.renewLease();
      }
    }
  });
}
