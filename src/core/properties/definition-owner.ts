import { actorUrn, type Actor } from '../access/actor';
import type { JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import { incarnationMetadata, newIncarnation } from './definition-key';
import type { OwnedChange, OwnedItem, OwnerBatch } from '../entities/owner';
import type { AspectChange } from '../entities/write-plan';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
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
import { definitionToJson, readRestDefinition, restPaths } from './definition-shapes';
import { definitionInfoOf, type DefinitionInfo } from './lookup';
import { DEFINITION_ASPECT, STRUCTURED_PROPERTY_ENTITY, type StructuredPropertyDefinition, type DefinitionUpdate } from './types';
import { applyJsonPatch } from '../entities/json-patch';
import { softDeletedMessage, throwIfConflicts } from './messages';
import {
  applySettingsInput,
  fillSettings,
  sameFlags,
  SETTINGS_ASPECT,
  settingsToJson,
  settingsViolations,
  type StructuredPropertySettings,
} from './settings';

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
export type DefinitionEdit =
  | { kind: 'create'; definition: StructuredPropertyDefinition; settings?: StructuredPropertySettings }
  | { kind: 'update'; update: DefinitionUpdate };

/**
 * The owner of a structured property's `propertyDefinition`, `structuredPropertySettings` and `status`:
 * checks a batch's items once, then plans each inside the unit of work (created, replaced with its
 * version rules, updated by this domain's own edits, soft-deleted or restored). Built from the catalog's
 * context alone; `catalog.properties` writes through the pipeline that holds it.
 */
export class DefinitionOwner {
  constructor(private readonly ctx: CatalogContext) {}

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
    // The pipeline authenticated the actor and checked MANAGE_STRUCTURED_PROPERTIES for the batch.
    const who = actorUrn(actor);
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
}

/**
 * DataHub's other rule: at most one property is shown as an asset badge. The other property that is
 * (from the search documents, where the flag is the `showAsAssetBadge` field), or undefined.
 */
async function otherBadgeHolder(ctx: CatalogContext, urn: string): Promise<string | undefined> {
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
