import { isScopedActor, type Actor } from './core/access';
import type { StorageAdapter } from './adapter/types';
import { Authorizer, requireActor, type StaticPolicy } from './core/access';
import type { CatalogContext } from './core/context';
import { EntityService } from './core/entities';
import { EntityRegistry, type AspectSpec, type EntityTypeSpec } from './core/entities';
import { EntityWriter } from './core/entities';
import { CatalogError, isCatalogError, type Violation } from './errors';
import { JobRunner, type JobRunnerOptions, type SettleReport } from './core/jobs';
import type { Job } from './adapter/types';
import { isPrivilege, PRIVILEGES, type Privilege } from './core/access';
import type { ReindexOptions, ReindexProgress } from './core/properties';
import { reindexSearchDocuments } from './core/search';
import { createSearchService, type SearchService } from './core/search';
import { createStructuredProperties, type StructuredPropertyService } from './core/properties';
import { PolicyService, type Policies } from './core/access';
import type { AccessTokens, TokenOptions } from './core/tokens';
import { checkTokenOptions, TokenService } from './core/tokens';
import { TimeseriesService } from './core/timeseries';
import { createChangeFeed, type ChangeFeed } from './core/changes/service';
import { ChangeRetention, type ChangeRetentionOptions } from './core/changes/retention';
import { attachTelemetry, CatalogTelemetry, instrumentService, loadTracing, measuredCommit, measuredQuery } from './core/telemetry';
import { exportRecords, importRecords, type ExportCounts, type ExportOptions, type ExportRecord } from './core/transfer';

export interface CatalogOptions {
  /** The storage/search adapter (required). */
  adapter: StorageAdapter;
  /** Secret for signing access tokens (>= 32 bytes). A list rotates keys: the first signs, all verify. */
  tokenSigningKey?: string | readonly string[];
  /** Access token settings: `allowNoExpiry` (default false), `cleanupIntervalMs` (default one hour). */
  tokens?: TokenOptions;
  /** Actor URNs that hold every privilege. */
  superUsers?: readonly string[];
  /** Static grants, in addition to the policies stored through the API. */
  policies?: readonly StaticPolicy[];
  /** Milliseconds since the epoch; default `Date.now`. */
  clock?: () => number;
  /** Entity types and aspects of the host application, registered next to the built-in ones. */
  aspects?: readonly AspectSpec[];
  entityTypes?: readonly EntityTypeSpec[];
  /** Background work: lease length, polling, retries; `background: false` runs jobs only in `settle()`. */
  jobs?: JobRunnerOptions;
  /** Called with errors of background work (default: written to stderr without secrets). */
  onError?: (error: unknown, where: string) => void;
  /**
   * Earlier aspect versions (docs/changes.md): `enabled` (default true), `keepVersions` per aspect
   * (default 20), `keepDays` (default none); enforced by a background job.
   */
  history?: { enabled?: boolean; keepVersions?: number; keepDays?: number };
  /** The change feed: `enabled` (default true), `keepEvents` (default 1 000 000), `keepDays` (default 30). */
  changes?: { enabled?: boolean; keepEvents?: number; keepDays?: number } & Pick<ChangeRetentionOptions, 'intervalMs'>;
}

