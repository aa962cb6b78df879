import type { DomainModule, DomainParts } from '../module';
import type { EntityDeleter, ReadTransform } from './owner';
import { EntityService } from './service';
import type { WritePipeline } from './write-pipeline';

/** What the entity service is built from: the one write path, what each domain shows readers and how it deletes its entities. */
export interface EntitiesDeps {
  pipeline: WritePipeline;
  reads: readonly ReadTransform[];
  deleters: readonly EntityDeleter[];
}

/** The entities domain: generic reads and writes of any entity (`catalog.entities`), over the one write path. */
export const entitiesModule: DomainModule<DomainParts<EntitiesDeps, EntityService>> = {
  name: 'entities',
  build: (ctx) => ({
    createService: ({ pipeline, reads, deleters }) => new EntityService(ctx, pipeline, { reads, deleters }),
  }),
};
