import { randomUUID } from 'node:crypto';
import type { EntityWrite, Job, JsonObject, NewChangeEvent, StorageAdapter, TimeseriesIndexRef } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { JobContext } from '../jobs/runner';
import type { DeclaredJobs } from '../module';
import type { TruncationMethod } from './input';

/** Where a truncation is: waiting for a worker, working, or finished one of three ways. */
export type TruncationState = 'queued' | 'running' | 'completed' | 'timedOut' | 'failed';

/** The durable record of one real truncation, updated after every batch. */
export interface TruncationStatus {
  /** Identifies the truncation (the `Task id` of the answer); also in the payload of its background jobs. */
  taskId: string;
  entityType: string;
  aspect: string;
  indexName: string;
  endTimeMillis: number;
  method: TruncationMethod;
  batchSize: number;
  /** null: no limit. Counted from `startedAt`. */
  timeoutSeconds: number | null;
  state: TruncationState;
  /** Rows in the index, and rows at or before `endTimeMillis`, when the truncation was asked for. */
  totalRows: number;
  rowsToDelete: number;
  /** Rows removed so far. */
  rowsDeleted: number;
  /** Units of work done: delete batches, or 1 for the reindex. */
  batches: number;
  /** Size of the index (bytes / 1,000,000) when asked for and when finished. */
  sizeMbBefore: number;
  sizeMbAfter: number | null;
  requestedBy: string;
  requestedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** The answer the request got (`Delete N out of M rows (P%). ...`). */
  summary: string;
  /** Why it failed (state `failed`), from the last attempt of its background job. */
  error: string | null;
}

/** Called in the process that runs the truncation, after each recorded step (start, every batch, end). */
export type TruncationProgressListener = (status: TruncationStatus) => void | Promise<void>;

const TRUNCATION_JOB = 'timeseries.truncate';
const STATUS_ENTITY = 'timeseriesTruncation';
const STATUS_ASPECT = 'timeseriesTruncationStatus';
const FINAL_STATES: readonly TruncationState[] = ['completed', 'timedOut', 'failed'];

function statusUrn(taskId: string): string {
  return `urn:li:${STATUS_ENTITY}:${taskId}`;
}

export function isFinal(state: TruncationState): boolean {
  return FINAL_STATES.includes(state);
}

async function indexSizeMb(adapter: StorageAdapter, indexName: string): Promise<number> {
  const size = (await adapter.timeseriesIndexSizes()).find((s) => s.indexName === indexName);
  return (size?.bytes ?? 0) / 1_000_000;
}

/**
 * Truncations as durable background work. The status is an internal entity
 * (`urn:li:timeseriesTruncation:<taskId>`, kept without a search document) written with the same
 * optimistic version check as every entity. Each job runs one unit of work (one delete batch, or the
 * whole reindex), records it, and queues the next unit in the same atomic commit that completes it,
 * so other background work interleaves and a process that dies loses at most the unit in progress:
 * its lease expires, another worker claims the job again, and since a unit is "delete the oldest
 * rows at or before the end time" (or "keep only the rows after it"), doing it again is harmless.
 */
export class TruncationRunner {
  private readonly listeners = new Map<string, TruncationProgressListener>();

  constructor(
    private readonly ctx: CatalogContext,
    /** Whether commits carry change events (a finished truncation records one). */
    private readonly recordsEvents: boolean,
  ) {}

  /** The truncation's job, declared for createCatalog to register. */
  jobs(): DeclaredJobs {
    return { [TRUNCATION_JOB]: { run: (job, context) => this.runUnit(job, context) } };
  }

  /** Records the truncation and queues its first unit, atomically. Returns the task id. */
  async start(
    actor: string,
    request: Pick<TruncationStatus, 'indexName' | 'entityType' | 'aspect' | 'endTimeMillis' | 'method' | 'batchSize' | 'timeoutSeconds'>,
    counts: { total: number; matching: number },
    summary: string,
    onProgress?: TruncationProgressListener,
  ): Promise<string> {
    const taskId = randomUUID();
    const now = this.ctx.clock();
    const status: TruncationStatus = {
      taskId,
      ...request,
      state: 'queued',
      totalRows: counts.total,
      rowsToDelete: counts.matching,
      rowsDeleted: 0,
      batches: 0,
      sizeMbBefore: await indexSizeMb(this.ctx.adapter, request.indexName),
      sizeMbAfter: null,
      requestedBy: actor,
      requestedAt: now,
      startedAt: null,
      finishedAt: null,
      summary,
      error: null,
    };
    if (onProgress) this.listeners.set(taskId, onProgress);
    try {
      await this.ctx.adapter.commit({
        entities: [this.statusWrite(status, actor, undefined)],
        jobs: [{ type: TRUNCATION_JOB, payload: { taskId, indexName: request.indexName }, runAt: now }],
      });
    } catch (error) {
      this.listeners.delete(taskId);
      throw error;
    }
    this.ctx.jobs.kick();
    return taskId;
  }

  /** The recorded status; a truncation whose job gave up reads as `failed` with the job's last error. */
  async status(taskId: string): Promise<TruncationStatus | undefined> {
    const stored = await this.read(taskId);
    if (!stored || isFinal(stored.status.state)) return stored?.status;
    const jobs = await this.ctx.adapter.listJobs({ includeDead: true });
    const dead = jobs.find((j) => j.type === TRUNCATION_JOB && j.payload.taskId === taskId && j.state === 'dead');
    return dead ? { ...stored.status, state: 'failed', error: dead.lastError ?? 'the background job gave up' } : stored.status;
  }

