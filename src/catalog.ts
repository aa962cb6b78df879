import { isScopedActor, type Actor } from './core/access';
import type { StorageAdapter } from './adapter/types';
import { Authorizer, requireActor, type StaticPolicy } from './core/access';
import type { CatalogContext } from './core/context';
import { entitiesModule, type EntityService, WritePipeline } from './core/entities';
import { EntityRegistry, type AspectSpec, type EntityTypeSpec } from './core/entities';
import { CatalogError, isCatalogError, storageFailure, storageUnavailable, unavailableReason, type Violation } from './errors';
import { JobRunner, type JobRunnerOptions, type SettleReport } from './core/jobs';
import type { Job } from './adapter/types';
import { isPrivilege, PRIVILEGES, type Privilege } from './core/access';
import type { ReindexOptions, ReindexProgress } from './core/properties';
import { reindexSearchDocuments, searchModule, type SearchService } from './core/search';
import { propertiesModule } from './core/properties';
import { stewardshipModule, type StructuredPropertyService } from './core/stewardship';
import { accessModule, type Access, type Policies } from './core/access';
import type { AccessTokens, ParsedTokenSigning, ServiceAccounts, TokenOptions, TokenSigningOptions } from './core/tokens';
import { checkTokenOptions, parseTokenSigning, serviceAccountsModule, tokensModule } from './core/tokens';
import { timeseriesModule, type TimeseriesService } from './core/timeseries';
import type { ChangeFeed } from './core/changes/service';
import { changesModule } from './core/changes/module';
import { errorKind, limitRepeats } from './core/logging/index';
import type { ChangeRetentionOptions } from './core/changes/retention';
import type { DeclaredJobs } from './core/module';
import { attachTelemetry, CatalogTelemetry, instrumentService, loadTracing, measuredCommit, measuredQuery } from './core/telemetry';
import {
  exportRecords,
  importRecords,
  InitialLoadSession,
  type ExportCounts,
  type ExportOptions,
  type ExportRecord,
  type ImportOptions,
} from './core/transfer';

export interface CatalogOptions {
  /** The storage/search adapter (required). */
  adapter: StorageAdapter;
  /** Secret for signing access tokens with HS256 (>= 32 bytes). A list rotates keys: the first signs, all verify. */
  tokenSigningKey?: string | readonly string[];
  /**
   * How access tokens are signed: `{ algorithm: 'EdDSA' | 'ES256' | 'HS256', keys }`, the first key signing and
   * every key verifying; a key is a PEM string (private: signs and verifies; public: verifies only), the secret
   * for HS256, or a JWK. EdDSA and ES256 publish their public keys (`catalog.tokens.jwks()`). Instead of `tokenSigningKey`.
   */
  tokenSigning?: TokenSigningOptions;
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
  /** Structured property definitions and their values on entities (`editValues`: many entities' values at once). */
  readonly properties: StructuredPropertyService;
  /** Search and aggregation: scroll, search, aggregate (scrollAcrossEntities, searchAcrossEntities, aggregateAcrossEntities). */
  readonly search: SearchService;
  /** Access tokens: create, list, revoke, verify, getMetadata, removeExpired, issueBootstrapToken, revocations, jwks. */
  readonly tokens: AccessTokens;
  /** Stored policies (MANAGE_POLICIES): create, update, remove, list, get. */
  readonly policies: Policies;
  /** Why an actor may or may not do something (`explain`), and what it may do on a resource (docs/access.md). */
  readonly access: Access;
  /** Service accounts (MANAGE_SERVICE_ACCOUNTS): create, list, get, disable, enable, remove (docs/access.md). */
  readonly serviceAccounts: ServiceAccounts;
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
   * `{ initial: true }`: an initial load into an empty catalog (refused with CONFLICT otherwise), its
   * search structures built once at the end; the calls pass the export's records in order and the one
   * holding its end record completes the load (docs/deploy.md).
   */
  importRecords(records: readonly unknown[], options?: ImportOptions): Promise<ExportCounts>;
  /** `importRecords` on behalf of an actor holding MANAGE_SYSTEM_OPERATIONS. */
  importRecordsAs(actor: Actor, records: readonly unknown[], options?: ImportOptions): Promise<ExportCounts>;
  /** Stops background work after its current batch and closes the adapter. */
  close(): Promise<void>;
}

