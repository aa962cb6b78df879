import type { WritePipeline } from '../entities/write-pipeline';
import { HOUSEKEEPING_ACTOR } from '../jobs/periodic';
import type { DomainModule, DomainParts } from '../module';
import { ChangeRetention, type ChangeRetentionOptions } from './retention';
import { createChangeFeed, type ChangeFeed } from './service';

/** The change feed, and the retention of events and kept versions (its job is this domain's). */
export interface ChangesDomain {
  feed: ChangeFeed;
  retention: ChangeRetention;
}

/** The changes domain: `catalog.changes` and the retention job. */
export const changesModule: DomainModule<DomainParts<{ pipeline: WritePipeline; retention: ChangeRetentionOptions }, ChangesDomain>> = {
  name: 'changes',
  build: (ctx) => ({
    createService: ({ pipeline, retention }) => ({
      feed: createChangeFeed(ctx),
      retention: new ChangeRetention(
        ctx,
        (job) => pipeline.bookkeep(HOUSEKEEPING_ACTOR, [], { message: 'cannot queue change retention', jobs: [job] }),
        retention,
      ),
    }),
    jobs: ({ retention }) => retention.jobs(),
  }),
};
