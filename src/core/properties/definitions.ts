import { actorUrn, type Actor } from '../access/actor';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { incarnationMetadata, newIncarnation, NO_DEFINITION_KEY } from './definition-key';
import type { EntityDeletion, OwnedChange, OwnedItem, OwnerBatch } from '../entities/owner';
import type { WritePipeline, WriteItem } from '../entities/write-pipeline';
import type { AspectChange } from '../entities/writer';
import { CatalogError, throwIfViolations, withPaths, type Violation } from '../../errors';
import { cleanupJob } from './cleanup';
import { breakingChanges, canonicalDefinition, definitionContent, refuseBreakingChanges, resolveVersion } from './definition-changes';
import {
  attachableEntityTypes,
  checkVersionFormat,
  normalizeAllowedValues,
  normalizeDraft,
  normalizeEntityTypes,
  type DraftPaths,
} from './definition-rules';
import { definitionToJson, readRestDefinition, REST_PATHS, restPaths, toReadBack } from './definition-shapes';
import type { CanonicalDefinition } from './graphql-input';
import { definitionInfoOf, type DefinitionCache, type DefinitionInfo } from './lookup';
import {
  DEFINITION_ASPECT,
  STRUCTURED_PROPERTY_ENTITY,
  type DefinitionUpsertResult,
  type HardDeleteResult,
  type PropertyReadBack,
  type ResolvedPropertyField,
  type StructuredPropertyDefinition,
  type StructuredPropertyView,
  type DefinitionUpdate,
} from './types';
import { knownUrnProblem } from '../urn';
import { applyJsonPatch } from '../entities/json-patch';
import { requirePropertyUrn, softDeletedMessage, throwIfConflicts } from './messages';
import {
  applySettingsInput,
  fillSettings,
  sameFlags,
  SETTINGS_ASPECT,
  settingsToJson,
  settingsViolations,
  type StructuredPropertySettings,
  type StructuredPropertySettingsInput,
} from './settings';
import { propertyValueIndexOf } from '../entities/property-values';

/** Where the problems of a `DefinitionUpdate` are reported. */
const UPDATE_PATHS: DraftPaths = {
  urn: '/urn',
  id: '/urn',
  qualifiedName: '/urn',
  valueType: '/valueType',
  allowedTypes: '/addAllowedTypes',
  allowedValues: '/addAllowedValues',
  allowedValue: (i) => `/addAllowedValues/${i}`,
  cardinality: '/multiple',
  entityTypes: '/addEntityTypes',
  version: '/version',
};

/**
 * The definitions' own edits, planned by their owner in the unit of work like any item of the write
 * path: a create (refused when the property exists) with its settings, and an update.
 */
type DefinitionEdit =
  | { kind: 'create'; definition: StructuredPropertyDefinition; settings?: StructuredPropertySettings }
  | { kind: 'update'; update: DefinitionUpdate };

export function viewOf(info: DefinitionInfo): StructuredPropertyView {
  return {
    urn: info.urn,
    definition: info.definition,
    removed: info.removed,
    definitionKey: info.key,
    ...(info.settings ? { settings: info.settings } : {}),
  };
}

/** The one write path, once the entity service that holds it is built (with the owners of this domain). */
export interface PipelineRoute {
  pipeline(): WritePipeline;
}

/** A batch write of whole entities through the one write path (`catalog.entities.upsertMany`). */
export type EntityBatchWrite = (actor: Actor, items: Array<{ urn: string; aspects: Record<string, unknown> }>) => Promise<unknown>;

/** Definitions of structured properties: create, update, upsert, read, soft delete, restore, hard delete. */
export class PropertyDefinitionService {
  constructor(
    private readonly ctx: CatalogContext,
    /** Definitions for readers (search filters), shared with the visibility of values. */
    private readonly readers: DefinitionCache,
    /** The one write path (built with this domain's owners, so handed over once it exists). */
    private readonly route: PipelineRoute,
  ) {}