/** Checks every option, listing each violation with its path; answers the checked token signing configuration. */
function validateOptions(options: CatalogOptions): ParsedTokenSigning | undefined {
  const violations: Violation[] = [];
  const o = options as unknown as Record<string, unknown>;
  if (!options || typeof options !== 'object') throw new CatalogError('INVALID_INPUT', 'createCatalog needs an options object');
  const adapter = o.adapter as Record<string, unknown> | undefined;
  if (!adapter || typeof adapter !== 'object' || typeof adapter.commit !== 'function' || typeof adapter.open !== 'function') {
    violations.push({ path: 'adapter', message: 'is required and must be a storage adapter (e.g. createSqliteAdapter())' });
  }
  const signing = parseTokenSigning(o, violations);
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
  return signing;
}

/** stderr; the same failure again and again (the storage gone) once per interval, then counted. */
function defaultErrorLog(): (error: unknown, where: string) => void {
  const log = limitRepeats((line) => process.stderr.write(line));
  return (error, where) =>
    log(`${where} ${errorKind(error)}`, `metacatalog: ${where}: ${error instanceof Error ? error.message : String(error)}`);
}

/** The pieces every later service is built from; createCatalog composes the public object on top. */
export function createCatalogContext(options: CatalogOptions): {
  ctx: CatalogContext;
  ready: Promise<void>;
  health: StorageHealth;
  telemetry: CatalogTelemetry;
  signing: ParsedTokenSigning | undefined;
  /** What each commit records besides the change (the `changes` and `history` options), for the write pipeline. */
  recording: { events: boolean; versions: boolean };
} {
  const signing = validateOptions(options);
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
  const onError = options.onError ?? defaultErrorLog();
  const authorizer = new Authorizer(adapter, options.superUsers ?? [], options.policies ?? [], () => options.changes?.enabled !== false);
  const jobs = new JobRunner(adapter, clock, { ...options.jobs, onError: (error, job) => onError(error, `job ${job.type} ${job.id}`) });
  const recording = { events: options.changes?.enabled !== false, versions: options.history?.enabled !== false };
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
    jobs,
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
  return { ctx, ready, health, telemetry, signing, recording };
}

/** How long `catalog.health()` waits for the storage to answer its probe before it says failing. */
const HEALTH_PROBE_MS = 1000;
/** The URN the health probe reads (nothing is stored under it: the read is one round trip). */
const PROBE_URN = 'urn:li:corpuser:__metacatalog_health_probe__';

/**
 * Whether the storage serves: the last failure of the storage itself (a full disk, a lost connection...)
 * and since when. A lost connection is cleared by the next call that succeeds; a failed write (a full
 * disk, a read-only file) only by the next write that succeeds, since reads may well work meanwhile.
 */
export class StorageHealth {
  private failure: { message: string; since: number; clearedByReads: boolean } | undefined;
  private probing: Promise<void> | undefined;

  constructor(private readonly clock: () => number) {}

  /** A call succeeded: a write clears any failure, a read one that a read can disprove. */
  succeeded(write: boolean): void {
    if (this.failure && (write || this.failure.clearedByReads)) this.failure = undefined;
  }

  /**
   * A call failed: returns what to throw. A failure of the storage becomes UNAVAILABLE and is recorded;
   * any other failure of a write is recorded too (a CatalogError is a refusal, not a storage fault).
   */
  failed(error: unknown, write: boolean): unknown {
    const unavailable = storageUnavailable(error);
    if (unavailable) {
      const connection = unavailableReason(unavailable) === 'connection';
      const words = storageFailure(unavailable.cause)?.words ?? unavailable.message;
      if (!this.failure || (!connection && this.failure.clearedByReads))
        this.failure = { message: words, since: this.failure?.since ?? this.clock(), clearedByReads: connection };
      return unavailable;
    }
    if (write && !isCatalogError(error))
      this.failure ??= { message: error instanceof Error ? error.message : String(error), since: this.clock(), clearedByReads: false };
    return error;
  }

