import type { NewJob, JsonObject, StoredEntity, TimeseriesIndexRef, TimeseriesRow } from '../../adapter/types';

/**
 * What a unit of work changes: the plan the write pipeline hands the writer. Owners and background
 * work speak in these terms; only the pipeline reaches the writer that commits them.
 */

export interface AspectChange {
  value: JsonObject;
  systemMetadata?: JsonObject;
}

/** What to do to one entity. */
export interface EntityPlan {
  urn: string;
  /** The entity type of `urn`, when the planner knows it (read from the URN otherwise). */
  entityType?: string;
  put?: Record<string, AspectChange>;
  delete?: readonly string[];
  deleteEntity?: boolean;
}

export interface WritePlan {
  entities: EntityPlan[];
  jobs?: NewJob[];
  /** Timeseries rows appended with the change (in the commit when the adapter can, right after it otherwise). */
  timeseries?: Array<{ index: TimeseriesIndexRef; rows: TimeseriesRow[] }>;
}

/**
 * Decides the changes from what is stored. `now` is the time the commit stamps its aspects with: what a
 * decision stamps itself (the values of structured properties) uses it too, so that the stamps agree.
 */
export type Decide = (current: ReadonlyMap<string, StoredEntity>, now: number) => WritePlan | Promise<WritePlan>;
