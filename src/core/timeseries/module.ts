import type { WritePipeline } from '../entities/write-pipeline';
import type { DomainModule, DomainParts } from '../module';
import { timeseriesOwners } from './owner';
import { TimeseriesService } from './service';
import { TruncationRunner } from './truncation';

/** The timeseries service, and the truncations it starts (their job is this domain's). */
export interface TimeseriesDomain {
  service: TimeseriesService;
  truncations: TruncationRunner;
}

/** The timeseries domain: the owner of every timeseries aspect (a write appends a row), `catalog.timeseries`, the truncation job. */
export const timeseriesModule: DomainModule<DomainParts<{ pipeline: WritePipeline }, TimeseriesDomain>> = {
  name: 'timeseries',
  build: (ctx) => ({
    owners: timeseriesOwners(ctx.registry),
    createService: ({ pipeline }) => {
      const truncations = new TruncationRunner(ctx, pipeline.recordsEvents);
      return { service: new TimeseriesService(ctx, truncations), truncations };
    },
    jobs: ({ truncations }) => truncations.jobs(),
  }),
};
