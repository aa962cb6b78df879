import type { Job, NewJob } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { WriteItem, WritePipeline } from '../entities/write-pipeline';
import { CatalogError } from '../../errors';
import type { JobContext } from '../jobs/runner';
import type { DeclaredJobs } from '../module';
import { loadDefinitions } from './lookup';
import { VALUES_ASPECT } from './types';
import { propertyValueIndexOf } from '../entities/property-values';
import type { ValueEdit } from './value-input';

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
const SYSTEM_ACTOR = 'urn:li:corpuser:__metacatalog_system';

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

/** The clean-up's job, declared for createCatalog to register; it writes through the pipeline's bookkeeping. */
export function propertyCleanupJobs(ctx: CatalogContext, pipeline: WritePipeline): DeclaredJobs {
  const run = async (job: Job, jobContext: JobContext): Promise<{ done: true }> => {
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
        // The values' owner plans each entity's removal on what the unit of work reads.
        const edit: ValueEdit = { kind: 'removeStale', propertyUrn, incarnation, currentKey };
        await pipeline.bookkeep(
          SYSTEM_ACTOR,
          urns.map((urn): WriteItem => ({ op: 'edit', urn, aspect: VALUES_ASPECT, edit, path: '' })),
          {
            message: `cannot clean up the values of ${propertyUrn}`,
            jobs: next,
            completeJobs: [{ id: job.id, workerId: jobContext.workerId }],
          },
        );
        return { done: true };
      } catch (error) {
        // A user wrote one of these entities meanwhile: read again, as long as the job is still ours.
        const conflict = error instanceof CatalogError && error.code === 'CONFLICT';
        if (!conflict || attempt >= MAX_CONFLICT_RETRIES) throw error;
        await jobContext.renewLease();
      }
    }
  };
  return { [CLEANUP_JOB_TYPE]: { run } };
}
