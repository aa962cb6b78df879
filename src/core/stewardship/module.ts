import type { WritePipeline } from '../entities/write-pipeline';
import type { DomainModule, DomainParts } from '../module';
import { createValueEditing } from '../properties/value-editing';
import type { StructuredPropertyService as PropertyDefinitionsAndValues } from '../properties/service';
import type { SearchService } from '../search/service';
import { applyJobs } from './apply-job';
import { applyOwners } from './apply-owner';
import { createApplyToMatches } from './apply-service';
import type { StructuredPropertyService } from './catalog-properties';
import { createStewardship } from './service';

/** What the stewardship tools are built from: the write path, search, and the properties they change. */
export interface StewardshipDeps {
  pipeline: WritePipeline;
  search: SearchService;
  properties: PropertyDefinitionsAndValues;
}

/**
 * The stewardship domain: the owner of an apply job's record, the apply job, and `catalog.properties`
 * completed with the tools over many entities (editing values, applying to every match of a search,
 * previewing a definition change).
 */
export const stewardshipModule: DomainModule<DomainParts<StewardshipDeps, StructuredPropertyService>> = {
  name: 'stewardship',
  build: (ctx) => ({
    owners: applyOwners(),
    createService: (deps) => ({
      ...deps.properties,
      ...createValueEditing(ctx, deps.pipeline),
      ...createApplyToMatches(ctx, { ...deps, registry: ctx.registry }),
      ...createStewardship(ctx),
    }),
    jobs: (_service, deps) => applyJobs(ctx, { ...deps, registry: ctx.registry }),
  }),
};
