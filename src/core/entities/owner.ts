import type { Actor } from '../access/actor';
import type { Privilege } from '../access/privileges';
import type { AspectMatch, NewJob, StoredEntity, TimeseriesIndexRef, TimeseriesRow } from '../../adapter/types';
import type { Violation } from '../../errors';
import type { ArrayPrimaryKeys, JsonPatchOperation } from './json-patch';
import type { AspectChange } from './write-plan';

/**
 * Aspect owners: a domain that governs aspects (structured properties, tokens, policies, timeseries)
 * declares an owner for them, and the entity service hands every write of those aspects to it, in
 * whatever batch they come. The owner checks the canonical value, plans the change inside the unit of
 * work, and names the privilege a write needs. Owners are given to the entity service when it is built.
 */

/** One write of one aspect, as the write pipeline hands it to the aspect's owner. */
export interface OwnedItem {
  /** Position of the item in the caller's batch. */
  index: number;
  op: 'upsert' | 'patch' | 'delete' | 'edit';
  urn: string;
  entityType: string;
  aspect: string;
  /** `upsert`: the canonical value, not yet checked. */
  value?: unknown;
  /** `patch`: the JSON Patch (checked for shape already) and its array keys. */
  operations?: readonly JsonPatchOperation[];
  arrayPrimaryKeys?: ArrayPrimaryKeys;
  /** `patch`: where the operations sit. */
  patchPath?: string;
  /** `edit`: the owner's own edit, built by its domain's service (an owner refuses an edit it does not know). */
  edit?: unknown;
  /**
   * The edit is the catalog's own bookkeeping (`WritePipeline.bookkeep`: a job's progress, an expired
   * token's removal), which no user sends: an owner plans its bookkeeping edits only when this is set.
   */
  system?: true;
  /**
   * Where the value (for a patch: the request `{ patch, arrayPrimaryKeys }`) sits in the canonical
   * input: violations about it go under this path.
   */
  path: string;
}

/** What a plan step knows: who writes, the commit's time, where to add problems found under the commit's read. */
export interface PlanStep {
  who: string;
  now: number;
  problems: Violation[];
}

/** What one owned item changes; undefined or an empty object when nothing changes. */
export interface OwnedChange {
  /** The aspect's new value. */
  put?: AspectChange;
  /** Other aspects of the same entity written with it (a definition created with its settings). */
  also?: Record<string, AspectChange>;
  /** The aspect goes. */
  delete?: boolean;
  /** Background work queued in the same commit. */
  jobs?: NewJob[];
  /** Timeseries rows appended in the same commit. */
  rows?: { index: TimeseriesIndexRef; rows: TimeseriesRow[] };
  /** The whole entity goes (a bookkeeping edit: an expired token's record). */
  deleteEntity?: boolean;
  /** What the owner answers its service about the item (the visible values after an edit, whether a job was cancelled). */
  result?: unknown;
}

/** An owner's checked batch: plans each item inside the unit of work, given the entity as it stands then. */
export interface OwnerBatch {
  /**
   * Called once per unit of work, before its first item is planned, with the entities the unit of work
   * read: what the plans need beyond them (definitions named by stored values) is read here, once.
   */
  begin?(read: ReadonlyMap<string, StoredEntity>): void | Promise<void>;
  plan(item: OwnedItem, entity: StoredEntity | undefined, step: PlanStep): OwnedChange | undefined | Promise<OwnedChange | undefined>;
  /**
   * Whether an upsert whose value equals the stored aspect's (the pipeline compared them) would plan no
   * change: then it is not planned at all (a re-ingest of unchanged metadata costs a read and a
   * compare). Left out: every item is planned. Called after `begin`.
   */
  unchanged?(item: OwnedItem, stored: AspectMatch): boolean;
}

