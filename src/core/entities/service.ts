import type { AspectChange, EntityPlan } from './writer';
import type { AspectMap, AspectName, AspectValues } from './aspect-types';
import type { Actor } from '../access/actor';
import type { Privilege } from '../access/privileges';
import { decodeCursor, encodeCursor, malformedCursor } from '../../adapter/cursor';
import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { entityTypeOf, parseUrn, urnProblem } from '../urn';
import { keptSystemMetadata, publicSystemMetadata, systemMetadataProblems, withKeptSystemMetadata } from './system-metadata';
import { applyJsonPatch, jsonPatchViolations, type ArrayPrimaryKeys, type JsonPatchOperation } from './json-patch';
import { applyProposals } from './proposals';
import type { ProposalOutcome } from './proposal-check';
import { builtInKeyAspect, keyAspectOf } from './key-aspects';

/** An aspect as a reader sees it. */
export interface AspectView {
  value: JsonObject;
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
  /**
   * Only when the read asked for it (`systemMetadata: true`): what the writer sent (`runId`,
   * `lastObserved`, `properties`, ...) with `version` and defaults; never the catalog's own bookkeeping.
   */
  systemMetadata?: JsonObject;
}

/** What an entity read returns: `aspects` limits the aspects read, `systemMetadata` adds each aspect's system metadata. */
export interface EntityReadOptions {
  aspects?: readonly string[];
  systemMetadata?: boolean;
}

/** One version of an aspect: `version` is the stored version number (1 on first write, +1 each write). */
export interface AspectVersionView {
  version: number;
  value: JsonObject;
  created: AuditStamp;
  lastModified: AuditStamp;
}

function toVersionView(aspect: { version: number; value: JsonObject; created: AuditStamp; lastModified: AuditStamp }): AspectVersionView {
  return { version: aspect.version, value: aspect.value, created: aspect.created, lastModified: aspect.lastModified };
}

export interface EntityView {
  urn: string;
  entityType: string;
  aspects: Record<string, AspectView>;
}

/** Entities per page of `scroll` when the caller names no count (as the REST listing has always answered). */
export const DEFAULT_SCROLL_COUNT = 10;

export interface EntityScrollPage {
  entities: EntityView[];
  /** Pass it back for the next page; absent on the last page. */
  scrollId?: string;
}

export interface EntityUpsert {
  urn: string;
  /** Each aspect with the type `AspectMap` gives it (hosts extend the map for their own aspects). */
  aspects: AspectValues;
  /**
   * System metadata per aspect name (`runId`, `lastRunId`, `lastObserved`, `pipelineName`,
   * `registryName`, `registryVersion`, `properties`), kept with the aspect and read back with
   * `systemMetadata: true`. `version`, `aspectCreated` and `aspectModified` are accepted and ignored.
   */
  systemMetadata?: Readonly<Record<string, JsonObject>>;
  /**
   * Write only when absent, checked in the same atomic step as the write: `aspect` refuses (CONFLICT)
   * an aspect the entity already has; `entity` refuses an entity that already exists.
   */
  onlyIfAbsent?: 'aspect' | 'entity';
}

/** Options of a one-aspect write (`upsertAspect`): see `EntityUpsert`. */
export interface AspectWriteOptions {
  systemMetadata?: JsonObject;
  onlyIfAbsent?: 'aspect' | 'entity';
}

/** Writes of an aspect that a domain service owns (e.g. `propertyDefinition`) go to that service. */
export type AspectWriteRoute = (actor: Actor, urn: string, value: JsonObject) => Promise<unknown>;
/** Patches of an aspect that a domain service owns (structured properties: keyed by property URN). */
export type AspectPatchRoute = (
  actor: Actor,
  urn: string,
  operations: readonly JsonPatchOperation[],
  options: { arrayPrimaryKeys?: ArrayPrimaryKeys },
) => Promise<unknown>;
/** Appends one row of a timeseries aspect (the timeseries service). */
export type TimeseriesAppendRoute = (actor: Actor, urn: string, aspect: string, row: JsonObject) => Promise<unknown>;
/** Deletes of an entity type that a domain service owns (e.g. structured properties: soft unless hard). */
export type EntityDeleteRoute = (actor: Actor, urn: string, options: { hard: boolean }) => Promise<unknown>;
/**
 * The reported deletion of an entity type a domain service owns (structured properties): decides soft
 * or hard, counts what is affected, writes nothing on a dry run.
 */
export type EntityDeletionRoute = (actor: Actor, urn: string, options: { hard: boolean; dryRun: boolean }) => Promise<EntityDeletion>;

/**
 * A domain service that owns an aspect and can write it as part of a bulk write of whole entities
 * (structured properties), atomically with the entity's other aspects.
 */