export interface Catalog {
  readonly registry: EntityRegistry;
  readonly entities: EntityService;
  /** Structured property definitions and their values on entities. */
  readonly properties: StructuredPropertyService;
  /** Search and aggregation: scroll, search, aggregate (scrollAcrossEntities, searchAcrossEntities, aggregateAcrossEntities). */
  readonly search: SearchService;
  /** Access tokens: create, list, revoke, verify, getMetadata, removeExpired, issueBootstrapToken. */
  readonly tokens: AccessTokens;
  /** Stored policies (MANAGE_POLICIES): create, update, remove, list, get. */
  readonly policies: Policies;
  /** Timeseries aspects: append, query, index sizes, truncation (docs/timeseries.md). */
  readonly timeseries: TimeseriesService;
  /** The change feed: read and follow committed changes (VIEW_CHANGE_FEED; docs/changes.md). */
  readonly changes: ChangeFeed;
  /** The catalog clock (milliseconds). */
  now(): number;
  /** Resolves once the adapter is open; rejects with its error otherwise. */
  ready(): Promise<void>;
  /** Failing while the storage refuses writes (a full disk, a lost connection): the last error and since when. */
  health(): Promise<CatalogHealth>;
  /** FORBIDDEN naming the privilege unless the actor holds it. */
  authorize(actor: Actor, privilege: Privilege): Promise<void>;
  privilegesOf(actor: Actor): Promise<Privilege[]>;
  /** Background jobs: the pending ones, and with `includeDead` the ones that gave up. */
  listJobs(options?: { includeDead?: boolean; limit?: number }): Promise<Job[]>;
  /** Resolves once all background work queued so far (and what it queues) is done. */
  settle(): Promise<SettleReport>;
  /**
   * Rebuilds every search document from the stored aspects, in batches, reporting progress (the
   * system-update step of the operations guide). An operator's call: no actor, no privilege.
   */
  reindex(options?: ReindexOptions): Promise<ReindexProgress>;
  /** `reindex` on behalf of an actor holding MANAGE_SYSTEM_OPERATIONS (transports: HTTP, the command line against a server). */
  reindexAs(actor: Actor, options?: ReindexOptions): Promise<ReindexProgress>;
  /**
   * The whole catalog as export records (entities with every aspect as stored, timeseries rows, pending
   * jobs; with `with: ['history', 'changes']` kept versions and change events too), for `metacatalog
   * export` (docs/deploy.md). An operator's call, like `reindex`: no actor, no privilege.
   */
  exportAll(options?: ExportOptions): AsyncIterable<ExportRecord>;
  /** `exportAll` on behalf of an actor holding MANAGE_SYSTEM_OPERATIONS (the HTTP export route). */
  exportAllAs(actor: Actor, options?: ExportOptions): Promise<AsyncIterable<ExportRecord>>;
  /**
   * Writes a chunk of export records back as they were exported (one atomic commit, then the chunk's
   * timeseries rows; importing twice leaves the catalog as after once). An operator's call.
   */
  importRecords(records: readonly unknown[]): Promise<ExportCounts>;
  /** `importRecords` on behalf of an actor holding MANAGE_SYSTEM_OPERATIONS. */
  importRecordsAs(actor: Actor, records: readonly unknown[]): Promise<ExportCounts>;
  /** Stops background work after its current batch and closes the adapter. */
  close(): Promise<void>;
}

function validateOptions(options: CatalogOptions): void {
  const violations: Violation[] = [];
  const o = options as unknown as Record<string, unknown>;
  if (!options || typeof options !== 'object') throw new CatalogError('INVALID_INPUT', 'createCatalog needs an options object');
  const adapter = o.adapter as Record<string, unknown> | undefined;
  if (!adapter || typeof adapter !== 'object' || typeof adapter.commit !== 'function' || typeof adapter.open !== 'function') {
    violations.push({ path: 'adapter', message: 'is required and must be a storage adapter (e.g. createSqliteAdapter())' });
  }
  if (o.tokenSigningKey !== undefined) {
    const keys = Array.isArray(o.tokenSigningKey) ? o.tokenSigningKey : [o.tokenSigningKey];
    if (keys.length === 0) violations.push({ path: 'tokenSigningKey', message: 'must name at least one key' });
    keys.forEach((key, i) => {
      const path = Array.isArray(o.tokenSigningKey) ? `tokenSigningKey[${i}]` : 'tokenSigningKey';
      if (typeof key !== 'string') violations.push({ path, message: 'must be a string' });
      else if (Buffer.byteLength(key) < 32) violations.push({ path, message: 'must be at least 32 bytes long' });
    });
  }
  if (o.superUsers !== undefined && (!Array.isArray(o.superUsers) || o.superUsers.some((u) => typeof u !== 'string'))) {
    violations.push({ path: 'superUsers', message: 'must be an array of actor URNs' });
  }
  if (o.policies !== undefined) {
    if (!Array.isArray(o.policies)) violations.push({ path: 'policies', message: 'must be an array' });
    else
      o.policies.forEach((p: Record<string, unknown>, i) => {
        if (!p || typeof p !== 'object') return violations.push({ path: `policies[${i}]`, message: 'must be an object' });
        if (p.actors !== '*' && (!Array.isArray(p.actors) || p.actors.some((a) => typeof a !== 'string'))) {
          violations.push({ path: `policies[${i}].actors`, message: 'must be "*" or an array of actor URNs' });
        }
        if (!Array.isArray(p.privileges)) violations.push({ path: `policies[${i}].privileges`, message: 'must be an array of privileges' });
        else
          p.privileges.forEach((x, j) => {
            if (!isPrivilege(x)) {
              violations.push({
                path: `policies[${i}].privileges[${j}]`,
                message: `unknown privilege ${JSON.stringify(x)}; known: ${PRIVILEGES.join(', ')}`,
              });
            }
          });
      });
  }
  if (o.clock !== undefined && typeof o.clock !== 'function')
    violations.push({ path: 'clock', message: 'must be a function returning milliseconds' });
  if (violations.length) {
    throw new CatalogError('INVALID_INPUT', `invalid catalog options: ${violations.map((v) => `${v.path} ${v.message}`).join('; ')}`, {
      details: violations,
    });
  }
}