  /** Authenticates the actor and requires MANAGE_STRUCTURED_PROPERTIES (before the input is read). */
  async manager(actor: unknown): Promise<string> {
    const who = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor as Actor, 'MANAGE_STRUCTURED_PROPERTIES');
    return who;
  }

  /**
   * Creates a definition from the canonical input (the aspect's JSON, and the URN when the caller names
   * one), with its settings when given; CONFLICT when the URN exists (also soft-deleted). `prior` are
   * problems a decoder found already, reported with these in one answer.
   */
  async create(
    actor: Actor,
    input: CanonicalDefinition | undefined,
    options: { settings?: StructuredPropertySettingsInput; prior?: readonly Violation[] } = {},
  ): Promise<StructuredPropertyView> {
    await this.manager(actor);
    const violations: Violation[] = [...(options.prior ?? [])];
    const draft = input && readRestDefinition(input.value, violations, { urn: input.urn });
    const normalized = draft && normalizeDraft(draft, this.ctx.registry, REST_PATHS, violations);
    const settings = options.settings ? applySettingsInput(undefined, options.settings) : undefined;
    if (settings) violations.push(...settingsViolations(settings, '/settings'));
    throwIfViolations(violations, 'invalid structured property definition');
    const { urn, definition } = normalized!;
    const edit: DefinitionEdit = { kind: 'create', definition, ...(settings ? { settings } : {}) };
    const after = await this.writeEdit(actor, urn, edit, 'invalid structured property definition');
    return viewOf(definitionInfoOf(after.get(urn))!);
  }

  /** One edit of one definition through the write path; the entity as it is after the write. */
  private async writeEdit(
    actor: Actor,
    urn: string,
    edit: DefinitionEdit,
    message: string,
  ): Promise<Map<string, StoredEntity | undefined>> {
    const item: WriteItem = { op: 'edit', urn, aspect: DEFINITION_ASPECT, edit, path: '' };
    return (await this.route.pipeline().write(actor, [item], { message })).after;
  }

  /** A create: refused when the entity exists; the definition, stamped, with its settings when given. */
  private async planCreate(
    urn: string,
    edit: Extract<DefinitionEdit, { kind: 'create' }>,
    entity: StoredEntity | undefined,
    who: string,
  ): Promise<OwnedChange> {
    const existing = definitionInfoOf(entity);
    if (existing || entity) {
      const state = existing?.removed ? ' (soft-deleted: restore it or hard-delete it first)' : '';
      throw new CatalogError('CONFLICT', `structured property ${urn} already exists${state}`);
    }
    const put = this.definitionChange(who, urn, edit.definition, undefined);
    if (!edit.settings) return { put };
    await this.requireBadgeFree(urn, edit.settings, undefined, '/settings/showAsAssetBadge');
    return { put, also: { [SETTINGS_ASPECT]: this.settingsChange(who, edit.settings) } };
  }

  /**
   * Creates or replaces whole definitions (canonical inputs, item `i` reported under `/<i>`) in one
   * atomic commit. `prior[i]` are the problems a decoder found in item `i` already (left out of
   * `inputs` as undefined when it could not be decoded), reported with these in one answer.
   */
  async upsertMany(
    actor: Actor,
    inputs: ReadonlyArray<CanonicalDefinition | undefined>,
    prior: ReadonlyArray<readonly Violation[]>,
    write: EntityBatchWrite,
  ): Promise<DefinitionUpsertResult[]> {
    // Authenticated and authorized before the input is read (the write path checks the privilege again).
    await this.manager(actor);
    const violations: Violation[] = [];
    const entries: Array<{ urn: string; definition: StructuredPropertyDefinition; prefix: string }> = [];
    inputs.forEach((input, i) => {
      // Item by item, what a decoder found first: one answer lists the file's problems in its order.
      violations.push(...(prior[i] ?? []));
      if (!input) return;
      const prefix = `/${i}`;
      const draft = readRestDefinition(input.value, violations, { prefix, urn: input.urn });
      const normalized = draft && normalizeDraft(draft, this.ctx.registry, restPaths(prefix), violations);
      if (!normalized) return;
      if (entries.some((e) => e.urn === normalized.urn)) {
        violations.push({ path: `${prefix}/`, message: `${normalized.urn} is defined twice` });
      }
      entries.push({ ...normalized, prefix });
    });
    throwIfViolations(violations, 'invalid structured property definition');
    if (entries.length === 0) return [];
    // The write itself goes through the one write path: the definitions' owner checks and plans each
    // item there exactly as in any batch (versions, breaking changes, soft-deleted properties).
    const urns = entries.map((e) => e.urn);
    const aspects = [DEFINITION_ASPECT, 'status', SETTINGS_ASPECT];
    const before = new Map((await this.ctx.adapter.readEntities(urns, aspects)).map((e) => [e.urn, definitionInfoOf(e)] as const));
    const items = entries.map(({ urn, prefix }) => ({ urn, aspects: { [DEFINITION_ASPECT]: inputs[Number(prefix.slice(1))]!.value } }));
    await write(actor, items).catch((error: unknown) => {
      // The write path reports under `/<i>/aspects/propertyDefinition` (no index for one item): back to `/<i>`.
      throw withPaths(
        error,
        (path) => {
          const m = /^(\/\d+)?\/aspects\/[^/]+(.*)$/.exec(path);
          return m ? `${entries.length === 1 ? entries[0]!.prefix : (m[1] ?? '')}${m[2]}` : path;
        },
        'refused structured property change',
      );
    });
    const after = new Map((await this.ctx.adapter.readEntities(urns, aspects)).map((e) => [e.urn, definitionInfoOf(e)!] as const));
    return entries.map(({ urn }) => {
      const was = before.get(urn);
      const now = after.get(urn)!;
      const outcome = !was ? 'created' : JSON.stringify(was.definition) === JSON.stringify(now.definition) ? 'unchanged' : 'updated';
      return { outcome, property: viewOf(now) };
    });
  }

  /**
   * Definitions in a batch of the one write path (canonical: the aspect as stored, REST shape): each
   * checked as a REST write of the definition checks it, then planned inside the unit of work (created,
   * replaced with its version rules, or left as it is). Violations under each item's path.
   */
  prepareDefinitions(items: readonly OwnedItem[], violations: Violation[]): OwnerBatch {
    const wanted = new Map<number, { definition: StructuredPropertyDefinition; paths: DraftPaths }>();
    const check = (item: OwnedItem, value: unknown, found: Violation[]) => {
      const paths = restPaths(item.path);
      const draft = readRestDefinition(value, found, { prefix: item.path, urn: item.urn });
      const normalized = draft && normalizeDraft(draft, this.ctx.registry, paths, found);
      return normalized ? { definition: normalized.definition, paths } : undefined;
    };
    for (const item of items) {
      if (item.op === 'delete') {
        violations.push({ path: item.path, message: `"${item.aspect}" is managed by its own API and cannot be deleted directly` });
        continue;
      }
      const wish = item.op === 'upsert' ? check(item, item.value, violations) : undefined;
      if (wish) wanted.set(item.index, wish);
    }
    return {
      plan: (item, entity, step) => {
        // This domain's own edits (checked by its service already): a create, an update.
        if (item.op === 'edit') {
          const edit = item.edit as DefinitionEdit;
          return edit.kind === 'create'
            ? this.planCreate(item.urn, edit, entity, step.who)
            : this.planUpdate(edit.update, entity, step.who);
        }
        // A patch applies to the definition as the unit of work reads it, then is checked as a whole write.
        const patched =
          item.op === 'patch'
            ? applyJsonPatch(entity?.aspects[DEFINITION_ASPECT]?.value, item.operations ?? [], {
                describe: `${DEFINITION_ASPECT} of ${item.urn}`,
                prefix: item.patchPath ?? '/patch',
                ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}),
              })
            : undefined;
        const wish = patched ? check(item, stripStamps(patched), step.problems) : wanted.get(item.index);
        if (!wish) return undefined;
        const { urn } = item;
        const stored = definitionInfoOf(entity);
        if (!stored) return { put: this.definitionChange(step.who, urn, wish.definition, undefined) };
        if (stored.removed) {
          step.problems.push({ path: wish.paths.qualifiedName, message: softDeletedMessage(urn, 'updating its definition') });
          return undefined;
        }
        const conflicts: Violation[] = [];
        const { version, bumped } = resolveVersion(stored.definition.version, wish.definition.version, wish.paths.version, conflicts);
        const next: StructuredPropertyDefinition = { ...wish.definition, ...(version !== undefined ? { version } : {}) };
        if (!bumped)
          conflicts.push(...refuseBreakingChanges(breakingChanges(stored.definition, next, wish.paths), stored.definition.version, urn));
        throwIfConflicts(conflicts, 'refused structured property change');
        if (definitionContent(next) === definitionContent(stored.definition)) return undefined;
        return {
          put: this.definitionChange(step.who, urn, next, stored),
          ...(bumped ? { jobs: [cleanupJob(urn, stored.incarnation)] } : {}),
        };
      },
    };
  }

  /** `status` of structured properties in a batch: soft delete and restore, as `setRemoved`. */
  prepareStatus(items: readonly OwnedItem[], violations: Violation[]): OwnerBatch {
    for (const item of items) {
      if (item.op === 'upsert') violations.push(...this.ctx.registry.validateAspect('status', item.value, item.path));
      else
        violations.push({
          path: item.path,
          message: `"status" of a structured property is written whole, never ${item.op === 'patch' ? 'patched in a batch' : 'deleted directly'}`,
        });
    }
    return {
      plan: (item, entity) => {
        const info = definitionInfoOf(entity);
        if (!info) throw new CatalogError('NOT_FOUND', `structured property ${item.urn} does not exist`);
        const removed = (item.value as JsonObject).removed === true;
        return info.removed === removed ? undefined : { put: { value: { removed } } };
      },
    };
  }

  /** `structuredPropertySettings` in a batch: each checked as `writeSettings` checks one. */
  async prepareSettings(actor: Actor, items: readonly OwnedItem[], violations: Violation[]): Promise<OwnerBatch> {
    const upserts = items.filter((item) => {
      if (item.op === 'upsert') return true;
      violations.push({
        path: item.path,
        message: `"${item.aspect}" is written whole, never ${item.op === 'patch' ? 'patched in a batch' : 'deleted directly'}`,
      });
      return false;
    });
    const pathOf = new Map(upserts.map((item) => [item.index, item.path]));
    const planner = await this.prepareSettingsBulk(
      actor,
      upserts.map((item) => ({ index: item.index, urn: item.urn, value: item.value })),
      (index) => pathOf.get(index) ?? '',
      violations,
    );
    return {
      plan: async (item, entity, step) => {
        // One settings write alone answers as the property's own route does: NOT_FOUND without a definition.
        if (items.length === 1 && !definitionInfoOf(entity))
          throw new CatalogError('NOT_FOUND', `structured property ${item.urn} does not exist`);
        const put = await planner(item.urn, entity, step.problems);
        return put ? { put } : undefined;
      },
    };
  }

  /**
   * A change of a stored definition (`DefinitionUpdate`, what GraphQL `updateStructuredProperty` is
   * decoded into): texts replaced, lists appended, SINGLE → MULTIPLE, version, settings flags.
   */
  async update(actor: Actor, update: DefinitionUpdate): Promise<StructuredPropertyView> {
    await this.manager(actor);
    const urn = requirePropertyUrn(update.urn);
    const after = await this.writeEdit(actor, urn, { kind: 'update', update }, `invalid update of ${urn}`);
    return viewOf(definitionInfoOf(after.get(urn))!);
  }

  /** An update planned on the definition as the unit of work reads it (see `update`). */
  private async planUpdate(update: DefinitionUpdate, entity: StoredEntity | undefined, who: string): Promise<OwnedChange | undefined> {
    const urn = update.urn;
    const stored = definitionInfoOf(entity);
    if (!stored) throw new CatalogError('NOT_FOUND', `structured property ${urn} does not exist`);
    if (stored.removed) {
      const message = softDeletedMessage(urn, 'updating its definition');
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/urn', message }] });
    }
    const violations: Violation[] = [];
    const conflicts: Violation[] = [];
    const next = this.applyUpdate(stored, update, violations);
    checkVersionFormat(update.version, '/version', violations);
    // Settings: the flags given over the stored ones; written (and stamped) only when one changes.
    const storedSettings = stored.settings;
    const mergedSettings = update.settings ? applySettingsInput(storedSettings, update.settings) : undefined;
    if (mergedSettings) violations.push(...settingsViolations(mergedSettings, '/settings'));
    throwIfViolations(violations, `invalid update of ${urn}`);
    const settingsChanged = mergedSettings !== undefined && !sameFlags(storedSettings, mergedSettings);
    if (settingsChanged) await this.requireBadgeFree(urn, mergedSettings, storedSettings, '/settings/showAsAssetBadge');
    const { version, bumped } = resolveVersion(stored.definition.version, update.version, '/version', conflicts);
    if (version !== undefined) next.version = version;
    if (!bumped)
      conflicts.push(...refuseBreakingChanges(breakingChanges(stored.definition, next, UPDATE_PATHS), stored.definition.version, urn));
    throwIfConflicts(conflicts, `refused update of ${urn}`);
    const definitionChanged = definitionContent(next) !== definitionContent(stored.definition);
    if (!definitionChanged && !settingsChanged) return undefined;
    const change: OwnedChange = {};
    if (definitionChanged) change.put = this.definitionChange(who, urn, next, stored);
    if (settingsChanged) change.also = { [SETTINGS_ASPECT]: this.settingsChange(who, mergedSettings) };
    if (bumped) change.jobs = [cleanupJob(urn, stored.incarnation)];
    return change;
  }

  private applyUpdate(stored: DefinitionInfo, update: DefinitionUpdate, violations: Violation[]): StructuredPropertyDefinition {
    const next = JSON.parse(JSON.stringify(stored.definition)) as StructuredPropertyDefinition;
    if (update.displayName !== undefined) next.displayName = update.displayName;
    if (update.description !== undefined) next.description = update.description;
    if (update.immutable !== undefined) next.immutable = update.immutable;
    if (update.multiple === true) next.cardinality = 'MULTIPLE';
    if (update.addEntityTypes) {
      const added = normalizeEntityTypes(
        update.addEntityTypes,
        '/addEntityTypes',
        attachableEntityTypes(this.ctx.registry),
        violations,
        'entity type',
      );
      next.entityTypes = [...next.entityTypes, ...added.filter((t) => !next.entityTypes.includes(t))];
    }
    const newTypes = update.addAllowedTypes;
    if (newTypes?.length) {
      if (stored.valueType !== 'urn') {
        violations.push({ path: '/addAllowedTypes', message: `applies only to urn properties, not to ${stored.valueType}` });
      } else {
        const added = normalizeEntityTypes(newTypes, '/addAllowedTypes', this.ctx.registry.entityTypeNames(), violations, 'entity type');
        const existing = next.typeQualifier?.allowedTypes ?? [];
        next.typeQualifier = { allowedTypes: [...existing, ...added.filter((t) => !existing.includes(t))] };
      }
    }
    if (update.addAllowedValues) {
      violations.push(...(update.allowedValueProblems ?? []));
      const added = normalizeAllowedValues(
        update.addAllowedValues,
        stored.valueType,
        next.typeQualifier?.allowedTypes,
        (i) => `/addAllowedValues/${i}`,
        violations,
      );
      const merged = [...(next.allowedValues ?? [])];
      for (const entry of added) {
        const same = merged.findIndex((m) => JSON.stringify(m.value) === JSON.stringify(entry.value));
        // Appending a value that is already allowed is idempotent; a new description replaces the old one.
        if (same < 0) merged.push(entry);
        else if (entry.description !== undefined) merged[same] = { ...merged[same]!, description: entry.description };
      }
      next.allowedValues = merged;
    }
    return next;
  }

  /** The settings aspect to store, stamped with who changed it and when. */
  private settingsChange(actor: Actor, settings: StructuredPropertySettings): { value: JsonObject } {
    return { value: settingsToJson({ ...settings, lastModified: { time: this.ctx.clock(), actor: actorUrn(actor) } }) };
  }

  /** INVALID_INPUT when these settings make the property an asset badge while another property is one. */
  private async requireBadgeFree(
    urn: string,
    next: StructuredPropertySettings,
    stored: StructuredPropertySettings | undefined,
    path: string,
  ): Promise<void> {
    if (!next.showAsAssetBadge || stored?.showAsAssetBadge) return;
    const other = await otherBadgeHolder(this.ctx, urn);
    if (other === undefined) return;
    const message = `only one structured property may be shown as an asset badge, and ${other} is; turn its showAsAssetBadge off first`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path, message }] });
  }

  /** Settings aspects of a bulk write (`catalog.entities.upsertMany`, ingestion): checked as `writeSettings` checks one. */
  async prepareSettingsBulk(
    actor: Actor,
    items: ReadonlyArray<{ index: number; urn: string; value: unknown }>,
    prefix: (index: number) => string,
    violations: Violation[],
  ): Promise<(urn: string, current: StoredEntity | undefined, problems: Violation[]) => Promise<{ value: JsonObject } | undefined>> {
    const who = await this.manager(actor);
    const wanted = new Map<string, { settings: StructuredPropertySettings; path: string }>();
    for (const { index, urn, value } of items) {
      const found = this.ctx.registry.validateAspect(SETTINGS_ASPECT, value, prefix(index));
      violations.push(...found);
      if (found.length) continue;
      const settings = fillSettings(value as JsonObject);
      violations.push(...settingsViolations(settings, prefix(index)));
      wanted.set(urn, { settings, path: prefix(index) });
    }
    return async (urn, current, problems) => {
      const wish = wanted.get(urn);
      if (!wish) return undefined;
      const stored = definitionInfoOf(current);
      if (!stored) {
        problems.push({ path: wish.path, message: `structured property ${urn} does not exist: create its definition first` });
        return undefined;
      }
      if (stored.removed) {
        problems.push({ path: wish.path || '/', message: softDeletedMessage(urn, 'changing its settings') });
        return undefined;
      }
      if (sameFlags(stored.settings, wish.settings)) return undefined;
      await this.requireBadgeFree(urn, wish.settings, stored.settings, `${wish.path}/showAsAssetBadge`);
      return this.settingsChange(who, wish.settings);
    };
  }

  private definitionChange(
    actor: Actor,
    urn: string,
    definition: StructuredPropertyDefinition,
    stored: DefinitionInfo | undefined,
  ): AspectChange {
    const now = this.ctx.clock();
    const who = actorUrn(actor);
    const stamped: StructuredPropertyDefinition = {
      ...canonicalDefinition(definition),
      created: stored?.definition.created ?? { time: now, actor: who },
      lastModified: { time: now, actor: who },
    };
    const incarnation = stored?.incarnation || newIncarnation();
    return { value: definitionToJson(stamped), systemMetadata: incarnationMetadata(incarnation) };
  }

  // --- reads ----------------------------------------------------------------------------------------

  async get(actor: Actor, urn: string): Promise<StructuredPropertyView | undefined> {
    await this.ctx.authenticate(actor);
    requirePropertyUrn(urn);
    const [entity] = await this.ctx.adapter.readEntities([urn], [DEFINITION_ASPECT, 'status', SETTINGS_ASPECT]);
    const info = definitionInfoOf(entity);
    return info ? viewOf(info) : undefined;
  }

  async getReadBack(actor: Actor, urn: string): Promise<PropertyReadBack | undefined> {
    const view = await this.get(actor, urn);
    return view ? toReadBack(view.urn, view.definition) : undefined;
  }

  /** Definitions in URN order; soft-deleted ones only with `includeRemoved`. */
  async list(
    actor: Actor,
    options: { includeRemoved?: boolean; afterUrn?: string; limit?: number } = {},
  ): Promise<{ properties: StructuredPropertyView[]; nextAfterUrn?: string }> {
    await this.ctx.authenticate(actor);
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${String(limit)}`, {
        details: [{ path: '/limit', message: 'must be an integer from 1 to 1000' }],
      });
    }
    const properties: StructuredPropertyView[] = [];
    let afterUrn = options.afterUrn;
    for (;;) {
      const page: StoredEntity[] = await this.ctx.adapter.scanEntities({
        entityType: STRUCTURED_PROPERTY_ENTITY,
        requireAspect: DEFINITION_ASPECT,
        aspectNames: [DEFINITION_ASPECT, 'status'],
        afterUrn,
        limit: limit - properties.length,
      });
      for (const entity of page) {
        const info = definitionInfoOf(entity);
        if (info && (options.includeRemoved || !info.removed)) properties.push(viewOf(info));
      }
      if (page.length === 0 || properties.length >= limit) {
        const last = page[page.length - 1]?.urn;
        return { properties, ...(properties.length >= limit && last ? { nextAfterUrn: last } : {}) };
      }
      afterUrn = page[page.length - 1]!.urn;
    }
  }

  /**
   * What a search filter or facet `structuredProperties.<qualifiedName>` means: unknown and soft-deleted
   * properties are INVALID_INPUT naming the property.
   */
  async resolveFilterField(actor: Actor, qualifiedName: string): Promise<ResolvedPropertyField> {
    await this.ctx.authenticate(actor);
    const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
    const path = `structuredProperties.${qualifiedName}`;
    const info = knownUrnProblem(urn) ? undefined : await this.readers.one(urn);
    if (!info) {
      const message = `unknown structured property "${qualifiedName}"`;
      throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
    }
    if (info.removed) {
      const message = softDeletedMessage(urn, 'filtering on it');
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path, message }] });
    }
    return filterFieldOf(info);
  }

  /**
   * What a search filter or facet `structuredProperties.<qualifiedName>` means, as the search service
   * sees it: a property without a definition (hard-deleted, or never created) resolves to a field that
   * no value matches; a soft-deleted one is INVALID_INPUT naming it; a name that cannot be a property
   * URN is INVALID_INPUT too.
   */
  async resolveSearchField(actor: Actor, qualifiedName: string): Promise<ResolvedPropertyField> {
    await this.ctx.authenticate(actor);
    const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
    const path = `structuredProperties.${qualifiedName}`;
    const problem = knownUrnProblem(urn);
    if (problem !== undefined) {
      const message = `"${qualifiedName}" cannot name a structured property: ${problem}`;
      throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
    }
    const info = await this.readers.one(urn);
    if (!info) return absentFilterField(urn);
    if (info.removed) {
      const message = softDeletedMessage(urn, 'filtering on it');
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path, message }] });
    }
    return filterFieldOf(info);
  }

  /**
   * `resolveSearchField` from the definitions cached for readers, without reading or asking for the
   * change token: undefined when the property is not cached or soft-deleted (the full resolution then
   * says why). Valid as of the cache's `currentToken`.
   */
  cachedFilterField(qualifiedName: string): ResolvedPropertyField | undefined {
    const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
    const info = this.readers.peek(urn);
    if (info === null) return absentFilterField(urn);
    return info && !info.removed ? filterFieldOf(info) : undefined;
  }

  // --- lifecycle ----------------------------------------------------------------------------------

  /** Writes `status { removed }`; idempotent. NOT_FOUND when the property does not exist. */
  async setRemoved(actor: Actor, urn: string, removed: boolean): Promise<StructuredPropertyView> {
    await this.manager(actor);
    requirePropertyUrn(urn);
    // The status owner's write: NOT_FOUND without a definition, nothing written when already so.
    const item: WriteItem = { op: 'upsert', urn, aspect: 'status', value: { removed }, path: '' };
    const { after } = await this.route.pipeline().write(actor, [item], { message: `invalid status of ${urn}` });
    return viewOf(definitionInfoOf(after.get(urn))!);
  }

  /**
   * The reported deletion (`catalog.entities.deleteEntity`, the command line's `delete`): soft unless
   * `hard`, with the number of entities carrying values of the property; a dry run authorizes, checks
   * and counts, and writes nothing.
   */
  async deletion(actor: Actor, urn: string, options: { hard: boolean; dryRun: boolean }): Promise<EntityDeletion> {
    await this.manager(actor);
    requirePropertyUrn(urn);
    const [entity] = await this.ctx.adapter.readEntities([urn], [DEFINITION_ASPECT, 'status']);
    const info = definitionInfoOf(entity);
    // A leftover entity without a definition can still be hard-deleted (as hardDelete allows).
    if (!entity || (!info && !options.hard)) throw new CatalogError('NOT_FOUND', `structured property ${urn} does not exist`);
    const base = { urn, entityType: STRUCTURED_PROPERTY_ENTITY, dryRun: options.dryRun };
    if (options.hard) {
      if (options.dryRun)
        return {
          ...base,
          mode: 'hard',
          changed: true,
          entitiesWithValues: await propertyValueIndexOf(this.ctx.adapter, this.ctx.registry).countEntitiesWithPropertyValues(urn),
        };
      const { entitiesToClean } = await this.hardDelete(actor, urn);
      return { ...base, mode: 'hard', changed: true, entitiesWithValues: entitiesToClean };
    }
    // Soft: the values written under the current definition are hidden and kept (older ones are being cleaned anyway).
    const changed = info?.removed !== true;
    const entitiesWithValues = await propertyValueIndexOf(this.ctx.adapter, this.ctx.registry).countEntitiesWithPropertyValues(
      urn,
      info!.key,
    );
    if (!options.dryRun && changed) await this.setRemoved(actor, urn, true);
    return { ...base, mode: 'soft', changed, entitiesWithValues };
  }

  /**
   * Removes the definition at once and queues the durable clean-up of its values, in one commit.
   * Works from the active and the soft-deleted state; NOT_FOUND when there is nothing to delete.
   */
  async hardDelete(actor: Actor, urn: string): Promise<HardDeleteResult> {
    await this.manager(actor);
    requirePropertyUrn(urn);
    // The entity's deletion in the write path: its owner queues the clean-up of the values in the same commit.
    const entitiesToClean = await propertyValueIndexOf(this.ctx.adapter, this.ctx.registry).countEntitiesWithPropertyValues(urn);
    const { before } = await this.route
      .pipeline()
      .write(actor, [{ op: 'deleteEntity', urn, path: '/urn' }], { message: `cannot delete ${urn}` });
    // Nothing was there, so nothing was written.
    if (!before.get(urn)) throw new CatalogError('NOT_FOUND', `structured property ${urn} does not exist`);
    return { urn, entitiesToClean };
  }
}

/** A property without a definition: a key no value is ever written under, so nothing matches. */
function absentFilterField(urn: string): ResolvedPropertyField {
  return { propertyUrn: urn, definitionKey: NO_DEFINITION_KEY, valueKind: 'string', valueType: 'string' };
}

function filterFieldOf(info: DefinitionInfo): ResolvedPropertyField {
  return {
    propertyUrn: info.urn,
    definitionKey: info.key,
    valueKind: info.valueType === 'number' ? 'number' : 'string',
    valueType: info.valueType,
  };
}

/**
 * DataHub's other rule: at most one property is shown as an asset badge. The other property that is
 * (from the search documents, where the flag is the `showAsAssetBadge` field), or undefined.
 */
export async function otherBadgeHolder(ctx: CatalogContext, urn: string): Promise<string | undefined> {
  const found = await ctx.adapter.search({
    entityTypes: [STRUCTURED_PROPERTY_ENTITY],
    filter: [[{ field: { kind: 'field', name: 'showAsAssetBadge' }, operator: 'EQUAL', values: ['true'], negated: false }]],
    includeRemoved: true,
    order: 'urn',
    limit: 2,
  });
  return found.hits.map((h) => h.urn).find((u) => u !== urn);
}

/** A stored definition as a write takes it: its stamps are the catalog's, not the writer's. */
function stripStamps(value: JsonObject): JsonObject {
  const { created: _created, lastModified: _lastModified, ...rest } = value;
  return rest;
}