export interface BulkAspectPlanner {
  /**
   * Checks the aspect's values of a bulk write and authorizes the actor for them; adds every violation
   * (paths from `prefix(i)`, the item's `/aspects/<aspect>`). Returns the planner of one entity's change,
   * called inside each chunk's unit of work with the entity as stored then and the commit's time.
   */
  prepare(
    actor: Actor,
    items: ReadonlyArray<{ index: number; urn: string; value: unknown }>,
    prefix: (index: number) => string,
    violations: Violation[],
  ): Promise<(urn: string, current: StoredEntity | undefined, violations: Violation[], now: number) => Promise<AspectChange | undefined>>;
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

/** Why a write that is only for absent aspects or entities is refused; undefined when it may go ahead. */
function presenceConflict(
  urn: string,
  aspect: string,
  current: StoredEntity | undefined,
  onlyIfAbsent: 'aspect' | 'entity',
): string | undefined {
  if (!current) return undefined;
  if (onlyIfAbsent === 'entity') return `${urn} exists already (the write only creates an entity that does not exist)`;
  if (current.aspects[aspect] !== undefined)
    return `${urn} has a "${aspect}" aspect already (the write only creates an aspect that does not exist)`;
  return undefined;
}

/** Shapes what readers see (e.g. hides values of soft-deleted or superseded property definitions). */
export type ReadTransform = (entities: StoredEntity[]) => Promise<StoredEntity[]>;

const BULK_CHUNK = 2000;
/** Entities one bulk write takes (they are validated together before the first chunk is written). */
export const MAX_BULK_ITEMS = 100_000;

function toView(entity: StoredEntity, withSystemMetadata = false): EntityView {
  const aspects: Record<string, AspectView> = {};
  for (const [name, a] of Object.entries(entity.aspects)) {
    aspects[name] = { value: a.value, version: a.version, created: a.created, lastModified: a.lastModified };
    if (withSystemMetadata) aspects[name].systemMetadata = publicSystemMetadata(a);
  }
  return { urn: entity.urn, entityType: entity.entityType, aspects };
}

/**
 * Generic entities and aspects: read, write (validated against each aspect's schema, audited,
 * atomic across aspects), delete. Aspects owned by a domain service are routed to it.
 */
export class EntityService {
  private readonly writeRoutes = new Map<string, AspectWriteRoute>();
  private readonly deleteRoutes = new Map<string, EntityDeleteRoute>();
  private readonly deletionRoutes = new Map<string, { route: EntityDeletionRoute; softByDefault: boolean }>();
  private readonly bulkPlanners = new Map<string, BulkAspectPlanner>();
  private readonly patchRoutes = new Map<string, AspectPatchRoute>();
  private timeseriesAppend: TimeseriesAppendRoute | undefined;
  private readonly ownerPrivileges = new Map<string, Privilege>();
  private readonly readTransforms: ReadTransform[] = [];

  constructor(private readonly ctx: CatalogContext) {}

  /** For domain services: take an owned aspect in bulk writes of whole entities (`upsertMany`). */
  routeBulkAspect(aspect: string, planner: BulkAspectPlanner): void {
    this.bulkPlanners.set(aspect, planner);
  }

  /**
   * For domain services: own the writes of an aspect. A route that refuses throws a CatalogError.
   * `privilege`: what a write needs, so that a batch of change proposals is refused before its first write.
   */
  routeAspectWrites(aspect: string, route: AspectWriteRoute, options: { privilege?: Privilege } = {}): void {
    this.writeRoutes.set(aspect, route);
    if (options.privilege) this.ownerPrivileges.set(aspect, options.privilege);
  }

  /** The privilege a write of the aspect needs when a domain service owns it (undefined: EDIT_ENTITY, or the service decides alone). */
  ownerPrivilege(entityType: string, aspect: string): Privilege | undefined {
    return this.ownerPrivileges.get(`${entityType}.${aspect}`) ?? this.ownerPrivileges.get(aspect);
  }

  /** For the timeseries service: how a change proposal of a timeseries aspect appends its row. */
  routeTimeseriesAppends(append: TimeseriesAppendRoute): void {
    this.timeseriesAppend = append;
  }

  /** Appends one row of a timeseries aspect (change proposals); UNSUPPORTED when no timeseries service is wired. */
  async appendTimeseriesRow(actor: Actor, urn: string, aspect: string, row: JsonObject): Promise<void> {
    if (!this.timeseriesAppend) throw new CatalogError('UNSUPPORTED', 'timeseries rows cannot be appended here');
    await this.timeseriesAppend(actor, urn, aspect, row);
  }

  /** For domain services: own the JSON Patch of an aspect (`patchAspect`). */
  routeAspectPatches(aspect: string, route: AspectPatchRoute): void {
    this.patchRoutes.set(aspect, route);
  }

  routeEntityDeletes(entityType: string, route: EntityDeleteRoute): void {
    this.deleteRoutes.set(entityType, route);
  }

  /** For domain services: own the reported deletion (`deleteEntity`) of an entity type, and say whether it is soft unless `hard`. */
  routeEntityDeletions(entityType: string, route: EntityDeletionRoute, options: { softByDefault: boolean }): void {
    this.deletionRoutes.set(entityType, { route, softByDefault: options.softByDefault });
  }

  addReadTransform(transform: ReadTransform): void {
    this.readTransforms.push(transform);
  }

  /** Reads entities through the read transforms (no authorization: callers are domain services). */
  async readVisible(urns: readonly string[], aspectNames?: readonly string[]): Promise<StoredEntity[]> {
    let entities = await this.ctx.adapter.readEntities(urns, aspectNames);
    for (const transform of this.readTransforms) entities = await transform(entities);
    return entities;
  }

