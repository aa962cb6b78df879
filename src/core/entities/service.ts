import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { parseUrn, urnProblem } from '../urn';

/** An aspect as a reader sees it. */
export interface AspectView {
  value: JsonObject;
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
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

export interface EntityUpsert {
  urn: string;
  aspects: Record<string, JsonObject>;
}

/** Writes of an aspect that a domain service owns (e.g. `propertyDefinition`) go to that service. */
export type AspectWriteRoute = (actor: string, urn: string, value: JsonObject) => Promise<unknown>;
/** Deletes of an entity type that a domain service owns (e.g. structured properties: soft unless hard). */
export type EntityDeleteRoute = (actor: string, urn: string, options: { hard: boolean }) => Promise<unknown>;
/**
 * The reported deletion of an entity type a domain service owns (structured properties): decides soft
 * or hard, counts what is affected, writes nothing on a dry run.
 */
export type EntityDeletionRoute = (actor: string, urn: string, options: { hard: boolean; dryRun: boolean }) => Promise<EntityDeletion>;

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

const BULK_CHUNK = 2000;

function toView(entity: StoredEntity): EntityView {
  const aspects: Record<string, AspectView> = {};
  for (const [name, a] of Object.entries(entity.aspects)) {
    aspects[name] = { value: a.value, version: a.version, created: a.created, lastModified: a.lastModified };
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
  private readonly readTransforms: ReadTransform[] = [];

  constructor(private readonly ctx: CatalogContext) {}

  /** For domain services: own the writes of an aspect. A route that refuses throws a CatalogError. */
  routeAspectWrites(aspect: string, route: AspectWriteRoute): void {
    this.writeRoutes.set(aspect, route);
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

  async get(actor: string, urn: string, options: { aspects?: readonly string[] } = {}): Promise<EntityView | undefined> {
    await this.ctx.authenticate(actor);
    parseUrn(urn);
    const [entity] = await this.readVisible([urn], options.aspects);
    return entity ? toView(entity) : undefined;
  }

  /** Batch read, in the order given; unknown URNs are left out. */
  async getMany(actor: string, urns: readonly string[], options: { aspects?: readonly string[] } = {}): Promise<EntityView[]> {
    await this.ctx.authenticate(actor);
    const violations: Violation[] = [];
    urns.forEach((urn, i) => {
      const problem = urnProblem(urn);
      if (problem) violations.push({ path: `/urns/${i}`, message: problem });
    });
    throwIfViolations(violations, 'invalid URNs');
    return (await this.readVisible(urns, options.aspects)).map(toView);
  }

  /**
   * Versions of one aspect, newest first: the current one, then the kept earlier ones (docs/changes.md).
   * `before`: only versions with a lower number (paging). Needs what reading the entity needs.
   */
  async history(
    actor: string,
    urn: string,
    aspect: string,
    options: { limit?: number; before?: number } = {},
  ): Promise<AspectVersionView[]> {
    await this.ctx.authenticate(actor);
    const parsed = parseUrn(urn);
    this.ctx.registry.requireAspectOf(parsed.entityType, aspect);
    const limit = options.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${String(limit)}`);
    const before = options.before;
    if (before !== undefined && (!Number.isInteger(before) || before < 1)) throw new CatalogError('INVALID_INPUT', `before must be a positive integer version, got ${String(before)}`);
    const [entity] = await this.readVisible([urn], [aspect]);
    if (!entity) return [];
    const out: AspectVersionView[] = [];
    const current = entity.aspects[aspect];
    if (current && (before === undefined || current.version < before)) out.push(toVersionView(current));
    if (out.length < limit && this.ctx.adapter.readAspectVersions) {
      const top = current ? current.version : Number.POSITIVE_INFINITY;
      const kept = await this.ctx.adapter.readAspectVersions({ urn, aspectName: aspect, beforeVersion: Math.min(before ?? top, top), limit: limit - out.length });
      out.push(...kept.map(toVersionView));
    }
    return out;
  }

  /**
   * One version by number, numbered like DataHub: 0 is the latest; N >= 1 is the N-th value ever written
   * (DataHub copies the replaced latest to version max + 1, so 1 is the oldest), which is the stored
   * `version` of that value here. Undefined when it is not kept (retention) or never existed.
   */
  async aspectVersion(actor: string, urn: string, aspect: string, version: number): Promise<AspectVersionView | undefined> {
    if (!Number.isInteger(version) || version < 0) throw new CatalogError('INVALID_INPUT', `version must be a non-negative integer (0 is the latest), got ${String(version)}`);
    if (version === 0) return (await this.history(actor, urn, aspect, { limit: 1 }))[0];
    const [found] = await this.history(actor, urn, aspect, { before: version + 1, limit: 1 });
    return found?.version === version ? found : undefined;
  }

  async getAspect(actor: string, urn: string, aspect: string): Promise<AspectView | undefined> {
    const parsed = parseUrn(urn);
    this.ctx.registry.requireAspectOf(parsed.entityType, aspect);
    const entity = await this.get(actor, urn, { aspects: [aspect] });
    return entity?.aspects[aspect];
  }

  /** Writes one aspect. Aspects owned by a domain service (definitions, values, status of a property...) go through it. */
  async upsertAspect(actor: string, urn: string, aspect: string, value: JsonObject): Promise<EntityView> {
    await this.ctx.authenticate(actor);
    // Malformed URNs and unknown types or aspects are reported by the bulk validation below, with JSON paths.
    const entityType = urnProblem(urn) === undefined ? parseUrn(urn).entityType : undefined;
    const owned = entityType !== undefined && this.ctx.registry.hasEntityType(entityType) && this.ctx.registry.entityType(entityType).aspects.includes(aspect);
    const route = owned ? (this.writeRoutes.get(`${entityType}.${aspect}`) ?? this.writeRoutes.get(aspect)) : undefined;
    if (route) {
      await route(actor, urn, value);
      const [entity] = await this.readVisible([urn]);
      if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
      return toView(entity);
    }
    return this.upsertAspects(actor, urn, { [aspect]: value });
  }

  /** Writes several aspects of one entity atomically. */
  async upsertAspects(actor: string, urn: string, aspects: Record<string, JsonObject>): Promise<EntityView> {
    const [view] = await this.upsertMany(actor, [{ urn, aspects }]);
    return view!;
  }

  /**
   * Bulk write: every item validated first (nothing is written when one is bad; the error lists every
   * violation with its index), then written in atomic chunks of 500 entities.
   */
  async upsertMany(actor: string, items: readonly EntityUpsert[]): Promise<EntityView[]> {
    await this.ctx.authorizer.require(await this.ctx.authenticate(actor), 'EDIT_ENTITY');
    const violations: Violation[] = [];
    const single = items.length === 1;
    items.forEach((item, i) => this.validateUpsert(item, single ? '' : `/${i}`, violations));
    throwIfViolations(violations, single ? `invalid write to ${items[0]?.urn}` : 'invalid entity writes');
    const views: EntityView[] = [];
    for (let start = 0; start < items.length; start += BULK_CHUNK) {
      const chunk = items.slice(start, start + BULK_CHUNK);
      const byUrn = new Map<string, Record<string, JsonObject>>();
      for (const item of chunk) byUrn.set(item.urn, { ...(byUrn.get(item.urn) ?? {}), ...item.aspects });
      const after = await this.ctx.writer.write(actor, [...byUrn.keys()], () => ({
        entities: [...byUrn].map(([urn, aspects]) => ({
          urn,
          put: Object.fromEntries(Object.entries(aspects).map(([name, value]) => [name, { value }])),
        })),
      }));
      for (const urn of byUrn.keys()) {
        const entity = after.get(urn);
        if (entity) views.push(toView(entity));
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
    const { entityType } = parseUrn(item.urn);
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
    for (const name of names) {
      const path = `${prefix}/aspects/${name}`;
      if (!this.ctx.registry.hasAspect(name)) {
        violations.push({ path, message: `unknown aspect "${name}"` });
      } else if (!spec.aspects.includes(name)) {
        violations.push({ path, message: `entity type "${entityType}" has no aspect "${name}"; its aspects: ${spec.aspects.join(', ')}` });
      } else if (this.ctx.registry.aspect(name).timeseries) {
        violations.push({ path, message: `"${name}" is a timeseries aspect: append rows with catalog.timeseries.append` });
      } else if (this.writeRoutes.has(`${entityType}.${name}`) || this.writeRoutes.has(name)) {
        violations.push({ path, message: `"${name}" is managed by its own API; write it alone with upsertAspect` });
      } else {
        violations.push(...this.ctx.registry.validateAspect(name, item.aspects[name], path));
      }
    }
  }

  /** Deletes one aspect; false when it was absent. Deleting the last aspect deletes the entity. */
  async deleteAspect(actor: string, urn: string, aspect: string): Promise<boolean> {
    await this.ctx.authorizer.require(await this.ctx.authenticate(actor), 'EDIT_ENTITY');
    const parsed = parseUrn(urn);
    this.ctx.registry.requireAspectOf(parsed.entityType, aspect);
    if (this.writeRoutes.has(`${parsed.entityType}.${aspect}`) || this.writeRoutes.has(aspect)) {
      throw new CatalogError('INVALID_INPUT', `"${aspect}" is managed by its own API and cannot be deleted directly`);
    }
    let existed = false;
    await this.ctx.writer.write(actor, [urn], (current) => {
      existed = current.get(urn)?.aspects[aspect] !== undefined;
      return { entities: existed ? [{ urn, delete: [aspect] }] : [] };
    });
    return existed;
  }

  /**
   * Deletes an entity with its aspects, search document and timeseries rows; false when it did not
   * exist. Entity types owned by a domain service decide themselves (a structured property is
   * soft-deleted unless `hard`).
   */
  async delete(actor: string, urn: string, options: { hard?: boolean } = {}): Promise<boolean> {
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
   * then removed by background work). Left out, the type decides as CONTRACT section 4 says: a
   * structured property is soft-deleted, anything else is removed. `dryRun` authorizes, checks and
   * counts as the real call would, and writes nothing. NOT_FOUND when the entity does not exist.
   */
  async deleteEntity(actor: string, urn: string, options: { hard?: boolean; dryRun?: boolean } = {}): Promise<EntityDeletion> {
    const who = await this.ctx.authenticate(actor);
    const { entityType } = parseUrn(urn);
    const spec = this.ctx.registry.entityType(entityType);
    const dryRun = options.dryRun === true;
    const owned = this.deletionRoutes.get(entityType);
    if (owned) return owned.route(who, urn, { hard: options.hard ?? !owned.softByDefault, dryRun });
    const hard = options.hard ?? true;
    const legacy = this.deleteRoutes.get(entityType);
    if (legacy) {
      // Tokens and policies: their own service deletes them (revoke, remove), with no soft state to preview.
      if (!hard) throw new CatalogError('INVALID_INPUT', `${entityType} entities cannot be soft-deleted; delete them hard`, { details: [{ path: '/hard', message: 'must be true' }] });
      if (dryRun) throw new CatalogError('UNSUPPORTED', `a dry run of deleting ${entityType} entities is not available`);
      await legacy(who, urn, { hard: true });
      return { urn, entityType, mode: 'hard', dryRun, changed: true };
    }
    await this.ctx.authorizer.require(who, 'EDIT_ENTITY');
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
  async list(actor: string, request: { entityType: string; afterUrn?: string; limit?: number }): Promise<EntityView[]> {
    await this.ctx.authenticate(actor);
    this.ctx.registry.entityType(request.entityType);
    const limit = request.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to 10000, got ${String(limit)}`);
    }
    let entities = await this.ctx.adapter.scanEntities({ entityType: request.entityType, afterUrn: request.afterUrn, limit });
    for (const transform of this.readTransforms) entities = await transform(entities);
    return entities.map(toView);
  }
}