  /** Asks the storage (`probe`, one read) whether it answers, at most one probe at a time, bounded in time. */
  async check(probe: () => Promise<unknown>): Promise<CatalogHealth> {
    this.probing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), HEALTH_PROBE_MS);
      });
      try {
        const outcome = await Promise.race([probe().catch(() => undefined), late]);
        if (outcome === 'late') this.failed(new CatalogError('UNAVAILABLE', 'no answer', { reason: 'connection' }), false);
      } finally {
        clearTimeout(timer);
        this.probing = undefined;
      }
    })();
    await this.probing;
    return this.current;
  }

  get current(): CatalogHealth {
    return this.failure ? { status: 'failing', storage: { error: this.failure.message, since: this.failure.since } } : { status: 'ok' };
  }
}

/** `catalog.health()`: ok, or failing with the storage's last error and since when. */
export type CatalogHealth = { status: 'ok' } | { status: 'failing'; storage: { error: string; since: number } };

/** The adapter's calls that write (their success clears a failed write). */
const WRITES = new Set(['commit', 'appendTimeseries']);
/** Calls outside a request's work: opening and closing are the catalog's own. */
const UNWATCHED = new Set(['close']);

/**
 * The adapter as the domain uses it: every committed batch stamped with the catalog's clock
 * (`WriteBatch.now`); every call's failure of the storage itself (a full disk, a lost connection, a
 * read-only file) turned into UNAVAILABLE, whichever adapter threw it; every outcome recorded for
 * `catalog.health()`; commits and queries timed and traced.
 */
function instrumented(adapter: StorageAdapter, clock: () => number, health: StorageHealth, telemetry: CatalogTelemetry): StorageAdapter {
  const wrapped: StorageAdapter = Object.create(adapter) as StorageAdapter;
  const methods = wrapped as unknown as Record<string, unknown>;
  for (const name of methodNames(adapter)) {
    const original = (adapter as unknown as Record<string, unknown>)[name];
    if (typeof original !== 'function' || UNWATCHED.has(name)) continue;
    const write = WRITES.has(name);
    // Made once per method, not per call: two closures fewer on every adapter call (each write makes two).
    const succeeded = (value: unknown): unknown => {
      health.succeeded(write);
      return value;
    };
    const failed = (error: unknown): never => {
      throw health.failed(error, write);
    };
    methods[name] = (...args: unknown[]): unknown => {
      let result: unknown;
      try {
        result = (original as (...a: unknown[]) => unknown).apply(adapter, args);
      } catch (error) {
        throw health.failed(error, write);
      }
      if (!(result instanceof Promise)) return result;
      return result.then(succeeded, failed);
    };
  }
  const { commit, search, aggregate } = wrapped;
  wrapped.commit = (batch) => measuredCommit(telemetry, batch, () => commit(batch.now === undefined ? { ...batch, now: clock() } : batch));
  wrapped.search = (request) => measuredQuery(telemetry, 'search', request, () => search(request));
  wrapped.aggregate = (request) => measuredQuery(telemetry, 'aggregate', request, () => aggregate(request));
  return wrapped;
}

/** Every method name of an object, its prototypes' included (an adapter may be a class instance). */
function methodNames(object: object): Set<string> {
  const names = new Set<string>();
  for (let o: object | null = object; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== 'constructor') names.add(name);
  }
  return names;
}

/** `catalog.health()`'s probe: one read of nothing, through the instrumented adapter. */
function probeOf(adapter: StorageAdapter): () => Promise<unknown> {
  return () => adapter.readEntities([PROBE_URN]);
}

