/**
 * The parts of the adapter contract and the methods of each: the one list `composeAdapter` checks
 * parts against and binds members from. The compiler holds it to the part interfaces (below): a method
 * added to a part's interface and not listed here, or listed here and not in the interface, fails to
 * compile.
 */
import type { ChangeLog } from './change-log';
import type { EntityStore } from './entity-store';
import type { JobQueue } from './job-queue';
import type { PropertyValueIndex } from './property-value-index';
import type { SearchIndex } from './search-index';
import type { TimeseriesStore } from './timeseries-store';

export const ADAPTER_PARTS = {
  entities: { required: ['open', 'close', 'readEntities', 'scanEntities', 'commit'], optional: ['changeToken', 'matchAspects'] },
  search: { required: ['search', 'aggregate'], optional: ['flushSearchIndex'] },
  propertyValues: {
    required: ['findEntitiesWithPropertyValues', 'countEntitiesWithPropertyValues', 'findEntitiesWithSeveralPropertyValues'],
    optional: [],
  },
  jobs: { required: ['claimJobs', 'releaseJob', 'renewJobLease', 'listJobs'], optional: [] },
  timeseries: {
    required: [
      'appendTimeseries',
      'queryTimeseries',
      'timeseriesIndexSizes',
      'countTimeseries',
      'deleteTimeseriesBatch',
      'rebuildTimeseriesIndex',
    ],
    optional: [],
  },
  changes: { required: ['readChanges', 'readAspectVersions', 'pruneChanges', 'waitForChanges'], optional: [] },
} as const;

/** Each part's interface, by the part's name. */
export interface PartInterfaces {
  entities: EntityStore;
  search: SearchIndex;
  propertyValues: PropertyValueIndex;
  jobs: JobQueue;
  timeseries: TimeseriesStore;
  changes: ChangeLog;
}

export type PartName = keyof typeof ADAPTER_PARTS;

/** The methods a part lists (required and optional). */
export type PartMethod<P extends PartName> = (typeof ADAPTER_PARTS)[P]['required'][number] | (typeof ADAPTER_PARTS)[P]['optional'][number];

export const PART_NAMES = Object.keys(ADAPTER_PARTS) as PartName[];

/** Every method a part lists, required ones first. */
export function partMethods<P extends PartName>(part: P): ReadonlyArray<PartMethod<P>> {
  const { required, optional } = ADAPTER_PARTS[part];
  return [...required, ...optional] as ReadonlyArray<PartMethod<P>>;
}

// ---- compile-time: the lists name exactly the methods of the interfaces ----

type MethodKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never }[keyof T];
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type ListsMatch = {
  [P in PartName]: Same<
    (typeof ADAPTER_PARTS)[P]['required'][number],
    Exclude<MethodKeys<PartInterfaces[P]>, OptionalKeys<PartInterfaces[P]>>
  > &
    Same<(typeof ADAPTER_PARTS)[P]['optional'][number], Extract<MethodKeys<PartInterfaces[P]>, OptionalKeys<PartInterfaces[P]>>>;
};
/** Fails to compile when a part's list and its interface disagree (the failing part is named in the error). */
const _listsMatch: { readonly [P in PartName]: ListsMatch[P] } = {
  entities: true,
  search: true,
  propertyValues: true,
  jobs: true,
  timeseries: true,
  changes: true,
};