  async get(actor: Actor, urn: string, options: EntityReadOptions = {}): Promise<EntityView | undefined> {
    await this.ctx.authenticate(actor);
    parseUrn(urn);
    const [entity] = await this.readVisible([urn], options.aspects);
    return entity ? toView(entity, options.systemMetadata === true) : undefined;
  }

  /**
   * Whether the entity (or, with `aspect`, that aspect of it) exists. A soft-deleted entity
   * (`status.removed`) counts as absent unless `includeSoftDeleted`.
   */
  async exists(actor: Actor, urn: string, options: { aspect?: string; includeSoftDeleted?: boolean } = {}): Promise<boolean> {
    await this.ctx.authenticate(actor);
    const { entityType } = parseUrn(urn);
    if (options.aspect !== undefined) this.ctx.registry.requireAspectOf(entityType, options.aspect);
    const names = options.aspect !== undefined ? [options.aspect, 'status'] : undefined;
    const [entity] = await this.readVisible([urn], names);
    if (!entity || Object.keys(entity.aspects).length === 0) return false;
    if (options.aspect !== undefined && entity.aspects[options.aspect] === undefined) return false;
    return options.includeSoftDeleted === true || entity.aspects.status?.value.removed !== true;
  }

  /** Batch read, in the order given; unknown URNs are left out. */
  async getMany(actor: Actor, urns: readonly string[], options: EntityReadOptions = {}): Promise<EntityView[]> {
    await this.ctx.authenticate(actor);
    const violations: Violation[] = [];
    urns.forEach((urn, i) => {
      const problem = urnProblem(urn);
      if (problem) violations.push({ path: `/urns/${i}`, message: problem });
    });
    throwIfViolations(violations, 'invalid URNs');
    return (await this.readVisible(urns, options.aspects)).map((e) => toView(e, options.systemMetadata === true));
  }

