/**
 * Part of the adapter contract: the change log (change events and kept aspect versions, see
 * docs/changes.md). Events and versions are written only by the entity store's commit
 * (`WriteBatch.events`, `WriteBatch.aspectVersions`), atomically with the change they describe; this
 * part reads them, waits for them and applies retention.
 *
 * - Not found: an empty page or list; never an error.
 * - Atomic: an event never shows up after one with a greater id was answered (ids follow commit order,
 *   also across processes); a commit's events are one block.
 * - Order: events by ascending id; kept versions newest (highest version) first.
 */
import type { AuditStamp, JsonObject, StoredAspect } from './values';

/** One committed change of one aspect, named after DataHub's MetadataChangeLog. */
export interface NewChangeEvent {
  entityUrn: string;
  entityType: string;
  aspectName: string;
  /** `UPSERT` (written), `DELETE` (aspect or entity removed), `TRUNCATE` (timeseries rows removed). */
  changeType: 'UPSERT' | 'DELETE' | 'TRUNCATE';
  /** The value after the change; null for a deletion. */
  aspect: JsonObject | null;
  /** The value before the change; null when there was none. */
  previousAspectValue: JsonObject | null;
  created: AuditStamp;
  systemMetadata?: JsonObject;
}

export interface ChangeEvent extends NewChangeEvent {
  /** Opaque cursor: a decimal integer as a string, increasing in commit order. */
  id: string;
}

export interface AspectVersionPut {
  urn: string;
  entityType: string;
  aspect: StoredAspect;
}

export interface ChangeQuery {
  /** Only events with an id greater than this one (a cursor from an earlier answer). */
  after?: string;
  limit: number;
  /** Empty or absent: every entity type / every aspect. */
  entityTypes?: readonly string[];
  aspects?: readonly string[];
}

export interface ChangePage {
  /** Ascending id (= commit order). */
  events: ChangeEvent[];
  /**
   * The smallest id still kept (undefined when the feed is empty): a cursor lower than this one minus
   * one asks for events retention already removed. `lastId` is the greatest id ever assigned.
   */
  oldestId?: string;
  lastId?: string;
  /**
   * The greatest id this read looked at: the last event's id when the page is full, else the greatest
   * id committed when the read ran (filtered reads skip what does not match, so a consumer resumes here).
   */
  scannedId?: string;
}

/** The change log part. */
export interface ChangeLog {
  /**
   * Committed change events in ascending id order, only those after `after`, filtered by entity type and
   * aspect name. Reads what is committed; an event never shows up after one with a greater id was
   * answered (ids follow commit order).
   */
  readChanges(query: ChangeQuery): Promise<ChangePage>;
  /**
   * Kept earlier versions of one aspect (not the current one, which `readEntities` gives), newest
   * (highest version) first, only versions below `beforeVersion`. Not found: an empty list.
   */
  readAspectVersions(request: { urn: string; aspectName: string; beforeVersion?: number; limit: number }): Promise<StoredAspect[]>;
  /**
   * Retention. Removes events older than `eventsBefore` (epoch ms) and beyond the newest `keepEvents`;
   * aspect versions older than `versionsBefore` and beyond the `keepVersions` newest kept per aspect. At
   * most `limit` rows per kind per call; answers how many went.
   */
  pruneChanges(request: {
    eventsBefore?: number;
    keepEvents?: number;
    versionsBefore?: number;
    keepVersions?: number;
    limit: number;
  }): Promise<{ events: number; versions: number }>;
  /**
   * Resolves when a commit (of this process or, where the part can tell, another one) may have added
   * events, or after `timeoutMs`, or when `signal` aborts; always resolves, never rejects, and leaves no
   * listener or timer behind.
   */
  waitForChanges(request: { afterId?: string; timeoutMs: number; signal?: AbortSignal }): Promise<void>;
}