export interface AspectOwner {
  /** A short name for messages (`structured properties`, `timeseries`). */
  readonly name: string;
  /** Whether this owner governs the aspect on entities of this type. */
  governs(entityType: string, aspect: string): boolean;
  /**
   * The privilege a write of the aspect needs (checked by the pipeline before anything is planned).
   * For an `edit` only, undefined: the owner's service authorized it already, by rules one privilege
   * cannot say (a token for oneself or for another actor).
   */
  privilege(entityType: string, aspect: string, op?: OwnedItem['op']): Privilege | undefined;
  /**
   * The aspects of the entity this owner's plans read. While the batch's earlier items changed none of
   * them, a plan gets the entity as the unit of work read it (no stand-in is made for it). Left out:
   * a plan gets the whole entity as the batch's earlier items left it.
   */
  readonly reads?: readonly string[];
  /**
   * Whether the actor may write this item on this entity (as the unit of work read it, or as the
   * batch's earlier items left it), beyond the privilege the batch was checked for: throws FORBIDDEN
   * otherwise. The pipeline calls it for every item of a user's write, right before the item is
   * planned; never for bookkeeping.
   */
  authorize?(principal: Actor, item: OwnedItem, entity: StoredEntity | undefined): void | Promise<void>;
  /**
   * Checks every item (adding each violation under the item's path) and reads what the check needs
   * (definitions). Called once per batch, before the unit of work. The entities themselves are read by
   * the unit of work: what depends on them is checked in `plan`.
   */
  prepare(principal: Actor, items: readonly OwnedItem[], violations: Violation[], batch?: PrepareContext): Promise<OwnerBatch>;
}

/** What an owner knows of the whole batch when it prepares its items. */
export interface PrepareContext {
  /**
   * How many units of work write the batch (chunks of whole entities). Past one, a check that depends
   * on stored state must be made before the first commits, or a bad item of a later chunk would leave
   * the earlier chunks written.
   */
  units: number;
}

/** What `deleteEntity` did, or would do on a dry run. */
export interface EntityDeletion {
  urn: string;
  entityType: string;
  /** `soft`: `status.removed` set, reversible (write `status { removed: false }` to restore); `hard`: the entity is gone. */
  mode: 'soft' | 'hard';
  /** Nothing was written: this is what the deletion would do. */
  dryRun: boolean;
  /** False when nothing changes: a soft delete of an entity that is soft-deleted already. */
  changed: boolean;
  /**
   * Structured properties only: the entities carrying values of the property. After a soft delete they
   * are hidden and kept; after a hard delete the background clean-up removes them.
   */
  entitiesWithValues?: number;
}

/** Shapes what readers see (e.g. hides values of soft-deleted or superseded property definitions). */
export type ReadTransform = (entities: StoredEntity[]) => Promise<StoredEntity[]>;

/**
 * The owner of an entity type in the write path: the privilege deleting one inside a batch needs (a
 * change proposal deleting the key aspect) and the jobs queued with the deletion.
 */
export interface EntityTypeOwner {
  readonly entityType: string;
  readonly deletePrivilege?: Privilege;
  planDelete?(urn: string, entity: StoredEntity | undefined): { jobs?: NewJob[] };
}

/**
 * How a domain's service deletes entities of its type when asked (`catalog.entities.delete` and
 * `deleteEntity` hand the call to it): soft or hard, with a report. Built with the service.
 */
export interface EntityDeleter {
  readonly entityType: string;
  /** Soft unless `hard` when the caller does not say (structured properties: false, as the platform does). */
  readonly softByDefault: boolean;
  /** No soft state and no dry run (tokens, policies): a deletion is always hard and real. */
  readonly hardOnly?: boolean;
  /** The reported deletion: decides soft or hard, counts what is affected, writes nothing on a dry run. */
  delete(actor: Actor, urn: string, options: { hard: boolean; dryRun: boolean }): Promise<EntityDeletion>;
}

/** Everything one domain owns, handed to the write pipeline when createCatalog builds it. */
export interface DomainOwners {
  aspects?: readonly AspectOwner[];
  entityTypes?: readonly EntityTypeOwner[];
  /** Applied to every generic read. */
  read?: ReadTransform;
}