/** Creates a catalog over one adapter. Synchronous; the adapter opens in the background and every call waits for it. */
export function createCatalog(options: CatalogOptions): Catalog {
  checkTokenOptions(options?.tokens);
  const { ctx, ready, health, telemetry, signing, recording } = createCatalogContext(options);
  // Spans need the optional `@opentelemetry/api`: loaded in the background, awaited by `ready()`.
  const tracing = loadTracing();
  // Each domain, as its module builds it: what it owns now, its service once what it depends on exists.
  const domains = {
    access: accessModule.build(ctx),
    entities: entitiesModule.build(ctx),
    timeseries: timeseriesModule.build(ctx),
    properties: propertiesModule.build(ctx),
    search: searchModule.build(ctx),
    stewardship: stewardshipModule.build(ctx),
    tokens: tokensModule.build(ctx),
    serviceAccounts: serviceAccountsModule.build(ctx),
    changes: changesModule.build(ctx),
  };
  // The one write path, built once with every domain's owners; every service below writes through it.
  const owners = Object.values(domains).flatMap((d) => ('owners' in d && d.owners ? [d.owners] : []));
  const pipeline = new WritePipeline(ctx, owners, recording);
  const policies = domains.access.createService({ pipeline });
  const access = domains.access.createAccess();
  const serviceAccounts = domains.serviceAccounts.createService({ pipeline });
  const timeseriesDomain = domains.timeseries.createService({ pipeline });
  const timeseries = timeseriesDomain.service;
  const ownProperties = domains.properties.createService({ pipeline });
  const search = domains.search.createService({ properties: ownProperties.service, filterFields: domains.properties.filterFields });
  const stewardshipDeps = { pipeline, search, properties: ownProperties.service };
  const properties = domains.stewardship.createService(stewardshipDeps);
  const tokens = domains.tokens.createService({ pipeline, ready, ...(signing ? { signing } : {}), tokens: options.tokens });
  const retentionOptions: ChangeRetentionOptions = {
    keepVersions: options.history?.keepVersions,
    versionsKeepDays: options.history?.keepDays,
    keepEvents: options.changes?.keepEvents,
    eventsKeepDays: options.changes?.keepDays,
    intervalMs: options.changes?.intervalMs,
  };
  const changeDomain = domains.changes.createService({ pipeline, retention: retentionOptions });
  const { feed: changes, retention } = changeDomain;
  const entities: EntityService = domains.entities.createService({
    pipeline,
    reads: owners.flatMap((o) => (o.read ? [o.read] : [])),
    deleters: [ownProperties.deleter, domains.tokens.deleter(tokens), domains.access.deleter(policies)],
  });
  // Every domain's background jobs, registered here and nowhere else, before the runner starts.
  const declared: DeclaredJobs[] = [
    domains.timeseries.jobs!(timeseriesDomain, { pipeline }),
    domains.properties.jobs!(ownProperties, { pipeline }),
    domains.stewardship.jobs!(properties, stewardshipDeps),
    domains.tokens.jobs!(tokens, { pipeline, ready }),
    domains.changes.jobs!(changeDomain, { pipeline, retention: retentionOptions }),
  ];
  for (const jobs of declared)
    for (const [type, job] of Object.entries(jobs)) ctx.jobs.register(type, job.run, job.onGiveUp ? { onGiveUp: job.onGiveUp } : {});
  const started = ready.then(() => ctx.jobs.start());
  started.catch((error: unknown) => ctx.reportError(error, 'starting background jobs'));
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
  const initialLoad = new InitialLoadSession();
  const runImport = async (records: readonly unknown[], importOptions?: ImportOptions): Promise<ExportCounts> => {
    await started;
    const counts = await importRecords(ctx, records, importOptions, initialLoad);
    if (counts.jobs) ctx.jobs.kick();
    return counts;
  };
  return attachTelemetry<Catalog>(telemetry, {
    registry: ctx.registry,
    entities: instrumentService(entities, 'entities', telemetry),
    properties: instrumentService(properties, 'properties', telemetry),
    search: instrumentService(search, 'search', telemetry),
    tokens: instrumentService(tokens, 'tokens', telemetry),
    policies: instrumentService(policies, 'policies', telemetry),
    access: instrumentService(access, 'access', telemetry),
    serviceAccounts: instrumentService(serviceAccounts, 'serviceAccounts', telemetry),
    timeseries: instrumentService(timeseries, 'timeseries', telemetry),
    changes: instrumentService(changes, 'changes', telemetry),
    now: () => ctx.clock(),
    ready: () => started.then(() => tokenHousekeeping).then(() => tracing),
    async health() {
      await ready;
      return health.check(probeOf(ctx.adapter));
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
    async importRecordsAs(actor, records, importOptions) {
      await ctx.authorizer.require(await ctx.principal(actor), 'MANAGE_SYSTEM_OPERATIONS');
      return runImport(records, importOptions);
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