  private async read(taskId: string): Promise<{ status: TruncationStatus; version: number; aspectVersion: number } | undefined> {
    const [entity] = await this.ctx.adapter.readEntities([statusUrn(taskId)], [STATUS_ASPECT]);
    const aspect = entity?.aspects[STATUS_ASPECT];
    if (!entity || !aspect) return undefined;
    return { status: aspect.value as unknown as TruncationStatus, version: entity.version, aspectVersion: aspect.version };
  }

  private statusWrite(
    status: TruncationStatus,
    actor: string,
    previous: { version: number; aspectVersion: number } | undefined,
  ): EntityWrite {
    const time = this.ctx.clock();
    return {
      urn: statusUrn(status.taskId),
      entityType: STATUS_ENTITY,
      expectVersion: previous?.version ?? 0,
      put: [
        {
          name: STATUS_ASPECT,
          value: status as unknown as JsonObject,
          version: (previous?.aspectVersion ?? 0) + 1,
          created: { time: status.requestedAt, actor: status.requestedBy },
          lastModified: { time, actor },
        },
      ],
    };
  }

  private async runUnit(job: Job, context: JobContext): Promise<{ done: true }> {
    const taskId = String(job.payload.taskId);
    const complete = [{ id: job.id, workerId: context.workerId }];
    let stored = await this.read(taskId);
    if (!stored || isFinal(stored.status.state)) {
      await this.ctx.adapter.commit({ completeJobs: complete });
      return { done: true };
    }
    // The work is done on behalf of whoever asked for it.
    const worker = stored.status.requestedBy;
    let status = stored.status;
    const ref: TimeseriesIndexRef = { indexName: status.indexName, entityType: status.entityType, aspect: status.aspect };
    if (status.state === 'queued') {
      status = { ...status, state: 'running', startedAt: this.ctx.clock() };
      await this.ctx.adapter.commit({ entities: [this.statusWrite(status, worker, stored)] });
      stored = { status, version: stored.version + 1, aspectVersion: stored.aspectVersion + 1 };
      await this.notify(status);
    }
    const deadline = status.timeoutSeconds === null ? Number.POSITIVE_INFINITY : (status.startedAt ?? 0) + status.timeoutSeconds * 1_000;
    let rowsDeleted = status.rowsDeleted;
    if (job.attempts > 1) {
      // A retry: the unit in progress may have been done without being recorded. Count what is left.
      const { matching } = await this.ctx.adapter.countTimeseries(ref, status.endTimeMillis);
      rowsDeleted = Math.max(rowsDeleted, status.rowsToDelete - matching);
    }
    let state: TruncationState;
    let batches = status.batches;
    if (this.ctx.clock() >= deadline) {
      state = 'timedOut';
    } else if (status.method === 'reindex') {
      rowsDeleted += await this.ctx.adapter.rebuildTimeseriesIndex(ref, status.endTimeMillis);
      batches++;
      state = 'completed';
    } else {
      const removed = await this.ctx.adapter.deleteTimeseriesBatch(ref, status.endTimeMillis, status.batchSize);
      rowsDeleted += removed;
      batches++;
      state = removed < status.batchSize ? 'completed' : this.ctx.clock() >= deadline ? 'timedOut' : 'running';
    }
    const final = isFinal(state);
    status = {
      ...status,
      state,
      rowsDeleted,
      batches,
      ...(final ? { finishedAt: this.ctx.clock(), sizeMbAfter: await indexSizeMb(this.ctx.adapter, status.indexName) } : {}),
    };
    await this.ctx.adapter.commit({
      entities: [this.statusWrite(status, worker, stored)],
      jobs: final ? [] : [{ type: TRUNCATION_JOB, payload: job.payload, runAt: this.ctx.clock() }],
      completeJobs: complete,
      // Change feed (docs/changes.md): one TRUNCATE event per truncation run, when it ends.
      ...(final && this.recordsEvents ? { events: [truncationEvent(status)] } : {}),
    });
    if (!final) this.ctx.jobs.kick();
    await this.notify(status);
    if (final) this.listeners.delete(taskId);
    return { done: true };
  }

  private async notify(status: TruncationStatus): Promise<void> {
    const listener = this.listeners.get(status.taskId);
    if (!listener) return;
    try {
      await listener(status);
    } catch (error) {
      this.ctx.reportError(error, `progress listener of truncation ${status.taskId}`);
    }
  }
}

/** The change event of a finished truncation: on the indexed entity type and aspect, who asked and what went. */
function truncationEvent(status: TruncationStatus): NewChangeEvent {
  return {
    entityUrn: statusUrn(status.taskId),
    entityType: status.entityType,
    aspectName: status.aspect,
    changeType: 'TRUNCATE',
    aspect: { indexName: status.indexName, endTimeMillis: status.endTimeMillis, rowsDeleted: status.rowsDeleted, state: status.state },
    previousAspectValue: null,
    created: { time: status.finishedAt ?? status.requestedAt, actor: status.requestedBy },
  };
}
