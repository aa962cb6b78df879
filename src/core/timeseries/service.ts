import type { Actor } from '../access/actor';
import type { JsonObject, TimeseriesIndexRef, TimeseriesRow } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import {
  asRows,
  chooseTruncationMethod,
  DEFAULT_BATCH_SIZE,
  DEFAULT_QUERY_COUNT,
  decodeScroll,
  DRY_RUN_ENDING,
  encodeScroll,
  queryShapeViolations,
  resolveTimeseriesIndex,
  canonicalTimeseriesNames,
  rowViolations,
  timeseriesIndexRef,
  truncateShapeViolations,
  truncationSummary,
  type TruncationMethod,
} from './input';
import type { TruncationRunner } from './truncation';
import type { TruncationProgressListener, TruncationStatus } from './truncation';
import { parseUrn, urnProblem } from '../urn';

/** One row of a timeseries aspect as a reader sees it. `value` is the aspect as appended, `timestampMillis` included. */
export interface TimeseriesRecord {
  urn: string;
  timestampMillis: number;
  value: JsonObject;
}

export interface TimeseriesAppendResult {
  urn: string;
  aspect: string;
  indexName: string;
  /** The rows appended, in the order given. */
  rows: TimeseriesRecord[];
}

/** One row of `appendMany`: the entity it belongs to and the aspect value, `timestampMillis` included. */
export interface TimeseriesEntry {
  urn: string;
  value: JsonObject;
}

export interface TimeseriesBulkAppendResult {
  aspect: string;
  indexName: string;
  appended: number;
}

/** Rows of one aspect, of one entity (`urn`) or of every entity of a type (`entityType`), newest first. */
export interface TimeseriesQueryInput {
  aspect: string;
  urn?: string;
  /** Short name (`dataset`) or entity-type URN; optional when `urn` is given (then it must agree). */
  entityType?: string;
  /** Inclusive bounds, epoch milliseconds. */
  startTimeMillis?: number | null;
  endTimeMillis?: number | null;
  /** Rows per page, 1 to 10,000; default 10. */
  count?: number | null;
  /** From the previous page's answer, to read the next page. */
  scrollId?: string | null;
}

export interface TimeseriesQueryResult {
  results: TimeseriesRecord[];
  /** Present when more rows follow: pass it back for the next page. */
  scrollId?: string;
}

/**
 * One timeseries index, as the contract fixes it. `sizeMb` is bytes / 1,000,000. `entityName` and
 * `aspectName` are lower-cased, as the established platform reads them from the index name
 * (`dataset`, `datasetusagestatistics`); a truncation accepts them in that form.
 */
export interface TimeseriesIndexSizeRecord {
  aspectName: string;
  sizeMb: number;
  indexName: string;
  entityName: string;
}

function indexSizeRecord(indexName: string, entityType: string, aspect: string, bytes: number): TimeseriesIndexSizeRecord {
  return { aspectName: aspect.toLowerCase(), sizeMb: bytes / 1_000_000, indexName, entityName: entityType.toLowerCase() };
}

export interface TruncateInput {
  entityType: string;
  aspect: string;
  /** Rows with `timestampMillis <= endTimeMillis` are removed. Give this or `olderThanMillis`. */
  endTimeMillis?: number;
  /**
   * The rows older than this age are removed: the cutoff is the catalog's clock minus this (so a client's
   * clock never decides). Give this or `endTimeMillis`.
   */
  olderThanMillis?: number;
  /** Default true: only count and answer. */
  dryRun?: boolean | null;
  /** Rows per delete batch (1 to 1,000,000); default 10,000. */
  batchSize?: number | null;
  /** Stop after the batch in progress once this many seconds have passed since the work started. */
  timeoutSeconds?: number | null;
  forceDeleteByQuery?: boolean | null;
  forceReindex?: boolean | null;
}

export interface TruncateResult {
  /** `Delete N out of M rows (P%). ` + the method sentence + the dry-run ending or `Task id: <id>.` */
  message: string;
  dryRun: boolean;
  method: TruncationMethod;
  indexName: string;
  totalRows: number;
  rowsToDelete: number;
  /** The cutoff the truncation used (rows at or before it). */
  endTimeMillis: number;
  /** Real runs: follow the work with `getTruncation(actor, taskId)`. */
  taskId?: string;
}

