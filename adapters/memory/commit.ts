import type { FaultInjectionOptions, SearchDocument, WriteBatch } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import type { ChangeStore } from './changes';
import { CommitTexts } from './commit-texts';
import type { EntityStore } from './entities';
import type { JobQueue } from './jobs';
import type { MemorySearch } from './search';
import type { TimeseriesStore } from './timeseries';
import { UndoLog } from './undo-log';

export interface CommitStores {
  entities: EntityStore;
  search: MemorySearch;
  jobs: JobQueue;
  timeseries: TimeseriesStore;
  changes: ChangeStore;
}

/**
 * Applies a batch in one synchronous step: every check first, then every change with its undo
 * step, so that any throw part-way through (the fault injector, a bug) puts everything back.
 * The search engine is told last, once nothing can roll back: it keeps no copy of the documents,
 * so it has nothing to undo with (indexing a document the domain derived does not throw).
 */
export function commitBatch(stores: CommitStores, batch: WriteBatch, faultInjector: FaultInjectionOptions['faultInjector']): void {
  checkBatch(stores, batch);
  stores.entities.startCommit();
  const log = new UndoLog();
  // The search changes in two lists (URN, document), not a pair per entity.
  const searchUrns: string[] = [];
  const searchDocuments: Array<SearchDocument | undefined> = [];
  /** The JSON texts of the aspect values written, by object: the events carry the same objects. */
  const valueTexts = batch.events?.length ? new CommitTexts() : undefined;
  try {
    // Timeseries rows of the batch, in the same step (undone with the rest when anything after them fails).
    for (const { index, rows } of batch.timeseries ?? []) stores.timeseries.appendTimeseries(index, rows, log);
    (batch.entities ?? []).forEach((write, entityIndex) => {
      const { urn } = write;
      if (write.deleteEntity) {
        const entityType = stores.entities.entityTypeOf(urn) ?? write.entityType;
        stores.entities.delete(urn, log);
        searchUrns.push(urn);
        searchDocuments.push(undefined);
        stores.timeseries.deleteUrn(entityType, urn, log);
        stores.changes.dropEntity(urn, log); // change feed: kept versions go with the entity
      } else {
        stores.entities.write(urn, write.entityType, write.expectVersion + 1, write.put ?? [], write.delete ?? [], log, valueTexts);
        if (write.searchDocument !== undefined) {
          searchUrns.push(urn);
          searchDocuments.push(write.searchDocument ?? undefined);
        }
      }
      faultInjector?.({ entityIndex, urn });
    });
    // Completions before insertions: a job that completes itself and queues its follow-up under the
    // same dedupe key (the next batch of the same work) must not see its own key as still pending.
    for (const { id } of batch.completeJobs ?? []) stores.jobs.complete(id, log);
    for (const job of batch.jobs ?? []) stores.jobs.insert(job, log, batch.now);
    // Change feed (docs/changes.md): kept versions and events, last, in the same step.
    if (batch.aspectVersions?.length) stores.changes.keepVersions(batch.aspectVersions, log);
    if (batch.events?.length) stores.changes.append(batch.events, log, valueTexts);
  } catch (error) {
    log.rollback();
    throw error;
  }
  for (let i = 0; i < searchUrns.length; i++) stores.search.documentChanged(searchUrns[i]!, searchDocuments[i]);
  stores.changes.trim();
}

/** Throws CONFLICT, before anything changed, when a version moved or a job to complete is not held. */
function checkBatch(stores: CommitStores, batch: WriteBatch): void {
  // Versions as the batch goes: a URN written twice in one batch is checked against its first write.
  const versions = new Map<string, number>();
  for (const write of batch.entities ?? []) {
    const found = versions.get(write.urn) ?? stores.entities.versionOf(write.urn);
    if (found !== write.expectVersion) {
      throw new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);
    }
    versions.set(write.urn, write.deleteEntity ? 0 : write.expectVersion + 1);
  }
  for (const { id, workerId } of batch.completeJobs ?? []) stores.jobs.checkHeld(id, workerId);
}