  /**
   * Versions of one aspect, newest first: the current one, then the kept earlier ones (docs/changes.md).
   * `before`: only versions with a lower number (paging). Needs what reading the entity needs.
   */
  async history(
    actor: Actor,
    urn: string,
    aspect: AspectName,
    options: { limit?: number; before?: number } = {},
  ): Promise<AspectVersionView[]> {
    await this.ctx.authenticate(actor);
    const parsed = parseUrn(urn);
    this.ctx.registry.requireAspectOf(parsed.entityType, aspect);
    const limit = options.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${String(limit)}`);
    const before = options.before;
    if (before !== undefined && (!Number.isInteger(before) || before < 1))
      throw new CatalogError('INVALID_INPUT', `before must be a positive integer version, got ${String(before)}`);
    const [entity] = await this.readVisible([urn], [aspect]);
    if (!entity) return [];
    const out: AspectVersionView[] = [];
    const current = entity.aspects[aspect];
    if (current && (before === undefined || current.version < before)) out.push(toVersionView(current));
    if (out.length < limit && this.ctx.adapter.readAspectVersions) {
      const top = current ? current.version : Number.POSITIVE_INFINITY;
      const kept = await this.ctx.adapter.readAspectVersions({
        urn,
        aspectName: aspect,
        beforeVersion: Math.min(before ?? top, top),
        limit: limit - out.length,
      });
      out.push(...kept.map(toVersionView));
    }
    return out;
  }

  /**
   * One version by number, numbered like DataHub: 0 is the latest; N >= 1 is the N-th value ever written
   * (DataHub copies the replaced latest to version max + 1, so 1 is the oldest), which is the stored
   * `version` of that value here. Undefined when it is not kept (retention) or never existed.
   */
  async aspectVersion(actor: Actor, urn: string, aspect: AspectName, version: number): Promise<AspectVersionView | undefined> {
    if (!Number.isInteger(version) || version < 0)
      throw new CatalogError('INVALID_INPUT', `version must be a non-negative integer (0 is the latest), got ${String(version)}`);
    if (version === 0) return (await this.history(actor, urn, aspect, { limit: 1 }))[0];
    const [found] = await this.history(actor, urn, aspect, { before: version + 1, limit: 1 });
    return found?.version === version ? found : undefined;
  }

  async getAspect(
    actor: Actor,
    urn: string,
    aspect: AspectName,
    options: Pick<EntityReadOptions, 'systemMetadata'> = {},
  ): Promise<AspectView | undefined> {
    const parsed = parseUrn(urn);
    this.ctx.registry.requireAspectOf(parsed.entityType, aspect);
    const entity = await this.get(actor, urn, { aspects: [aspect], ...options });
    return entity?.aspects[aspect];
  }

  /**
   * Writes one aspect. Aspects owned by a domain service (definitions, values, status of a property...)
   * go through it; for those, `onlyIfAbsent` is checked just before the service writes, and
   * `systemMetadata` is not kept (the service keeps its own).
   */
  async upsertAspect<K extends AspectName>(
    actor: Actor,
    urn: string,
    aspect: K,
    value: AspectMap[K],
    options: AspectWriteOptions = {},
  ): Promise<EntityView> {
    await this.ctx.authenticate(actor);
    // Malformed URNs and unknown types or aspects are reported by the bulk validation below, with JSON paths.
    const entityType = urnProblem(urn) === undefined ? parseUrn(urn).entityType : undefined;
    const owned =
      entityType !== undefined &&
      this.ctx.registry.hasEntityType(entityType) &&
      this.ctx.registry.entityType(entityType).aspects.includes(aspect);
    const route = owned ? (this.writeRoutes.get(`${entityType}.${aspect}`) ?? this.writeRoutes.get(aspect)) : undefined;
    if (route) {
      if (options.systemMetadata !== undefined)
        throwIfViolations(systemMetadataProblems(options.systemMetadata, '/systemMetadata'), `invalid write to ${urn}`);
      if (options.onlyIfAbsent) {
        const [current] = await this.ctx.adapter.readEntities([urn], options.onlyIfAbsent === 'aspect' ? [aspect] : undefined);
        const problem = presenceConflict(urn, aspect, current, options.onlyIfAbsent);
        if (problem)
          throw new CatalogError('CONFLICT', problem, {
            details: [{ path: options.onlyIfAbsent === 'aspect' ? `/aspects/${aspect}` : '/urn', message: problem }],
          });
      }
      await route(actor, urn, value as unknown as JsonObject);
      const [entity] = await this.readVisible([urn]);
      if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
      return toView(entity);
    }
    const item: EntityUpsert = { urn, aspects: { [aspect]: value } };
    if (options.systemMetadata !== undefined) item.systemMetadata = { [aspect]: options.systemMetadata };
    if (options.onlyIfAbsent) item.onlyIfAbsent = options.onlyIfAbsent;
    const [view] = await this.upsertMany(actor, [item]);
    return view!;
  }

  /**
   * Applies an RFC 6902 JSON Patch to one aspect (an absent aspect patches `{}`) and writes the result,
   * validated as a normal upsert of the aspect; nothing is written when an operation fails (a failed
   * `test` is CONFLICT). `arrayPrimaryKeys` addresses a top-level array as a map keyed by the named
   * members of its elements (docs/structured-properties.md, "Any aspect"). `structuredProperties` follows the values patch
   * (`catalog.properties.patchValues`: `/properties/<property urn>`, removing an absent one is a no-op).
   * Generic aspects are read, patched and written in one unit of work; an aspect owned by a domain
   * service (a property definition) is patched from its current value and written through that service.
   */
  async patchAspect(
    actor: Actor,
    urn: string,
    aspectName: string,
    operations: readonly JsonPatchOperation[],
    options: { arrayPrimaryKeys?: ArrayPrimaryKeys } = {},
  ): Promise<EntityView> {
    await this.ctx.authenticate(actor);
    const { entityType } = parseUrn(urn);
    const spec = this.ctx.registry.requireAspectOf(entityType, aspectName);
    if (spec.timeseries) {
      const message = `"${aspectName}" is a timeseries aspect: rows are appended, never patched`;
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'aspect', message }] });
    }
    const describe = `${aspectName} of ${urn}`;
    const patchRoute = this.patchRoutes.get(aspectName);
    if (patchRoute) {
      await patchRoute(actor, urn, operations, options);
    } else if (this.writeRoutes.has(`${entityType}.${aspectName}`) || this.writeRoutes.has(aspectName)) {
      const [entity] = await this.readVisible([urn], [aspectName]);
      const patched = applyJsonPatch(entity?.aspects[aspectName]?.value, operations, { ...options, describe });
      return this.upsertAspect(actor, urn, aspectName as AspectName, patched as unknown as AspectMap[AspectName]);
    } else {
      await this.ctx.authorizer.require(await this.ctx.principal(actor), 'EDIT_ENTITY');
      await this.ctx.writer.write(actor, [urn], (current) => {
        const patched = applyJsonPatch(current.get(urn)?.aspects[aspectName]?.value, operations, { ...options, describe });
        throwIfViolations(this.ctx.registry.validateAspect(aspectName, patched), `the patched ${describe} is not valid`);
        return { entities: [{ urn, put: { [aspectName]: { value: patched } } }] };
      });
    }
    const [entity] = await this.readVisible([urn]);
    if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
    return toView(entity);
  }

  /**
   * JSON Patches of several entities' aspects in one atomic step: each item patches one aspect
   * (`arrayPrimaryKeys` as in `patchAspect`); items on the same aspect apply in order. Only aspects the
   * generic rules write can be patched together: `structuredProperties` and aspects a service owns are
   * refused here (patch each with `patchAspect`). Every item is checked first, every patched document is
   * validated, and nothing is written when one fails (violations at `/<index>/...`; a failed `test` is
   * CONFLICT). Needs EDIT_ENTITY. Answers the patched entities, in the order of their first item.
   */
  async patchMany(
    actor: Actor,
    items: ReadonlyArray<{ urn: string; aspect: string; patch: readonly JsonPatchOperation[]; arrayPrimaryKeys?: ArrayPrimaryKeys }>,
  ): Promise<EntityView[]> {
    const principal = await this.ctx.principal(actor);
    if (!Array.isArray(items))
      throw new CatalogError('INVALID_INPUT', 'the patches must be a list of { urn, aspect, patch }', {
        details: [{ path: '/', message: 'must be an array' }],
      });
    const violations: Violation[] = [];
    items.forEach((item, i) => {
      const problem = urnProblem(item?.urn);
      if (problem) return void violations.push({ path: `/${i}/urn`, message: problem });
      const { entityType } = parseUrn(item.urn);
      const spec = this.ctx.registry.hasEntityType(entityType) ? this.ctx.registry.entityType(entityType) : undefined;
      const path = `/${i}/aspect`;
      if (!spec) violations.push({ path: `/${i}/urn`, message: `unknown entity type "${entityType}"` });
      else if (!spec.aspects.includes(item.aspect))
        violations.push({
          path,
          message: `entity type "${entityType}" has no aspect "${item.aspect}"; its aspects: ${spec.aspects.join(', ')}`,
        });
      else if (this.ctx.registry.aspect(item.aspect).timeseries)
        violations.push({ path, message: `"${item.aspect}" is a timeseries aspect: rows are appended, never patched` });
      else if (
        this.bulkPlanners.has(item.aspect) ||
        this.patchRoutes.has(item.aspect) ||
        this.writeRoutes.has(`${entityType}.${item.aspect}`) ||
        this.writeRoutes.has(item.aspect)
      ) {
        violations.push({
          path,
          message: `"${item.aspect}" follows its own rules and is not patched in a batch: patch it alone (patchAspect)`,
        });
      }
      violations.push(...jsonPatchViolations(item?.patch, `/${i}/patch`));
    });
    throwIfViolations(violations, 'invalid patches');
    await this.ctx.authorizer.require(principal, 'EDIT_ENTITY');
    const urns = [...new Set(items.map((item) => item.urn))];
    const after = await this.ctx.writer.write(actor, urns, (current) => {
      const patched = new Map<string, Record<string, JsonObject>>();
      const problems: Violation[] = [];
      items.forEach((item, i) => {
        const ofEntity = patched.get(item.urn) ?? {};
        const base = ofEntity[item.aspect] ?? current.get(item.urn)?.aspects[item.aspect]?.value;
        const value = applyJsonPatch(base, item.patch, {
          describe: `${item.aspect} of ${item.urn}`,
          prefix: `/${i}/patch`,
          ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}),
        });
        problems.push(...this.ctx.registry.validateAspect(item.aspect, value, `/${i}/value`));
        patched.set(item.urn, { ...ofEntity, [item.aspect]: value });
      });
      throwIfViolations(problems, 'the patched aspects are not valid');
      return {
        entities: [...patched].map(([urn, aspects]) => ({
          urn,
          put: Object.fromEntries(Object.entries(aspects).map(([name, value]) => [name, { value }])),
        })),
      };
    });
    return urns.flatMap((urn) => {
      const entity = after.get(urn);
      return entity ? [toView(entity)] : [];
    });
  }

  /**
   * Applies metadata change proposals (UPSERT, CREATE, CREATE_ENTITY, PATCH, DELETE of one aspect each):
   * all checked first, nothing written when one is bad (every violation named by the proposal's index,
   * `<prefix>/<i>/...`); then applied in order, runs of upserts through the bulk path
   * (docs/datahub-clients.md).
   */
  async applyProposals(actor: Actor, proposals: readonly unknown[], options: { prefix?: string } = {}): Promise<ProposalOutcome[]> {
    return applyProposals(this.ctx, this, actor, proposals, options);
  }

  /**
   * The key aspect of an entity that exists (`datasetKey { platform, name, origin }`,
   * `structuredPropertyKey { id }`, ...), derived from its URN; also of the entity types and data types
   * the catalog knows (`entityTypeKey`, `dataTypeKey`). Undefined when the entity does not exist or its
   * type has no key aspect here.
   */
  async keyAspect(actor: Actor, urn: string): Promise<{ name: string; value: JsonObject } | undefined> {
    await this.ctx.authenticate(actor);
    const parsed = parseUrn(urn);
    const builtIn = builtInKeyAspect(this.ctx.registry, parsed);
    if (builtIn) return builtIn;
    if (!this.ctx.registry.hasEntityType(parsed.entityType)) return undefined;
    const key = keyAspectOf(parsed);
    if (!key) return undefined;
    const [entity] = await this.readVisible([urn]);
    return entity ? key : undefined;
  }

  /** How writes of an aspect are made: generically, by a domain service within bulk writes, or by a domain service alone. */
  aspectOwnership(entityType: string, aspect: string): 'generic' | 'bulk' | 'routed' {
    if (this.bulkPlanners.has(aspect)) return 'bulk';
    if (this.writeRoutes.has(`${entityType}.${aspect}`) || this.writeRoutes.has(aspect)) return 'routed';
    return 'generic';
  }

  /** The violations of an aspect value against the aspect's schema (paths under `prefix`). */
  validateAspectValue(aspect: string, value: unknown, prefix = ''): Violation[] {
    return this.ctx.registry.validateAspect(aspect, value, prefix);
  }

  /** Writes several aspects of one entity atomically. */
  async upsertAspects(actor: Actor, urn: string, aspects: AspectValues): Promise<EntityView> {
    const [view] = await this.upsertMany(actor, [{ urn, aspects }]);
    return view!;
  }

  /**
   * Bulk write: every item validated first (nothing is written when one is bad; the error lists every
   * violation with its index), then written in atomic chunks of `BULK_CHUNK` (2,000) entities.
   */
  async upsertMany(actor: Actor, items: readonly EntityUpsert[], options: { systemMetadata?: boolean } = {}): Promise<EntityView[]> {
    const principal = await this.ctx.principal(actor);
    if (!Array.isArray(items))
      throw new CatalogError('INVALID_INPUT', 'the entities must be a list of { urn, aspects }', {
        details: [{ path: '/', message: 'must be an array' }],
      });
    if (items.length > MAX_BULK_ITEMS) {
      throw new CatalogError('INVALID_INPUT', `a bulk write takes at most ${MAX_BULK_ITEMS} entities, got ${items.length}: split it`, {
        details: [{ path: '/', message: `must hold at most ${MAX_BULK_ITEMS} entities` }],
      });
    }
    const violations: Violation[] = [];
    const single = items.length === 1;
    const prefix = (i: number) => (single ? '' : `/${i}`);
    items.forEach((item, i) => this.validateUpsert(item, prefix(i), violations));
    // Aspects a domain service owns (structured properties) are checked, authorized and planned by it.
    const owned = new Map<string, Array<{ index: number; urn: string; value: unknown }>>();
    let generic = false;
    items.forEach((item, index) => {
      for (const [name, value] of Object.entries((item?.aspects ?? {}) as Record<string, unknown>)) {
        if (!this.bulkPlanners.has(name)) generic = true;
        else {
          let entries = owned.get(name);
          if (!entries) owned.set(name, (entries = []));
          entries.push({ index, urn: item.urn, value });
        }
      }
    });
    if (generic || owned.size === 0) await this.ctx.authorizer.require(principal, 'EDIT_ENTITY');
    const planners = new Map<string, Awaited<ReturnType<BulkAspectPlanner['prepare']>>>();
    for (const [name, entries] of owned) {
      planners.set(name, await this.bulkPlanners.get(name)!.prepare(principal, entries, (i) => `${prefix(i)}/aspects/${name}`, violations));
    }
    throwIfViolations(violations, single ? `invalid write to ${items[0]?.urn}` : 'invalid entity writes');
    const views: EntityView[] = [];
    for (let start = 0; start < items.length; start += BULK_CHUNK) {
      const chunk = items.slice(start, start + BULK_CHUNK);
      const byUrn = new Map<string, Record<string, JsonObject>>();
      const metadataOf = new Map<string, JsonObject | undefined>();
      const conditions: Array<{ index: number; urn: string; names: string[]; onlyIfAbsent: 'aspect' | 'entity' }> = [];
      chunk.forEach((item, i) => {
        byUrn.set(item.urn, { ...(byUrn.get(item.urn) ?? {}), ...(item.aspects as Record<string, JsonObject>) });
        if (item.systemMetadata)
          for (const name of Object.keys(item.aspects))
            metadataOf.set(`${item.urn}\n${name}`, keptSystemMetadata(item.systemMetadata[name]));
        if (item.onlyIfAbsent)
          conditions.push({ index: start + i, urn: item.urn, names: Object.keys(item.aspects), onlyIfAbsent: item.onlyIfAbsent });
      });
      const after = await this.ctx.writer.write(actor, [...byUrn.keys()], async (current, now) => {
        const problems: Violation[] = [];
        for (const c of conditions) {
          for (const name of c.onlyIfAbsent === 'aspect' ? c.names : [c.names[0]!]) {
            const problem = presenceConflict(c.urn, name, current.get(c.urn), c.onlyIfAbsent);
            if (problem)
              problems.push({
                path: c.onlyIfAbsent === 'aspect' ? `${prefix(c.index)}/aspects/${name}` : `${prefix(c.index)}/urn`,
                message: problem,
              });
          }
        }
        if (problems.length)
          throw new CatalogError('CONFLICT', problems.length === 1 ? problems[0]!.message : 'entities or aspects exist already', {
            details: problems,
          });
        const entities: EntityPlan[] = [];
        for (const [urn, aspects] of byUrn) {
          const put: Record<string, AspectChange> = {};
          for (const [name, value] of Object.entries(aspects)) {
            const planner = planners.get(name);
            const kept = metadataOf.get(`${urn}\n${name}`);
            if (!planner) {
              const systemMetadata = withKeptSystemMetadata(undefined, kept);
              put[name] = systemMetadata ? { value, systemMetadata } : { value };
            } else {
              const change = await planner(urn, current.get(urn), problems, now);
              if (change) {
                const systemMetadata = withKeptSystemMetadata(change.systemMetadata, kept);
                put[name] = systemMetadata ? { value: change.value, systemMetadata } : { value: change.value };
              }
            }
          }
          entities.push({ urn, put });
        }
        // What depends on the stored state (immutable values) is checked again under the commit's read.
        throwIfViolations(problems, single ? `invalid write to ${items[0]?.urn}` : 'invalid entity writes');
        return { entities };
      });
      for (const urn of byUrn.keys()) {
        const entity = after.get(urn);
        if (entity) views.push(toView(entity, options.systemMetadata === true));
      }
    }
    return views;
  }

  private validateUpsert(item: EntityUpsert, prefix: string, violations: Violation[]): void {
    const problem = urnProblem(item?.urn);
    if (problem) {
      violations.push({ path: `${prefix}/urn`, message: problem });
      return;
    }
    const entityType = entityTypeOf(item.urn);
    if (!this.ctx.registry.hasEntityType(entityType)) {
      violations.push({
        path: `${prefix}/urn`,
        message: `unknown entity type "${entityType}"; known types: ${this.ctx.registry.entityTypeNames().join(', ')}`,
      });
      return;
    }
    const spec = this.ctx.registry.entityType(entityType);
    if (!item.aspects || typeof item.aspects !== 'object' || Array.isArray(item.aspects)) {
      violations.push({ path: `${prefix}/aspects`, message: 'must be an object of aspect name to value' });
      return;
    }
    const names = Object.keys(item.aspects);
    if (names.length === 0) violations.push({ path: `${prefix}/aspects`, message: 'names no aspect' });
    if (item.onlyIfAbsent !== undefined && item.onlyIfAbsent !== 'aspect' && item.onlyIfAbsent !== 'entity') {
      violations.push({ path: `${prefix}/onlyIfAbsent`, message: 'must be "aspect" or "entity"' });
    }
    if (item.systemMetadata !== undefined) {
      if (item.systemMetadata === null || typeof item.systemMetadata !== 'object' || Array.isArray(item.systemMetadata)) {
        violations.push({ path: `${prefix}/systemMetadata`, message: 'must be an object of aspect name to system metadata' });
      } else {
        for (const [name, metadata] of Object.entries(item.systemMetadata)) {
          if (!names.includes(name))
            violations.push({
              path: `${prefix}/systemMetadata/${name}`,
              message: `names no aspect of this write; its aspects: ${names.join(', ')}`,
            });
          else violations.push(...systemMetadataProblems(metadata, `${prefix}/systemMetadata/${name}`));
        }
      }
    }
    for (const name of names) {
      const path = `${prefix}/aspects/${name}`;
      if (!this.ctx.registry.hasAspect(name)) {
        violations.push({ path, message: `unknown aspect "${name}"` });
      } else if (!spec.aspects.includes(name)) {
        violations.push({ path, message: `entity type "${entityType}" has no aspect "${name}"; its aspects: ${spec.aspects.join(', ')}` });
      } else if (this.ctx.registry.aspect(name).timeseries) {
        violations.push({ path, message: `"${name}" is a timeseries aspect: append rows with catalog.timeseries.append` });
      } else if (this.bulkPlanners.has(name)) {
        // Checked by the service that owns it (BulkAspectPlanner.prepare).
      } else if (this.writeRoutes.has(`${entityType}.${name}`) || this.writeRoutes.has(name)) {
        violations.push({ path, message: `"${name}" is managed by its own API; write it alone with upsertAspect` });
      } else {
        violations.push(...this.ctx.registry.validateAspect(name, (item.aspects as Record<string, unknown>)[name], path));
      }
    }
  }

  /**
   * Brings a soft-deleted entity back (`status.removed` false): its aspects and, for a structured
   * property, every value it had are visible again. NOT_FOUND when the entity does not exist; an entity
   * that is not soft-deleted is left as it is.
   */
  async restore(actor: Actor, urn: string): Promise<EntityView> {
    await this.ctx.authenticate(actor);
    const { entityType } = parseUrn(urn);
    this.ctx.registry.requireAspectOf(entityType, 'status');
    const [entity] = await this.ctx.adapter.readEntities([urn], ['status']);
    if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
    return this.upsertAspect(actor, urn, 'status', { removed: false });
  }

  /** Deletes one aspect; false when it was absent. Deleting the last aspect deletes the entity. */
  async deleteAspect(actor: Actor, urn: string, aspect: string): Promise<boolean> {
    return (await this.deleteAspects(actor, urn, [aspect])).length > 0;
  }

  /**
   * Deletes several aspects of one entity in one atomic step; returns the names that were there.
   * Every name is checked first (nothing is deleted when one is refused). Deleting the last aspect
   * deletes the entity.
   */
  async deleteAspects(actor: Actor, urn: string, aspects: readonly string[]): Promise<string[]> {
    await this.ctx.authorizer.require(await this.ctx.principal(actor), 'EDIT_ENTITY');
    const parsed = parseUrn(urn);
    const violations: Violation[] = [];
    aspects.forEach((aspect, i) => {
      const path = aspects.length === 1 ? '/aspect' : `/aspects/${i}`;
      const spec = this.ctx.registry.hasEntityType(parsed.entityType) ? this.ctx.registry.entityType(parsed.entityType) : undefined;
      if (!spec) violations.push({ path: '/urn', message: `unknown entity type "${parsed.entityType}"` });
      else if (!spec.aspects.includes(aspect))
        violations.push({
          path,
          message: `entity type "${parsed.entityType}" has no aspect "${aspect}"; its aspects: ${spec.aspects.join(', ')}`,
        });
      else if (this.writeRoutes.has(`${parsed.entityType}.${aspect}`) || this.writeRoutes.has(aspect)) {
        violations.push({ path, message: `"${aspect}" is managed by its own API and cannot be deleted directly` });
      }
    });
    throwIfViolations(violations, aspects.length === 1 ? violations[0]?.message : `cannot delete these aspects of ${urn}`);
    let existing: string[] = [];
    await this.ctx.writer.write(actor, [urn], (current) => {
      const entity = current.get(urn);
      existing = [...new Set(aspects)].filter((name) => entity?.aspects[name] !== undefined);
      return { entities: existing.length ? [{ urn, delete: existing }] : [] };
    });
    return existing;
  }

  /**
   * Deletes an entity with its aspects, search document and timeseries rows; false when it did not
   * exist. Entity types owned by a domain service decide themselves (a structured property is
   * soft-deleted unless `hard`).
   */
  async delete(actor: Actor, urn: string, options: { hard?: boolean } = {}): Promise<boolean> {
    await this.ctx.authenticate(actor);
    const parsed = parseUrn(urn);
    this.ctx.registry.entityType(parsed.entityType);
    const route = this.deleteRoutes.get(parsed.entityType);
    if (route) {
      await route(actor, urn, { hard: options.hard === true });
      return true;
    }
    await this.ctx.authorizer.require(actor, 'EDIT_ENTITY');
    let existed = false;
    await this.ctx.writer.write(actor, [urn], (current) => {
      existed = current.has(urn);
      return { entities: existed ? [{ urn, deleteEntity: true }] : [] };
    });
    return existed;
  }

  /**
   * Deletes an entity and reports what was done (the command line's `delete`, the REST DELETE with a
   * report). Soft when `hard` is false: `status { removed: true }`, reversible, for every entity type
   * that carries `status`; hard when it is true: the entity goes (a structured property's values are
   * then removed by background work). Left out, the entity is removed (a structured property
   * included, as the platform does); `hard: false` soft-deletes. `dryRun` authorizes, checks and
   * counts as the real call would, and writes nothing. NOT_FOUND when the entity does not exist.
   */
  async deleteEntity(actor: Actor, urn: string, options: { hard?: boolean; dryRun?: boolean } = {}): Promise<EntityDeletion> {
    const who = await this.ctx.authenticate(actor);
    const { entityType } = parseUrn(urn);
    const spec = this.ctx.registry.entityType(entityType);
    const dryRun = options.dryRun === true;
    const owned = this.deletionRoutes.get(entityType);
    if (owned) return owned.route(actor, urn, { hard: options.hard ?? !owned.softByDefault, dryRun });
    const hard = options.hard ?? true;
    const legacy = this.deleteRoutes.get(entityType);
    if (legacy) {
      // Tokens and policies: their own service deletes them (revoke, remove), with no soft state to preview.
      if (!hard)
        throw new CatalogError('INVALID_INPUT', `${entityType} entities cannot be soft-deleted; delete them hard`, {
          details: [{ path: '/hard', message: 'must be true' }],
        });
      if (dryRun) throw new CatalogError('UNSUPPORTED', `a dry run of deleting ${entityType} entities is not available`);
      await legacy(actor, urn, { hard: true });
      return { urn, entityType, mode: 'hard', dryRun, changed: true };
    }
    await this.ctx.authorizer.require(actor, 'EDIT_ENTITY');
    if (!hard && !spec.aspects.includes('status')) {
      throw new CatalogError('INVALID_INPUT', `${entityType} entities have no status aspect and cannot be soft-deleted; delete them hard`, {
        details: [{ path: '/hard', message: 'must be true' }],
      });
    }
    let changed = false;
    const decide = (current: ReadonlyMap<string, StoredEntity>) => {
      const entity = current.get(urn);
      if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
      changed = hard || entity.aspects.status?.value.removed !== true;
      if (dryRun || !changed) return { entities: [] };
      return { entities: [hard ? { urn, deleteEntity: true } : { urn, put: { status: { value: { removed: true } } } }] };
    };
    if (dryRun) decide(new Map((await this.ctx.adapter.readEntities([urn], ['status'])).map((e) => [e.urn, e])));
    else await this.ctx.writer.write(who, [urn], decide);
    return { urn, entityType, mode: hard ? 'hard' : 'soft', dryRun, changed };
  }

  /** Lists entities of a type in URN order (keyset pagination with `afterUrn`). */
  async list(actor: Actor, request: { entityType: string; afterUrn?: string; limit?: number }): Promise<EntityView[]> {
    await this.ctx.authenticate(actor);
    this.ctx.registry.entityType(request.entityType);
    const limit = request.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to 10000, got ${String(limit)}`);
    }
    let entities = await this.ctx.adapter.scanEntities({ entityType: request.entityType, afterUrn: request.afterUrn, limit });
    for (const transform of this.readTransforms) entities = await transform(entities);
    return entities.map((e) => toView(e));
  }

  /**
   * A page of entities of a type in URN order, with the opaque `scrollId` of the next page (absent on
   * the last page). The page is `count` entities, `DEFAULT_SCROLL_COUNT` when left out.
   */
  async scroll(actor: Actor, request: { entityType: string; scrollId?: string; count?: number }): Promise<EntityScrollPage> {
    let afterUrn: string | undefined;
    if (request.scrollId !== undefined && request.scrollId !== '') {
      afterUrn = decodeCursor(request.scrollId, ({ after }) => (typeof after === 'string' ? after : undefined));
      if (afterUrn === undefined)
        throw malformedCursor('scrollId', 'is not a scrollId of this listing (pass back the one of the previous page)');
    }
    const count = request.count ?? DEFAULT_SCROLL_COUNT;
    const entities = await this.list(actor, {
      entityType: request.entityType,
      limit: count,
      ...(afterUrn !== undefined ? { afterUrn } : {}),
    });
    const last = entities[entities.length - 1];
    return { entities, ...(last && entities.length === count ? { scrollId: encodeCursor({ after: last.urn }) } : {}) };
  }
}