export interface TruncateOptions {
  /** Called in this process after each step of the background work (not called when another process runs it). */
  onProgress?: TruncationProgressListener;
}

/**
 * Timeseries aspects: rows appended with their `timestampMillis` (never overwritten), read back newest
 * first, one index per (entity type, aspect), index sizes, and truncation of old rows.
 */
export class TimeseriesService {
  constructor(
    private readonly ctx: CatalogContext,
    /** Truncations as durable background work (their job is declared by the timeseries module). */
    private readonly truncations: TruncationRunner,
  ) {}

  /**
   * Appends one row or several (atomically) to the aspect's index; needs EDIT_ENTITY. Every row is
   * checked against the aspect's schema first: one bad row refuses them all, listing every violation.
   */
  async append(actor: Actor, urn: string, aspect: string, rowOrRows: JsonObject | readonly JsonObject[]): Promise<TimeseriesAppendResult> {
    await this.ctx.authorizer.require(await this.ctx.principal(actor), 'EDIT_ENTITY', 'append timeseries rows');
    const violations: Violation[] = [];
    const problem = urnProblem(urn);
    if (problem) violations.push({ path: '/urn', message: problem });
    const entityType = problem ? undefined : parseUrn(urn).entityType;
    const index = problem
      ? undefined
      : resolveTimeseriesIndex(this.ctx.registry, entityType, aspect, violations, { entityType: '/urn', aspect: '/aspect' });
    const { rows, single } = asRows(rowOrRows);
    if (!Array.isArray(rowOrRows) && (rowOrRows === null || typeof rowOrRows !== 'object')) {
      violations.push({ path: '/rows', message: 'must be a row object or an array of row objects' });
    } else if (rows.length === 0) {
      violations.push({ path: '/rows', message: 'names no row' });
    } else if (index) {
      rows.forEach((row, i) => violations.push(...rowViolations(this.ctx.registry, index.aspect, row, single ? '' : `/${i}`)));
    }
    throwIfViolations(violations, `invalid timeseries rows for ${String(urn)}`);
    // ACCESS HOOK (metadata policies): the entity must be one the actor's EDIT_ENTITY covers.
    await this.ctx.authorizer.requireOnEntities(await this.ctx.principal(actor), 'EDIT_ENTITY', [{ urn, path: '/urn' }]);
    const stored: TimeseriesRow[] = (rows as JsonObject[]).map((value) => ({
      urn,
      timestampMillis: value.timestampMillis as number,
      value,
    }));
    await this.ctx.adapter.appendTimeseries(index!, stored);
    return { urn, aspect, indexName: index!.indexName, rows: stored };
  }

  /**
   * Bulk form: rows of one aspect for many entities of one type, appended atomically in one index
   * (an ingestion run's hour of usage statistics, say). Needs EDIT_ENTITY; one bad entry refuses
   * them all, each violation at `/<i>/urn` or `/<i>/value/...`.
   */
  async appendMany(actor: Actor, aspect: string, entries: readonly TimeseriesEntry[]): Promise<TimeseriesBulkAppendResult> {
    await this.ctx.authorizer.require(await this.ctx.principal(actor), 'EDIT_ENTITY', 'append timeseries rows');
    const violations: Violation[] = [];
    if (!Array.isArray(entries) || entries.length === 0) {
      violations.push({ path: '/', message: 'must be a non-empty array of { urn, value }' });
      throwIfViolations(violations, 'invalid timeseries rows');
    }
    let index: TimeseriesIndexRef | undefined;
    let entityType: string | undefined;
    const rows: TimeseriesRow[] = new Array<TimeseriesRow>(entries.length);
    // A bulk call names the same entities many times: check and parse each URN once.
    const urns = new Map<unknown, { problem: string } | { entityType: string }>();
    entries.forEach((entry, i) => {
      const urn: unknown = entry?.urn;
      let checked = urns.get(urn);
      if (!checked) {
        const problem = urnProblem(urn);
        checked = problem ? { problem } : { entityType: parseUrn(urn as string).entityType };
        urns.set(urn, checked);
      }
      if ('problem' in checked) return violations.push({ path: `/${i}/urn`, message: checked.problem });
      const ofUrn = checked.entityType;
      if (entityType === undefined) {
        entityType = ofUrn;
        index = resolveTimeseriesIndex(this.ctx.registry, ofUrn, aspect, violations, { entityType: `/${i}/urn`, aspect: '/aspect' });
      } else if (ofUrn !== entityType) {
        return violations.push({
          path: `/${i}/urn`,
          message: `is of type "${ofUrn}"; every row of one call must be of type "${entityType}"`,
        });
      }
      if (!index) return;
      const rowProblems = rowViolations(this.ctx.registry, index.aspect, entry.value, `/${i}/value`);
      if (rowProblems.length) return violations.push(...rowProblems);
      rows[i] = { urn: urn as string, timestampMillis: entry.value.timestampMillis as number, value: entry.value };
    });
    throwIfViolations(violations, 'invalid timeseries rows');
    // ACCESS HOOK (metadata policies): every entity must be one the actor's EDIT_ENTITY covers.
    await this.ctx.authorizer.requireOnEntities(
      await this.ctx.principal(actor),
      'EDIT_ENTITY',
      rows.map((row, i) => ({ urn: row.urn, path: `/${i}/urn` })),
    );
    await this.ctx.adapter.appendTimeseries(index!, rows);
    return { aspect, indexName: index!.indexName, appended: rows.length };
  }

