import { decodeCursor, encodeCursor } from '../../adapter/cursor';
import type { JsonObject, TimeseriesIndexRef } from '../../adapter/types';
import type { EntityRegistry } from '../entities/registry';
import { timeseriesIndexName, timeseriesIndexRef } from '../../adapter/timeseries-index';

export { timeseriesIndexName, timeseriesIndexRef };
import { lazySchemaCheck } from '../validation';
import { CatalogError, type Violation } from '../../errors';
import { timeseriesQueryInputSchema, truncateInputSchema } from '../validation/schemas/timeseries';

/** How a truncation removes rows: copy the rows to keep into a fresh index, or delete in batches. */
export type TruncationMethod = 'reindex' | 'deleteByQuery';

export const DEFAULT_BATCH_SIZE = 10_000;
export const DEFAULT_QUERY_COUNT = 10;
export const DRY_RUN_ENDING = 'This was a dry run. Run with dryRun = false to execute.';

/**
 * Checks that the entity type (short name or entity-type URN) is known, that the aspect is known,
 * is an aspect of that type and is a timeseries aspect; adds a violation at `paths` for each problem.
 */
export function resolveTimeseriesIndex(
  registry: EntityRegistry,
  entityTypeInput: string | undefined,
  aspect: string | undefined,
  violations: Violation[],
  paths: { entityType: string; aspect: string } = { entityType: '/entityType', aspect: '/aspect' },
): TimeseriesIndexRef | undefined {
  let entityType: string | undefined;
  if (entityTypeInput !== undefined) {
    entityType = registry.entityNameFromInput(entityTypeInput);
    if (entityType === undefined) {
      violations.push({
        path: paths.entityType,
        message: `unknown entity type "${entityTypeInput}"; known types: ${registry.entityTypeNames().join(', ')}`,
      });
    }
  }
  if (aspect === undefined) return undefined;
  if (!registry.hasAspect(aspect)) {
    violations.push({ path: paths.aspect, message: `unknown aspect "${aspect}"` });
    return undefined;
  }
  if (entityType === undefined) return undefined;
  const spec = registry.entityType(entityType);
  if (!spec.aspects.includes(aspect)) {
    const timeseries = registry.timeseriesAspectsOf(entityType);
    violations.push({
      path: paths.aspect,
      message: `entity type "${entityType}" has no aspect "${aspect}"; its timeseries aspects: ${timeseries.join(', ') || 'none'}`,
    });
    return undefined;
  }
  if (!registry.aspect(aspect).timeseries) {
    violations.push({ path: paths.aspect, message: `"${aspect}" is not a timeseries aspect` });
    return undefined;
  }
  return timeseriesIndexRef(entityType, aspect);
}

/**
 * Names as the established platform's clients send them to a truncation: its `getIndexSizes` reports
 * the entity type and aspect lower-cased from the index name (`dataset`, `datasetusagestatistics`),
 * and its documentation and clean-up job send those. Each name is taken as it is when the registry
 * knows it, else matched case-insensitively: an entity type among the registered types, an aspect
 * among the timeseries aspects of that type (or among every aspect, when the type is unknown). A
 * name that matches several (a host registered names differing only in case) is left as it is, so
 * the usual refusal names it.
 */
export function canonicalTimeseriesNames(
  registry: EntityRegistry,
  entityType: string | undefined,
  aspect: string | undefined,
): { entityType?: string; aspect?: string } {
  const pick = (name: string, known: readonly string[]): string => {
    if (known.includes(name)) return name;
    const matches = known.filter((k) => k.toLowerCase() === name.toLowerCase());
    return matches.length === 1 ? matches[0]! : name;
  };
  let type = entityType;
  if (type !== undefined && registry.entityNameFromInput(type) === undefined) type = pick(type, registry.entityTypeNames());
  const entity = type === undefined ? undefined : registry.entityNameFromInput(type);
  let name = aspect;
  if (name !== undefined) {
    const candidates = entity !== undefined ? registry.timeseriesAspectsOf(entity) : [];
    name = pick(name, candidates);
  }
  return { ...(type !== undefined ? { entityType: type } : {}), ...(name !== undefined ? { aspect: name } : {}) };
}

/**
 * The share of rows to delete as a percentage with two decimals, rounded half up (`5` of `10` →
 * `50.00`, `1` of `3` → `33.33`); `0.00` for an empty index. Exact: computed on integers.
 */
function formatShare(toDelete: number, total: number): string {
  if (total <= 0) return '0.00';
  const n = BigInt(toDelete);
  const m = BigInt(total);
  const hundredths = (n * 20_000n + m) / (2n * m);
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
}

/** More than half of the rows go (or forceReindex): copy the rest; otherwise (or forceDeleteByQuery): delete in batches. */
export function chooseTruncationMethod(
  toDelete: number,
  total: number,
  force: { forceReindex?: boolean | null; forceDeleteByQuery?: boolean | null },
): TruncationMethod {
  if (force.forceDeleteByQuery === true) return 'deleteByQuery';
  if (force.forceReindex === true || 2 * toDelete > total) return 'reindex';
  return 'deleteByQuery';
}