function defaultOnError(error: unknown, where: string): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`metacatalog: ${where}: ${message}\n`);
}

/** The pieces every later service is built from; createCatalog composes the public object on top. */
export function createCatalogContext(options: CatalogOptions): {
  ctx: CatalogContext;
  ready: Promise<void>;
  health: StorageHealth;
  telemetry: CatalogTelemetry;
} {
  validateOptions(options);
  // One clock for everything the catalog writes: every batch carries the catalog's time, so adapters stamp
  // jobs with it rather than with their own clock.
  const clock = options.clock ?? Date.now;
  const health = new StorageHealth(clock);
  const telemetry = new CatalogTelemetry(options.adapter.name, {
    jobs: (limit) => ready.then(() => options.adapter.listJobs({ includeDead: true, limit })),
    changeFeed: async () => {
      await ready;
      if (!options.adapter.capabilities.changeFeed || !options.adapter.readChanges) return undefined;
      const page = await options.adapter.readChanges({ limit: 1 });
      return { lastId: page.lastId, oldestTime: page.events[0]?.created.time };
    },
    storage: async () => {
      const current = health.current;
      return current.status === 'ok' ? { ok: true } : { ok: false, failingSince: current.storage.since };
    },
    now: clock,
  });
  const adapter = instrumented(options.adapter, clock, health, telemetry);
  const registry = new EntityRegistry();
  for (const aspect of options.aspects ?? []) registry.registerAspect(aspect);
  for (const entityType of options.entityTypes ?? []) registry.registerEntityType(entityType);
  const onError = options.onError ?? defaultOnError;
  const authorizer = new Authorizer(adapter, options.superUsers ?? [], options.policies ?? []);
  const jobs = new JobRunner(adapter, clock, { ...options.jobs, onError: (error, job) => onError(error, `job ${job.type} ${job.id}`) });
  const writer = new EntityWriter(adapter, registry, clock, () => jobs.kick(), {
    events: options.changes?.enabled !== false,
    versions: options.history?.enabled !== false,
  });
  const ready = adapter.open();
  // Surface the failure on first use, not as an unhandled rejection.
  let opened = false;
  ready.then(
    () => {
      opened = true;
    },
    () => undefined,
  );
  const ctx: CatalogContext = {
    adapter,
    registry,
    clock,
    authorizer,
    writer,
    jobs,
    entities: undefined as unknown as EntityService,
    async principal(actor: unknown) {
      const urn = await this.authenticate(actor);
      return isScopedActor(actor) ? { urn, scopes: [...actor.scopes] } : urn;
    },
    authenticate(actor: unknown) {
      // Once open, no wait: this runs before every request.
      if (!opened) return ready.then(() => requireActor(actor));
      try {
        return Promise.resolve(requireActor(actor));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    reportError: onError,
  };
  (ctx as { entities: EntityService }).entities = new EntityService(ctx);
  return { ctx, ready, health, telemetry };
}

/** Whether writes reach the storage: the last write's failure (a full disk...), cleared by the next success. */
export class StorageHealth {
  private failure: { message: string; since: number } | undefined;

  constructor(private readonly clock: () => number) {}

  /** Runs a write, recording an unexpected failure (a CatalogError is a refusal, not a storage fault). */
  async track<T>(write: Promise<T>): Promise<T> {
    try {
      const result = await write;
      this.failure = undefined;
      return result;
    } catch (error) {
      if (!isCatalogError(error)) this.failure ??= { message: error instanceof Error ? error.message : String(error), since: this.clock() };
      throw error;
    }
  }

  get current(): CatalogHealth {
    return this.failure ? { status: 'failing', storage: { error: this.failure.message, since: this.failure.since } } : { status: 'ok' };
  }
}

/** `catalog.health()`: ok, or failing with the storage's last write error and since when. */
export type CatalogHealth = { status: 'ok' } | { status: 'failing'; storage: { error: string; since: number } };

/**
 * The adapter as the domain uses it: every committed batch stamped with the catalog's clock
 * (`WriteBatch.now`), every write's outcome recorded for `catalog.health()`, commits and queries timed
 * and traced.
 */
function instrumented(adapter: StorageAdapter, clock: () => number, health: StorageHealth, telemetry: CatalogTelemetry): StorageAdapter {
  const wrapped: StorageAdapter = Object.create(adapter) as StorageAdapter;
  wrapped.commit = (batch) =>
    measuredCommit(telemetry, batch, () => health.track(adapter.commit(batch.now === undefined ? { ...batch, now: clock() } : batch)));
  wrapped.appendTimeseries = (index, rows) => health.track(adapter.appendTimeseries(index, rows));
  wrapped.search = (request) => measuredQuery(telemetry, 'search', request, () => adapter.search(request));
  wrapped.aggregate = (request) => measuredQuery(telemetry, 'aggregate', request, () => adapter.aggregate(request));
  return wrapped;
}

/** Creates a catalog over one adapter. Synchronous; the adapter opens in the background and every call waits for it. */
export function createCatalog(options: CatalogOptions): Catalog {
  checkTokenOptions(options?.tokens);
  const { ctx, ready, health, telemetry } = createCatalogContext(options);
  // Spans need the optional `@opentelemetry/api`: loaded in the background, awaited by `ready()`.
  const tracing = loadTracing();
  const { service: properties, filterFields } = createStructuredProperties(ctx);
  const search = createSearchService(ctx, properties, filterFields);
  const timeseries = new TimeseriesService(ctx);
  ctx.entities.routeTimeseriesAppends((actor, urn, aspect, row) => timeseries.append(actor, urn, aspect, row));
  const started = ready.then(() => ctx.jobs.start());
  started.catch((error: unknown) => ctx.reportError(error, 'starting background jobs'));
  const signingKey = options.tokenSigningKey;
  const tokens = new TokenService(ctx, {
    ready,
    signingKeys: signingKey === undefined ? [] : typeof signingKey === 'string' ? [signingKey] : signingKey,
    tokens: options.tokens,
  });
  const policies = new PolicyService(ctx);
  const changes = createChangeFeed(ctx);
  const retention = new ChangeRetention(ctx, {
    keepVersions: options.history?.keepVersions,
    versionsKeepDays: options.history?.keepDays,
    keepEvents: options.changes?.keepEvents,
    eventsKeepDays: options.changes?.keepDays,
    intervalMs: options.changes?.intervalMs,
  });
  started
    .then(
      () => retention.start(),
      () => undefined,
    )
    .catch((error: unknown) => ctx.reportError(error, 'scheduling change retention'));
  const tokenHousekeeping = started
    .then(
      () => tokens.cleanup.start(),
      () => undefined,
    )
    .catch((error: unknown) => ctx.reportError(error, 'scheduling the removal of expired access tokens'));
  let closed: Promise<void> | undefined;
  const runImport = async (records: readonly unknown[]): Promise<ExportCounts> => {
    await started;
    const counts = await importRecords(ctx, records);
    if (counts.jobs) ctx.jobs.kick();
    return counts;
  };
  return attachTelemetry<Catalog>(telemetry, {
    registry: ctx.registry,
    entities: instrumentService(ctx.entities, 'entities', telemetry),
    properties: instrumentService(properties, 'properties', telemetry),
    search: instrumentService(search, 'search', telemetry),
    tokens: instrumentService(tokens, 'tokens', telemetry),
    policies: instrumentService(policies, 'policies', telemetry),
    timeseries: instrumentService(timeseries, 'timeseries', telemetry),
    changes: instrumentService(changes, 'changes', telemetry),
    now: () => ctx.clock(),
    ready: () => started.then(() => tokenHousekeeping).then(() => tracing),
    async health() {
      await ready;
      return health.current;
    },
    async authorize(actor, privilege) {
      await ctx.authorizer.require(await ctx.principal(actor), privilege);
    },
    async privilegesOf(actor) {
      return [...(await ctx.authorizer.privilegesOf(await ctx.principal(actor)))];
    },
    async listJobs(listOptions) {
      await started;
      return ctx.adapter.listJobs(listOptions);
    },
    async settle() {
      await started;
      await tokenHousekeeping;
      return ctx.jobs.settle();
    },
    async reindex(reindexOptions) {
      await started;
      return reindexSearchDocuments(ctx, reindexOptions);
    },
    async reindexAs(actor, reindexOptions) {
      await ctx.authorizer.require(await ctx.principal(actor), 'MANAGE_SYSTEM_OPERATIONS');
      await started;
      return reindexSearchDocuments(ctx, reindexOptions);
    },
    exportAll(exportOptions) {
      return (async function* () {
        await started;
        yield* exportRecords(ctx, exportOptions);
      })();
    },
    async exportAllAs(actor, exportOptions) {
      await ctx.authorizer.require(await ctx.principal(actor), 'MANAGE_SYSTEM_OPERATIONS');
      await started;
      return exportRecords(ctx, exportOptions);
    },
    importRecords: runImport,
    async importRecordsAs(actor, records) {
      await ctx.authorizer.require(await ctx.principal(actor), 'MANAGE_SYSTEM_OPERATIONS');
      return runImport(records);
    },
    close() {
      closed ??= (async () => {
        await started.catch(() => undefined);
        tokens.cleanup.stop();
        retention.stop();
        await tokenHousekeeping;
        await ctx.jobs.stop();
        await ctx.adapter.close();
      })();
      return closed;
    },
  });
}