  /** Rows newest first (equal times: last appended first), a page at a time. Reading needs an authenticated actor only. */
  async query(actor: Actor, input: TimeseriesQueryInput): Promise<TimeseriesQueryResult> {
    await this.ctx.authenticate(actor);
    const violations = queryShapeViolations(input);
    const typed = (input ?? {}) as Partial<Record<keyof TimeseriesQueryInput, unknown>>;
    let entityType = typeof typed.entityType === 'string' ? typed.entityType : undefined;
    if (typeof typed.urn === 'string') {
      const problem = urnProblem(typed.urn);
      if (problem) violations.push({ path: '/urn', message: problem });
      else {
        const ofUrn = parseUrn(typed.urn).entityType;
        const named = entityType === undefined ? undefined : this.ctx.registry.entityNameFromInput(entityType);
        if (entityType !== undefined && named === undefined) {
          violations.push({
            path: '/entityType',
            message: `unknown entity type "${entityType}"; known types: ${this.ctx.registry.entityTypeNames().join(', ')}`,
          });
        } else if (named !== undefined && named !== ofUrn) {
          violations.push({ path: '/entityType', message: `is "${named}" but the urn is of type "${ofUrn}"` });
        }
        // The URN decides the index (a mismatch is reported once, above).
        entityType = ofUrn;
      }
    } else if (typed.urn === undefined && typed.entityType === undefined) {
      violations.push({ path: '/entityType', message: 'is required when no urn is given' });
    }
    const index = resolveTimeseriesIndex(
      this.ctx.registry,
      entityType,
      typeof typed.aspect === 'string' ? typed.aspect : undefined,
      violations,
    );
    throwIfViolations(violations, 'invalid timeseries query');
    const ref = index!;
    const cursor = input.scrollId ? decodeScroll(input.scrollId, ref.indexName, input.urn) : undefined;
    const page = await this.ctx.adapter.queryTimeseries({
      ...ref,
      ...(input.urn !== undefined ? { urn: input.urn } : {}),
      ...(typeof input.startTimeMillis === 'number' ? { startTimeMillis: input.startTimeMillis } : {}),
      ...(typeof input.endTimeMillis === 'number' ? { endTimeMillis: input.endTimeMillis } : {}),
      limit: input.count ?? DEFAULT_QUERY_COUNT,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    return {
      results: page.rows.map((r) => ({ urn: r.urn, timestampMillis: r.timestampMillis, value: r.value })),
      ...(page.nextCursor !== undefined ? { scrollId: encodeScroll({ i: ref.indexName, u: input.urn ?? null, c: page.nextCursor }) } : {}),
    };
  }

  /**
   * The aspect's current value on an entity: for a timeseries aspect, its newest row (equal times: the
   * last appended), as a read of the aspect answers. Undefined when the entity has no row.
   */
  async latest(actor: Actor, urn: string, aspect: string): Promise<JsonObject | undefined> {
    const page = await this.query(actor, { urn, aspect, count: 1 });
    return page.results[0]?.value;
  }

  /**
   * One record per timeseries index, by index name: every (entity type, timeseries aspect) pair the
   * catalog knows (size 0 until its first row), and any other index the store holds. Needs
   * GET_TIMESERIES_INDEX_SIZES.
   */
  async getIndexSizes(actor: Actor): Promise<TimeseriesIndexSizeRecord[]> {
    await this.ctx.authorizer.require(await this.ctx.principal(actor), 'GET_TIMESERIES_INDEX_SIZES');
    const byName = new Map<string, TimeseriesIndexSizeRecord>();
    for (const entityType of this.ctx.registry.entityTypeNames()) {
      for (const aspect of this.ctx.registry.timeseriesAspectsOf(entityType)) {
        const ref = timeseriesIndexRef(entityType, aspect);
        byName.set(ref.indexName, indexSizeRecord(ref.indexName, entityType, aspect, 0));
      }
    }
    for (const size of await this.ctx.adapter.timeseriesIndexSizes()) {
      byName.set(size.indexName, indexSizeRecord(size.indexName, size.entityType, size.aspect, size.bytes));
    }
    return [...byName.values()].sort((a, b) => (a.indexName < b.indexName ? -1 : a.indexName > b.indexName ? 1 : 0));
  }

  /**
   * Removes the rows at or before `endTimeMillis` from one index; needs TRUNCATE_TIMESERIES_INDEX.
   * A dry run (the default) only counts. A real run records the truncation and hands it to durable
   * background work (see `getTruncation`); the answer comes back at once.
   */
  async truncate(actor: Actor, input: TruncateInput, options: TruncateOptions = {}): Promise<TruncateResult> {
    const who = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor, 'TRUNCATE_TIMESERIES_INDEX');
    const violations = truncateShapeViolations(input);
    const typed = input as Partial<TruncateInput> | null;
    const names = canonicalTimeseriesNames(
      this.ctx.registry,
      typeof typed?.entityType === 'string' ? typed.entityType : undefined,
      typeof typed?.aspect === 'string' ? typed.aspect : undefined,
    );
    const index = resolveTimeseriesIndex(this.ctx.registry, names.entityType, names.aspect, violations);
    throwIfViolations(violations, 'invalid truncation request');
    const ref: TimeseriesIndexRef = index!;
    const endTimeMillis = input.endTimeMillis ?? Math.max(0, this.ctx.clock() - input.olderThanMillis!);
    const counts = await this.ctx.adapter.countTimeseries(ref, endTimeMillis);
    const method = chooseTruncationMethod(counts.matching, counts.total, input);
    const summary = truncationSummary(counts.matching, counts.total, method);
    const result = {
      dryRun: true,
      method,
      indexName: ref.indexName,
      totalRows: counts.total,
      rowsToDelete: counts.matching,
      endTimeMillis,
    };
    if (input.dryRun ?? true) return { ...result, message: `${summary}${DRY_RUN_ENDING}` };
    const taskId = await this.truncations.start(
      who,
      { ...ref, endTimeMillis, method, batchSize: input.batchSize ?? DEFAULT_BATCH_SIZE, timeoutSeconds: input.timeoutSeconds ?? null },
      counts,
      summary,
      options.onProgress,
    );
    return { ...result, dryRun: false, taskId, message: `${summary}Task id: ${taskId}.` };
  }

  /** The status of a real truncation by its task id; undefined when unknown. Needs TRUNCATE_TIMESERIES_INDEX. */
  async getTruncation(actor: Actor, taskId: string): Promise<TruncationStatus | undefined> {
    await this.ctx.authorizer.require(
      await this.ctx.principal(actor),
      'TRUNCATE_TIMESERIES_INDEX',
      'read the status of timeseries truncations',
    );
    if (typeof taskId !== 'string' || !/^[A-Za-z0-9-]{1,100}$/.test(taskId)) {
      throw new CatalogError('INVALID_INPUT', `taskId: "${String(taskId)}" is not a task id`, {
        details: [{ path: '/taskId', message: 'is not a task id' }],
      });
    }
    return this.truncations.status(taskId);
  }
}