/** `Delete N out of M rows (P%). ` and the method sentence, as the contract fixes them. */
export function truncationSummary(toDelete: number, total: number, method: TruncationMethod): string {
  const how = method === 'reindex' ? 'Reindexing the aspect without the deleted records. ' : 'Issuing a delete by query request. ';
  return `Delete ${toDelete} out of ${total} rows (${formatShare(toDelete, total)}%). ${how}`;
}

// ---------------------------------------------------------------------------------------------

const checkTruncateShape = lazySchemaCheck(truncateInputSchema);
const checkQueryShape = lazySchemaCheck(timeseriesQueryInputSchema);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Shape errors of a truncate input (every one found); the meaning is checked by the service. */
export function truncateShapeViolations(input: unknown): Violation[] {
  if (!isPlainObject(input)) return [{ path: '/', message: 'must be an object with entityType, aspect and endTimeMillis' }];
  const violations = checkTruncateShape(input);
  const given = [input.endTimeMillis, input.olderThanMillis].filter((v) => v !== undefined).length;
  if (given !== 1) {
    violations.push({
      path: '/endTimeMillis',
      message: given
        ? 'give either endTimeMillis or olderThanMillis, not both'
        : 'is required (or olderThanMillis: an age the catalog counts back from its own clock)',
    });
  }
  const { forceReindex, forceDeleteByQuery } = input;
  // Both given with the same value: `true`/`true` contradicts itself, and `false`/`false` forbids
  // both methods. Leave both out to let the share of rows decide.
  if (typeof forceReindex === 'boolean' && forceReindex === forceDeleteByQuery) {
    violations.push({
      path: '/forceReindex',
      message: `forceReindex and forceDeleteByQuery are both ${String(forceReindex)}: set only one of them (or neither, to let the share of rows decide)`,
    });
  }
  return violations;
}

export function queryShapeViolations(input: unknown): Violation[] {
  if (!isPlainObject(input)) return [{ path: '/', message: 'must be an object with aspect and urn or entityType' }];
  const violations = checkQueryShape(input);
  const { startTimeMillis, endTimeMillis } = input;
  if (typeof startTimeMillis === 'number' && typeof endTimeMillis === 'number' && startTimeMillis > endTimeMillis) {
    violations.push({ path: '/endTimeMillis', message: `must not be before startTimeMillis (${startTimeMillis})` });
  }
  return violations;
}

/**
 * Violations of one row to append: a JSON object whose `timestampMillis` is a whole number of epoch
 * milliseconds (whatever the aspect's own schema says), and which the aspect's schema accepts.
 */
export function rowViolations(registry: EntityRegistry, aspect: string, row: unknown, prefix: string): Violation[] {
  if (!isPlainObject(row)) return [{ path: prefix || '/', message: 'must be a JSON object with timestampMillis' }];
  const violations = registry.validateAspect(aspect, row, prefix);
  const tsPath = `${prefix}/timestampMillis`;
  if (!violations.some((v) => v.path === tsPath)) {
    const ts = row.timestampMillis;
    if (ts === undefined) violations.push({ path: tsPath, message: 'is required' });
    else if (typeof ts !== 'number' || !Number.isSafeInteger(ts) || ts < 0) {
      violations.push({ path: tsPath, message: 'must be a whole number of milliseconds since the epoch, 0 or more' });
    }
  }
  return violations;
}

export function asRows(rowOrRows: JsonObject | readonly JsonObject[]): { rows: readonly unknown[]; single: boolean } {
  return Array.isArray(rowOrRows) ? { rows: rowOrRows, single: false } : { rows: [rowOrRows], single: true };
}

// ---------------------------------------------------------------------------------------------

export interface ScrollState {
  /** Index name and URN the scroll belongs to, and the adapter's cursor. */
  i: string;
  u: string | null;
  c: string;
}

export function encodeScroll(state: ScrollState): string {
  return encodeCursor({ ...state });
}

export function decodeScroll(scrollId: string, indexName: string, urn: string | undefined): string {
  const state = decodeCursor(scrollId, ({ i, u, c }) =>
    typeof i === 'string' && typeof c === 'string' && (typeof u === 'string' || u === null) ? { i, u, c } : undefined,
  );
  if (!state) {
    throw new CatalogError('INVALID_INPUT', 'scrollId: is not a scroll id this catalog gave out', {
      details: [{ path: '/scrollId', message: 'is not a scroll id this catalog gave out' }],
    });
  }
  if (state.i !== indexName || state.u !== (urn ?? null)) {
    const message = 'belongs to another query: pass the same aspect and urn or entity type as for the first page';
    throw new CatalogError('INVALID_INPUT', `scrollId: ${message}`, { details: [{ path: '/scrollId', message }] });
  }
  return state.c;
}
