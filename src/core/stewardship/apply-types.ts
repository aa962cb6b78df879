import type { Privilege } from '../access/privileges';
import type { PropertyAssignment, PropertyValue } from '../properties/types';
import type { FacetFilterInput } from '../search/filters';
import type { SearchScopeInput } from '../search/input';

/**
 * Applying structured property values to every entity a search matches: the input (the scope of a search
 * and the edit), the dry run's answer, the job's status.
 */
export interface ApplyToMatchesInput {
  /** As in `catalog.search`: GraphQL `EntityType` names or entity names; empty or absent: every type. */
  types?: SearchScopeInput['types'];
  /** As in `catalog.search`: full text; `*`, empty or absent: everything. */
  query?: string | null;
  /** As in `catalog.search`: an OR of AND groups of filters. */
  orFilters?: ReadonlyArray<{ and?: readonly FacetFilterInput[] | null }> | null;
  /** Properties to set on every match, each replacing the values it had (a structured property URN or its qualified name). */
  set?: ReadonlyArray<{ propertyUrn: string; values: readonly PropertyValue[] }> | null;
  /** Properties to remove from every match. */
  remove?: readonly string[] | null;
}

export interface ApplyOptions {
  /** Answer what the change would do, write nothing. */
  dryRun?: boolean;
  /** Entities per atomic chunk of the job (1 to 10,000; default 500). */
  chunkSize?: number;
}

/** A problem the change would meet: naming the property, and the entity (or entity type, with a count) where it is one. */
export interface ApplyViolation {
  message: string;
  propertyUrn?: string;
  /** An entity that would refuse the change. */
  urn?: string;
  /** An entity type the property does not allow, with how many matches are of it. */
  entityType?: string;
  count?: number;
  /** Set when the actor may not make the change there (a policy with resources does not cover it): the privilege it lacks. */
  privilege?: Privilege;
}

export interface ApplySample {
  urn: string;
  /** The entity's visible structured properties now. */
  before: PropertyAssignment[];
  /** What it would hold after the change. */
  after: PropertyAssignment[];
}

/** The answer of a dry run: nothing is written. */
export interface ApplyPreview {
  matched: number;
  sample: ApplySample[];
  violations: ApplyViolation[];
}

/** The answer of a real run: the job that applies the change in the background. */
export interface ApplyJob {
  jobId: string;
  matched: number;
}

export type ApplyState = 'PENDING' | 'RUNNING' | 'DONE' | 'FAILED' | 'CANCELLED';

export interface ApplyStatus {
  jobId: string;
  state: ApplyState;
  /** Entities handled: written, already holding the values, or deleted meanwhile (`skipped`). */
  done: number;
  /** Entities of the snapshot taken when the job started (before that: the matches counted when it was asked for). */
  total: number;
  /** Entities that refused the change (their values are as they were). */
  failed: number;
  /** Entities of the snapshot deleted before their chunk ran (counted in `done`). */
  skipped: number;
  /** The first few refusals. */
  errors: Array<{ urn: string; message: string }>;
  /** Why the job failed or was cancelled. */
  message: string | null;
  startedBy: string;
  requestedAt: number;
  finishedAt: number | null;
  /**
   * While unfinished and held by a worker: when that worker's lease runs out (it renews the lease while
   * it works; a worker that stopped is replaced once it has run out).
   */
  leaseExpiresAt?: number;
  /** While unfinished: what holds it up, e.g. "worker … stopped responding (its lease ran out at …)". */
  hint?: string;
}

export interface CancelApplyResult {
  jobId: string;
  /** Whether this call cancelled the job (false: it had finished already). */
  cancelled: boolean;
  state: ApplyState;
  message: string;
}
