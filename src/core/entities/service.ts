import type { AspectMap, AspectName, AspectValues } from './aspect-types';
import type { Actor } from '../access/actor';
import type { Privilege } from '../access/privileges';
import type { EntityDeleter, EntityDeletion, ReadTransform } from './owner';
import type { WritePipeline, WriteItem } from './write-pipeline';
import { decodeCursor, encodeCursor, malformedCursor } from '../../adapter/cursor';
import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { CatalogError, isCatalogError, relativeTo, throwIfViolations, withPaths, type Violation } from '../../errors';
import { entityTypeOf, parseUrn, urnProblem } from '../urn';
import { publicSystemMetadata, systemMetadataProblems } from './system-metadata';
import { jsonPatchViolations, type ArrayPrimaryKeys, type JsonPatchOperation } from './json-patch';
import { applyProposals } from './proposals';
import type { ProposalOutcome } from './proposal-check';
import { builtInKeyAspect, keyAspectOf } from './key-aspects';
import type { EntityTypeSpec } from './registry';

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
  /** That version's own system metadata as a reader sees it (as `get` answers it), when asked for (`{ systemMetadata: true }`). */
  systemMetadata?: JsonObject;
}

function toVersionView(
  aspect: { version: number; value: JsonObject; created: AuditStamp; lastModified: AuditStamp; systemMetadata?: JsonObject },
  withSystemMetadata = false,
): AspectVersionView {
  const view: AspectVersionView = {
    version: aspect.version,
    value: aspect.value,
    created: aspect.created,
    lastModified: aspect.lastModified,
  };
  // As a reader sees it (the writer's fields, version and stamps): never the catalog's own bookkeeping.
  if (withSystemMetadata) view.systemMetadata = publicSystemMetadata(aspect);
  return view;
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

export type { EntityDeletion, ReadTransform } from './owner';

/** Entities one commit of a bulk write takes (each chunk holds whole entities). */
const BULK_CHUNK_ENTITIES = 2000;
/** Entities one bulk write takes (they are validated together before the first chunk is written). */
const MAX_BULK_ITEMS = 100_000;

function toView(entity: StoredEntity, withSystemMetadata = false): EntityView {
  const aspects: Record<string, AspectView> = {};
  const stored = entity.aspects;
  for (const name in stored) {
    if (!Object.hasOwn(stored, name)) continue;
    const a = stored[name]!;
    const view: AspectView = { value: a.value, version: a.version, created: a.created, lastModified: a.lastModified };
    if (withSystemMetadata) view.systemMetadata = publicSystemMetadata(a);
    aspects[name] = view;
  }
  return { urn: entity.urn, entityType: entity.entityType, aspects };
}

/**
 * Generic entities and aspects: read, write (validated against each aspect's schema, audited,
 * atomic across aspects), delete. Aspects owned by a domain service are routed to it.
 */
/** Where item `at` of a bulk write sits (`-1`: the write's one item, at the root). */
function pathAt(at: number): string {
  return at < 0 ? '' : `/${at}`;
}

/** An upsert of one aspect of a bulk write: its path (which only a violation needs) is made when asked for. */
class AspectUpsert {
  readonly op = 'upsert' as const;
  systemMetadata?: JsonObject;
  onlyIfAbsent?: 'aspect' | 'entity';
  presencePath?: string;

  constructor(
    readonly urn: string,
    readonly aspect: string,
    readonly value: unknown,
    private readonly at: number,
  ) {}

  get path(): string {
    return `${pathAt(this.at)}/aspects/${this.aspect}`;
  }
}

export class EntityService {
  private readonly readTransforms: readonly ReadTransform[];
  private readonly deleters = new Map<string, EntityDeleter>();

  constructor(
    private readonly ctx: CatalogContext,
    /** The one write path, built by createCatalog with every domain's owners. */
    readonly pipeline: WritePipeline,
    /** What readers see (each domain's read transform) and how each owned entity type is deleted (its service). */
    parts: { reads?: readonly ReadTransform[]; deleters?: readonly EntityDeleter[] } = {},
  ) {
    this.readTransforms = parts.reads ?? [];
    for (const deleter of parts.deleters ?? []) this.deleters.set(deleter.entityType, deleter);
  }

  /** The privilege a write of the aspect needs (its owner's, or EDIT_ENTITY). */
  ownerPrivilege(entityType: string, aspect: string): Privilege {
    return this.pipeline.privilegeOf(entityType, aspect);
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
    options: { limit?: number; before?: number; systemMetadata?: boolean } = {},
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
    const withSystemMetadata = options.systemMetadata === true;
    if (current && (before === undefined || current.version < before)) out.push(toVersionView(current, withSystemMetadata));
    if (out.length < limit && this.ctx.adapter.readAspectVersions) {
      const top = current ? current.version : Number.POSITIVE_INFINITY;
      const kept = await this.ctx.adapter.readAspectVersions({
        urn,
        aspectName: aspect,
        beforeVersion: Math.min(before ?? top, top),
        limit: limit - out.length,
      });
      out.push(...kept.map((aspect) => toVersionView(aspect, withSystemMetadata)));
    }
    return out;
  }

  /**
   * One version by number, numbered like DataHub: 0 is the latest; N >= 1 is the N-th value ever written
   * (DataHub copies the replaced latest to version max + 1, so 1 is the oldest), which is the stored
   * `version` of that value here. Undefined when it is not kept (retention) or never existed.
   */
  async aspectVersion(
    actor: Actor,
    urn: string,
    aspect: AspectName,
    version: number,
    options: { systemMetadata?: boolean } = {},
  ): Promise<AspectVersionView | undefined> {
    if (!Number.isInteger(version) || version < 0)
      throw new CatalogError('INVALID_INPUT', `version must be a non-negative integer (0 is the latest), got ${String(version)}`);
    const systemMetadata = options.systemMetadata === true;
    if (version === 0) return (await this.history(actor, urn, aspect, { limit: 1, systemMetadata }))[0];
    const [found] = await this.history(actor, urn, aspect, { before: version + 1, limit: 1, systemMetadata });
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
   * Writes one aspect, through the one write path: an aspect a domain owns (a definition, values, the
   * status of a property, a timeseries row...) is checked and planned by its owner. Violations of an
   * owned aspect's value are reported relative to the value (`/qualifiedName`), of a generic one under
   * `/aspects/<aspect>`.
   */
  async upsertAspect<K extends AspectName>(
    actor: Actor,
    urn: string,
    aspect: K,
    value: AspectMap[K],
    options: AspectWriteOptions = {},
  ): Promise<EntityView> {
    const item: EntityUpsert = { urn, aspects: { [aspect]: value } };
    if (options.systemMetadata !== undefined) item.systemMetadata = { [aspect]: options.systemMetadata };
    if (options.onlyIfAbsent) item.onlyIfAbsent = options.onlyIfAbsent;
    const entityType = urnProblem(urn) === undefined ? parseUrn(urn).entityType : undefined;
    const owned = entityType !== undefined && this.isOwned(entityType, aspect);
    try {
      const [view] = await this.upsertMany(actor, [item]);
      if (view) return view;
    } catch (error) {
      throw owned ? withPaths(error, (path) => relativeTo(path, `/aspects/${aspect}`)) : error;
    }
    // Only a timeseries row was written (appended), to an entity that holds no aspect.
    const [entity] = await this.readVisible([urn]);
    return entity ? toView(entity) : { urn, entityType: parseUrn(urn).entityType, aspects: {} };
  }

  /** Whether a domain owns the aspect on this entity type (false for unknown types and aspects). */
  private isOwned(entityType: string, aspect: string): boolean {
    return (
      this.ctx.registry.hasEntityType(entityType) &&
      this.ctx.registry.entityType(entityType).aspects.includes(aspect) &&
      this.pipeline.ownerOf(entityType, aspect) !== undefined
    );
  }

  /**
   * Applies an RFC 6902 JSON Patch to one aspect (an absent aspect patches `{}`) and writes the result,
   * checked as a write of the aspect; nothing is written when an operation fails (a failed `test` is
   * CONFLICT). `arrayPrimaryKeys` addresses a top-level array as a map keyed by the named members of
   * its elements (docs/structured-properties.md, "Any aspect"). `structuredProperties` follows the
   * values patch (`catalog.properties.patchValues`: `/properties/<property urn>`, removing an absent
   * one is a no-op). Read, patched and written in one unit of work.
   */
  async patchAspect(
    actor: Actor,
    urn: string,
    aspectName: string,
    operations: readonly JsonPatchOperation[],
    options: { arrayPrimaryKeys?: ArrayPrimaryKeys } = {},
  ): Promise<EntityView> {
    // Authenticated once, by the write path, before the input is read; its write is not checked again for it.
    const admitted = await this.pipeline.admit(actor, []);
    const { entityType } = parseUrn(urn);
    const spec = this.ctx.registry.requireAspectOf(entityType, aspectName);
    if (spec.timeseries) {
      const message = `"${aspectName}" is a timeseries aspect: rows are appended, never patched`;
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'aspect', message }] });
    }
    const owned = this.isOwned(entityType, aspectName);
    if (!owned) throwIfViolations(jsonPatchViolations(operations, '/patch'), `invalid patch of ${aspectName} of ${urn}`);
    const item: WriteItem = {
      op: 'patch',
      urn,
      aspect: aspectName,
      operations,
      ...(options.arrayPrimaryKeys ? { arrayPrimaryKeys: options.arrayPrimaryKeys } : {}),
      path: '',
      patchPath: '/patch',
      valuePath: '',
    };
    await this.pipeline.write(admitted, [item], { message: `the patched ${aspectName} of ${urn} is not valid` });
    const [entity] = await this.readVisible([urn]);
    if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
    return toView(entity);
  }

  /**
   * JSON Patches of several entities' aspects in one atomic step: each item patches one aspect
   * (`arrayPrimaryKeys` as in `patchAspect`); items on the same aspect apply in order. Any aspect may
   * be patched beside any other (`structuredProperties` by its values patch, a definition by its
   * owner's rules), each with the privilege its own route needs. Every item is checked first, every
   * patched document is validated, and nothing is written when one fails (violations at `/<index>/...`;
   * a failed `test` is CONFLICT). Answers the patched entities, in the order of their first item.
   */
  async patchMany(
    actor: Actor,
    items: ReadonlyArray<{ urn: string; aspect: string; patch: readonly JsonPatchOperation[]; arrayPrimaryKeys?: ArrayPrimaryKeys }>,
  ): Promise<EntityView[]> {
    // Authenticated once, by the write path, before the input is read; its write is not checked again for it.
    const admitted = await this.pipeline.admit(actor, []);
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
      if (!spec || !this.isOwned(entityType, item.aspect)) violations.push(...jsonPatchViolations(item?.patch, `/${i}/patch`));
    });
    throwIfViolations(violations, 'invalid patches');
    const writes: WriteItem[] = items.map((item, i) => ({
      op: 'patch',
      urn: item.urn,
      aspect: item.aspect,
      operations: item.patch,
      ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}),
      path: `/${i}`,
      patchPath: `/${i}/patch`,
      valuePath: `/${i}/value`,
    }));
    const { after } = await this.pipeline.write(admitted, writes, { message: 'the patched aspects are not valid' });
    return [...after.values()].flatMap((entity) => (entity ? [toView(entity)] : []));
  }

  /**
   * Applies metadata change proposals (UPSERT, CREATE, CREATE_ENTITY, PATCH, DELETE of one aspect each):
   * all checked first, then written in one atomic step through the one write path; nothing is written
   * when one is bad (every violation named by the proposal's index, `<prefix>/<i>/...`).
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
   * Bulk write: every item checked first, each aspect by its owner's rules (nothing is written when one
   * is bad; the error lists every violation with its index), then written in atomic chunks of
   * `BULK_CHUNK_ENTITIES` (2,000) whole entities: an entity's aspects always commit together.
   * Timeseries aspects are appended as rows in the same commit.
   */
  async upsertMany(actor: Actor, items: readonly EntityUpsert[], options: { systemMetadata?: boolean } = {}): Promise<EntityView[]> {
    // Authenticated once, by the write path, before the input is read; its write is not checked again for it.
    const admitted = await this.pipeline.admit(actor, []);
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
    const message = single ? `invalid write to ${items[0]?.urn}` : 'invalid entity writes';
    const writes: WriteItem[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      /** Where the item sits: its paths are made only when a violation names them. */
      const at = single ? -1 : i;
      const spec = this.validateUpsert(item, at < 0 ? '' : `/${i}`, violations);
      if (!spec) continue;
      const aspects = item.aspects as Record<string, unknown>;
      // `k` counts every aspect of the item, as the first one is checked for `entity`.
      let k = -1;
      for (const name in aspects) {
        if (!Object.hasOwn(aspects, name)) continue;
        k++;
        if (!this.ctx.registry.hasAspect(name)) {
          violations.push({ path: `${pathAt(at)}/aspects/${name}`, message: `unknown aspect "${name}"` });
          continue;
        }
        if (!spec.aspects.includes(name)) {
          violations.push({
            path: `${pathAt(at)}/aspects/${name}`,
            message: `entity type "${spec.name}" has no aspect "${name}"; its aspects: ${spec.aspects.join(', ')}`,
          });
          continue;
        }
        // The value itself is checked by the write path: by its owner's rules, or by the aspect's schema.
        const write = new AspectUpsert(item.urn, name, aspects[name], at);
        const systemMetadata = item.systemMetadata?.[name];
        if (systemMetadata) write.systemMetadata = systemMetadata;
        // `entity`: one check per entity (its first aspect); `aspect`: one per aspect.
        const onlyIfAbsent = item.onlyIfAbsent === 'aspect' || (item.onlyIfAbsent === 'entity' && k === 0) ? item.onlyIfAbsent : undefined;
        if (onlyIfAbsent) {
          write.onlyIfAbsent = onlyIfAbsent;
          write.presencePath = onlyIfAbsent === 'aspect' ? write.path : `${pathAt(at)}/urn`;
        }
        writes.push(write);
      }
    }
    // Each aspect's value is checked by the write path too, so that one answer lists every problem.
    const { after } = await this.pipeline.write(admitted, writes, { message, chunkEntities: BULK_CHUNK_ENTITIES, violations });
    const views: EntityView[] = [];
    for (const entity of after.values()) if (entity) views.push(toView(entity, options.systemMetadata === true));
    return views;
  }

  /**
   * Adds the item's structural problems but those of its aspect names (the caller checks each name as
   * it goes); returns the spec of its entity type when its aspects can be checked further.
   */
  private validateUpsert(item: EntityUpsert, prefix: string, violations: Violation[]): EntityTypeSpec | undefined {
    const problem = urnProblem(item?.urn);
    if (problem) {
      violations.push({ path: `${prefix}/urn`, message: problem });
      return undefined;
    }
    const entityType = entityTypeOf(item.urn);
    if (!this.ctx.registry.hasEntityType(entityType)) {
      violations.push({
        path: `${prefix}/urn`,
        message: `unknown entity type "${entityType}"; known types: ${this.ctx.registry.entityTypeNames().join(', ')}`,
      });
      return undefined;
    }
    const spec = this.ctx.registry.entityType(entityType);
    if (!item.aspects || typeof item.aspects !== 'object' || Array.isArray(item.aspects)) {
      violations.push({ path: `${prefix}/aspects`, message: 'must be an object of aspect name to value' });
      return undefined;
    }
    let named = false;
    for (const name in item.aspects)
      if (Object.hasOwn(item.aspects, name)) {
        named = true;
        break;
      }
    if (!named) violations.push({ path: `${prefix}/aspects`, message: 'names no aspect' });
    if (item.onlyIfAbsent !== undefined && item.onlyIfAbsent !== 'aspect' && item.onlyIfAbsent !== 'entity') {
      violations.push({ path: `${prefix}/onlyIfAbsent`, message: 'must be "aspect" or "entity"' });
    }
    if (item.systemMetadata !== undefined) {
      if (item.systemMetadata === null || typeof item.systemMetadata !== 'object' || Array.isArray(item.systemMetadata)) {
        violations.push({ path: `${prefix}/systemMetadata`, message: 'must be an object of aspect name to system metadata' });
      } else {
        const names = Object.keys(item.aspects);
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
    return spec;
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
   * Every name is checked first (nothing is deleted when one is refused: an aspect a domain owns is
   * deleted only by that domain). Deleting the last aspect deletes the entity.
   */
  async deleteAspects(actor: Actor, urn: string, aspects: readonly string[]): Promise<string[]> {
    // Authenticated once, by the write path, before the input is read; its write is not checked again for it.
    const admitted = await this.pipeline.admit(actor, []);
    const parsed = parseUrn(urn);
    const violations: Violation[] = [];
    const spec = this.ctx.registry.hasEntityType(parsed.entityType) ? this.ctx.registry.entityType(parsed.entityType) : undefined;
    const pathOf = (i: number) => (aspects.length === 1 ? '/aspect' : `/aspects/${i}`);
    aspects.forEach((aspect, i) => {
      if (!spec) violations.push({ path: '/urn', message: `unknown entity type "${parsed.entityType}"` });
      else if (!spec.aspects.includes(aspect))
        violations.push({
          path: pathOf(i),
          message: `entity type "${parsed.entityType}" has no aspect "${aspect}"; its aspects: ${spec.aspects.join(', ')}`,
        });
      else if (this.isOwned(parsed.entityType, aspect))
        violations.push({ path: pathOf(i), message: `"${aspect}" is managed by its own API and cannot be deleted directly` });
    });
    throwIfViolations(violations, aspects.length === 1 ? violations[0]?.message : `cannot delete these aspects of ${urn}`);
    const names = [...new Set(aspects)];
    const writes: WriteItem[] = names.map((aspect) => ({ op: 'delete', urn, aspect, path: pathOf(aspects.indexOf(aspect)) }));
    const refusal = (error: unknown): unknown => {
      // A refusal of one aspect is named by its own message, as a one-aspect delete always was.
      if (aspects.length === 1 && isCatalogError(error) && error.code === 'INVALID_INPUT' && error.details.length === 1)
        return new CatalogError('INVALID_INPUT', error.details[0]!.message, { details: error.details });
      return error;
    };
    const { before } = await this.pipeline.write(admitted, writes, { message: `cannot delete these aspects of ${urn}` }).catch((error) => {
      throw refusal(error);
    });
    const entity = before.get(urn);
    return names.filter((name) => entity?.aspects[name] !== undefined);
  }

  /**
   * Deletes an entity with its aspects, search document and timeseries rows; false when it did not
   * exist. Entity types owned by a domain decide themselves (a structured property is soft-deleted
   * unless `hard`).
   */
  async delete(actor: Actor, urn: string, options: { hard?: boolean } = {}): Promise<boolean> {
    const admitted = await this.pipeline.admit(actor, []);
    const parsed = parseUrn(urn);
    this.ctx.registry.entityType(parsed.entityType);
    const owner = this.deleters.get(parsed.entityType);
    if (owner) {
      await owner.delete(admitted.principal, urn, { hard: owner.hardOnly === true || options.hard === true, dryRun: false });
      return true;
    }
    const { before } = await this.pipeline.write(admitted, [{ op: 'deleteEntity', urn, path: '/urn' }], {
      message: `cannot delete ${urn}`,
    });
    return before.get(urn) !== undefined;
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
    const admitted = await this.pipeline.admit(actor, []);
    const { entityType } = parseUrn(urn);
    const spec = this.ctx.registry.entityType(entityType);
    const dryRun = options.dryRun === true;
    const owner = this.deleters.get(entityType);
    const hard = options.hard ?? (owner ? !owner.softByDefault : true);
    if (owner?.hardOnly) {
      // Tokens and policies: their own service deletes them (revoke, remove), with no soft state to preview.
      if (!hard)
        throw new CatalogError('INVALID_INPUT', `${entityType} entities cannot be soft-deleted; delete them hard`, {
          details: [{ path: '/hard', message: 'must be true' }],
        });
      if (dryRun) throw new CatalogError('UNSUPPORTED', `a dry run of deleting ${entityType} entities is not available`);
    }
    if (owner) return owner.delete(admitted.principal, urn, { hard, dryRun });
    // EDIT_ENTITY before the dry run reads anything; the write below is not checked again for it.
    const editor = await this.pipeline.admit(admitted, ['EDIT_ENTITY']);
    if (!hard && !spec.aspects.includes('status')) {
      throw new CatalogError('INVALID_INPUT', `${entityType} entities have no status aspect and cannot be soft-deleted; delete them hard`, {
        details: [{ path: '/hard', message: 'must be true' }],
      });
    }
    let entity: StoredEntity | undefined;
    if (dryRun) [entity] = await this.ctx.adapter.readEntities([urn], ['status']);
    else {
      // Through the write path: the entity's deletion, or its `status` patched (nothing is written when it is absent).
      const item: WriteItem = hard
        ? { op: 'deleteEntity', urn, path: '/urn' }
        : {
            op: 'patch',
            urn,
            aspect: 'status',
            operations: [{ op: 'add', path: '/removed', value: true }],
            path: '',
            patchPath: '/patch',
            valuePath: '',
            onlyIfPresent: true,
          };
      entity = (await this.pipeline.write(editor, [item], { message: `cannot delete ${urn}` })).before.get(urn);
    }
    if (!entity) throw new CatalogError('NOT_FOUND', `${urn} does not exist`);
    const changed = hard || entity.aspects.status?.value.removed !== true;
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
