import type { EntityWrite, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError } from '../../errors';
import { scanPages } from '../../adapter/scan-pages';
import type { ReindexOptions, ReindexProgress } from '../properties/types';
import { deriveSearchDocument } from '../entities/search-document';

const MAX_CONFLICT_RETRIES = 8;

const COUNT_PAGE = 5000;

async function countEntities(ctx: CatalogContext): Promise<number> {
  let total = 0;
  for await (const page of scanPages(ctx.adapter, { aspectNames: [] }, COUNT_PAGE)) total += page.length;
  return total;
}

/**
 * Rebuilds every entity's search document from its stored aspects (the "system update" of the
 * operations guide), in URN order and atomic batches, reporting progress after each batch. Entities
 * written meanwhile are read again (their batch retried); an entity type the registry no longer knows
 * is skipped and counted.
 */
export async function reindexSearchDocuments(ctx: CatalogContext, options: ReindexOptions = {}): Promise<ReindexProgress> {
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5000) {
    throw new CatalogError('INVALID_INPUT', `batchSize must be an integer from 1 to 5000, got ${String(batchSize)}`, {
      details: [{ path: '/batchSize', message: 'must be an integer from 1 to 5000' }],
    });
  }
  const progress: ReindexProgress = { processed: 0, skipped: 0, lastUrn: undefined, done: false };
  if (options.countTotal) progress.total = await countEntities(ctx);
  for (;;) {
    const page = await ctx.adapter.scanEntities({ afterUrn: progress.lastUrn, limit: batchSize });
    if (page.length === 0) break;
    let entities: StoredEntity[] = page;
    for (let attempt = 1; ; attempt++) {
      const writes: EntityWrite[] = [];
      let skipped = 0;
      for (const entity of entities) {
        if (!ctx.registry.hasEntityType(entity.entityType)) {
          skipped++;
          continue;
        }
        const searchDocument = deriveSearchDocument(ctx.registry, entity.urn, entity.entityType, entity.aspects);
        writes.push({ urn: entity.urn, entityType: entity.entityType, expectVersion: entity.version, searchDocument });
      }
      try {
        if (writes.length) await ctx.adapter.commit({ entities: writes });
        progress.processed += writes.length;
        progress.skipped += skipped;
        break;
      } catch (error) {
        if (!(error instanceof CatalogError && error.code === 'CONFLICT') || attempt >= MAX_CONFLICT_RETRIES) throw error;
        entities = await ctx.adapter.readEntities(page.map((e) => e.urn));
      }
    }
    progress.lastUrn = page[page.length - 1]!.urn;
    options.onProgress?.({ ...progress });
    if (page.length < batchSize) break;
  }
  progress.done = true;
  options.onProgress?.({ ...progress });
  return progress;
}
