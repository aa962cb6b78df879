import { type Actor } from '../access/actor';
import type { StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { EntityDeletion } from '../entities/owner';
import type { DefinitionEdit } from './definition-owner';
import type { Admission, WritePipeline, WriteItem } from '../entities/write-pipeline';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { normalizeDraft } from './definition-rules';
import { readRestDefinition, REST_PATHS, restPaths, toReadBack } from './definition-shapes';
import { definitionInfoOf, type DefinitionCache, type DefinitionInfo } from './lookup';
import {
  DEFINITION_ASPECT,
  STRUCTURED_PROPERTY_ENTITY,
  type DefinitionUpsertResult,
  type HardDeleteResult,
  type PropertyReadBack,
  type StructuredPropertyDefinition,
  type StructuredPropertyView,
  type DefinitionUpdate,
  type RestPropertyDefinitionInput,
} from './types';
import { requirePropertyUrn } from './messages';
import { propertyValueIndexOf } from '../entities/property-values';
import { applySettingsInput, SETTINGS_ASPECT, settingsViolations, type StructuredPropertySettingsInput } from './settings';

/** A definition as the rules take it: the `propertyDefinition` aspect as stored (REST spelling), and the URN it is written to when the input names one. */
export interface CanonicalDefinition {
  urn?: string;
  value: RestPropertyDefinitionInput;
}

function viewOf(info: DefinitionInfo): StructuredPropertyView {
  return {
    urn: info.urn,
    definition: info.definition,
    removed: info.removed,
    definitionKey: info.key,
    ...(info.settings ? { settings: info.settings } : {}),
  };
}

/** Definitions of structured properties: create, update, upsert, read, soft delete, restore, hard delete. */
export class PropertyDefinitionService {
  constructor(
    private readonly ctx: CatalogContext,
    /** Definitions for readers (search filters), shared with the visibility of values. */
    private readonly readers: DefinitionCache,
    /** The one write path: it authenticates and authorizes each write, once. */
    private readonly pipeline: WritePipeline,
  ) {}

  /** The actor admitted by the write path (MANAGE_STRUCTURED_PROPERTIES) before the input is read. */
  manager(actor: unknown): Promise<Admission> {
    return this.pipeline.admit(actor, ['MANAGE_STRUCTURED_PROPERTIES']);
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
    const admitted = await this.manager(actor);
    const violations: Violation[] = [...(options.prior ?? [])];
    const draft = input && readRestDefinition(input.value, violations, { urn: input.urn });
    const normalized = draft && normalizeDraft(draft, this.ctx.registry, REST_PATHS, violations);
    const settings = options.settings ? applySettingsInput(undefined, options.settings) : undefined;
    if (settings) violations.push(...settingsViolations(settings, '/settings'));
    throwIfViolations(violations, 'invalid structured property definition');
    const { urn, definition } = normalized!;
    const edit: DefinitionEdit = { kind: 'create', definition, ...(settings ? { settings } : {}) };
    const after = await this.writeEdit(admitted, urn, edit, 'invalid structured property definition');
    return viewOf(definitionInfoOf(after.get(urn))!);
  }

  /** One edit of one definition through the write path; the entity as it is after the write. */
  private async writeEdit(
    admitted: Admission,
    urn: string,
    edit: DefinitionEdit,
    message: string,
  ): Promise<Map<string, StoredEntity | undefined>> {
    const item: WriteItem = { op: 'edit', urn, aspect: DEFINITION_ASPECT, edit, path: '' };
    return (await this.pipeline.write(admitted, [item], { message })).after;
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
  ): Promise<DefinitionUpsertResult[]> {
    // Authenticated and authorized before the input is read (the write path does not check it again).
    const admitted = await this.manager(actor);
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
    // Each definition reports under `/<i>`, as it sits in the caller's list.
    const items = entries.map(({ urn, prefix }): WriteItem => ({
      op: 'upsert',
      urn,
      aspect: DEFINITION_ASPECT,
      value: inputs[Number(prefix.slice(1))]!.value,
      path: prefix,
    }));
    await this.pipeline.write(admitted, items, { message: 'refused structured property change' });
    const after = new Map((await this.ctx.adapter.readEntities(urns, aspects)).map((e) => [e.urn, definitionInfoOf(e)!] as const));
    return entries.map(({ urn }) => {
      const was = before.get(urn);
      const now = after.get(urn)!;
      const outcome = !was ? 'created' : JSON.stringify(was.definition) === JSON.stringify(now.definition) ? 'unchanged' : 'updated';
      return { outcome, property: viewOf(now) };
    });
  }

  /**
   * A change of a stored definition (`DefinitionUpdate`, what GraphQL `updateStructuredProperty` is
   * decoded into): texts replaced, lists appended, SINGLE → MULTIPLE, version, settings flags.
   */
  async update(actor: Actor | Admission, update: DefinitionUpdate): Promise<StructuredPropertyView> {
    const admitted = await this.manager(actor);
    const urn = requirePropertyUrn(update.urn);
    const after = await this.writeEdit(admitted, urn, { kind: 'update', update }, `invalid update of ${urn}`);
    return viewOf(definitionInfoOf(after.get(urn))!);
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

  // --- lifecycle ----------------------------------------------------------------------------------

  /** Writes `status { removed }`; idempotent. NOT_FOUND when the property does not exist. */
  async setRemoved(actor: Actor | Admission, urn: string, removed: boolean): Promise<StructuredPropertyView> {
    const admitted = await this.manager(actor);
    requirePropertyUrn(urn);
    // The status owner's write: NOT_FOUND without a definition, nothing written when already so.
    const item: WriteItem = { op: 'upsert', urn, aspect: 'status', value: { removed }, path: '' };
    const { after } = await this.pipeline.write(admitted, [item], { message: `invalid status of ${urn}` });
    return viewOf(definitionInfoOf(after.get(urn))!);
  }

  /**
   * The reported deletion (`catalog.entities.deleteEntity`, the command line's `delete`): soft unless
   * `hard`, with the number of entities carrying values of the property; a dry run authorizes, checks
   * and counts, and writes nothing.
   */
  async deletion(actor: Actor, urn: string, options: { hard: boolean; dryRun: boolean }): Promise<EntityDeletion> {
    const admitted = await this.manager(actor);
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
      const { entitiesToClean } = await this.hardDelete(admitted, urn);
      return { ...base, mode: 'hard', changed: true, entitiesWithValues: entitiesToClean };
    }
    // Soft: the values written under the current definition are hidden and kept (older ones are being cleaned anyway).
    const changed = info?.removed !== true;
    const entitiesWithValues = await propertyValueIndexOf(this.ctx.adapter, this.ctx.registry).countEntitiesWithPropertyValues(
      urn,
      info!.key,
    );
    if (!options.dryRun && changed) await this.setRemoved(admitted, urn, true);
    return { ...base, mode: 'soft', changed, entitiesWithValues };
  }

  /**
   * Removes the definition at once and queues the durable clean-up of its values, in one commit.
   * Works from the active and the soft-deleted state; NOT_FOUND when there is nothing to delete.
   */
  async hardDelete(actor: Actor | Admission, urn: string): Promise<HardDeleteResult> {
    const admitted = await this.manager(actor);
    requirePropertyUrn(urn);
    // The entity's deletion in the write path: its owner queues the clean-up of the values in the same commit.
    const entitiesToClean = await propertyValueIndexOf(this.ctx.adapter, this.ctx.registry).countEntitiesWithPropertyValues(urn);
    const { before } = await this.pipeline.write(admitted, [{ op: 'deleteEntity', urn, path: '/urn' }], {
      message: `cannot delete ${urn}`,
    });
    // Nothing was there, so nothing was written.
    if (!before.get(urn)) throw new CatalogError('NOT_FOUND', `structured property ${urn} does not exist`);
    return { urn, entitiesToClean };
  }
}
