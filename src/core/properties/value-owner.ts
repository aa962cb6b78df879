import { actorUrn, type Actor } from '../access/actor';
import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { AspectChange, EntityPlan } from '../entities/write-plan';
import type { OwnedChange, OwnedItem, OwnerBatch, PlanStep, PrepareContext } from '../entities/owner';
import { PROPERTY_KEYS_METADATA } from '../entities/search-document';
import { escapeToken } from './patch';
import { withPaths, type Violation } from '../../errors';
import { keyBelongsTo } from './definition-key';
import { assignmentsOf, keepsStoredValues, keysOf, loadDefinitions, propertyUrnsOf, type DefinitionInfo } from './lookup';
import { applyPropertyPatch } from './patch';
import {
  checkAssignments,
  checkImmutables,
  composeValues,
  firstValues,
  FirstValuesMetadata,
  storedValues,
  type AssignmentDraft,
} from './value-rules';
import { VALUES_ASPECT, type PropertyAssignment } from './types';
import { addPatchTarget, BulkWish, namedBy, plainValues, readValuesInput, wishOf, type ValueEdit, type Wish } from './value-input';

/** The values of a bulk write, checked, with what their plans share: the definitions read once for the batch. */
export interface BulkValues {
  who: string;
  definitions: Map<string, DefinitionInfo>;
  /** Once per unit of work: reads the definitions its stored values name that were not read yet. */
  begin(current: ReadonlyMap<string, StoredEntity>): Promise<void>;
  /** The values aspect to write on the entity of this item (undefined when nothing changes). */
  plan(item: OwnedItem, current: StoredEntity | undefined, problems: Violation[], now: number): AspectChange | undefined;
}

/** Reads the definitions of `urns` that `definitions` does not hold yet, into it. */
export async function ensureDefinitions(
  ctx: CatalogContext,
  definitions: Map<string, DefinitionInfo>,
  urns: Iterable<string>,
): Promise<void> {
  const missing: string[] = [];
  for (const urn of urns) if (!definitions.has(urn)) missing.push(urn);
  if (missing.length === 0) return;
  for (const [urn, info] of await loadDefinitions(ctx.adapter, missing)) definitions.set(urn, info);
}

/**
 * The clean-up's edit of one entity: its values of the property written under the incarnation go when
 * their key is not the property's current key (nothing changes otherwise, and for an entity gone).
 */
function staleValuesRemoved(
  item: OwnedItem,
  entity: StoredEntity | undefined,
  edit: Extract<ValueEdit, { kind: 'removeStale' }>,
): OwnedChange | undefined {
  if (!item.system) throw new Error("internal: the removal of stale values is the catalog's bookkeeping, never a user's write");
  const aspect = entity?.aspects[VALUES_ASPECT];
  if (!aspect) return undefined;
  const { propertyUrn, incarnation, currentKey } = edit;
  const keys = keysOf(aspect);
  const key = keys[propertyUrn];
  if (key === undefined || !keyBelongsTo(key, incarnation) || key === currentKey) return undefined;
  const kept = assignmentsOf(aspect).filter((a) => a.propertyUrn !== propertyUrn);
  const { [propertyUrn]: _removed, ...keptKeys } = keys;
  return {
    put: {
      value: { ...aspect.value, properties: JSON.parse(JSON.stringify(kept)) },
      systemMetadata: { ...(aspect.systemMetadata ?? {}), [PROPERTY_KEYS_METADATA]: keptKeys },
    },
  };
}

/**
 * The owner of `structuredProperties` (on any entity): checks the values of a batch's items once, then
 * plans each item inside the unit of work on the values the entity holds (whole values, JSON patches,
 * this domain's own edits, and the clean-up's bookkeeping). Built from the catalog's context alone.
 */
export class ValueOwner {
  constructor(private readonly ctx: CatalogContext) {}

  /**
   * Structured properties in a bulk write of whole entities (`catalog.entities.upsertMany`): the values
   * of every item are checked as `upsertMany` here checks them (shape, definitions), the actor must hold
   * EDIT_ENTITY_PROPERTIES, and each entity's change is then planned inside the entity writer's unit of
   * work, so that it commits atomically with the entity's other aspects. The definitions the items name
   * are read once, here; immutable values are checked against the unit of work's read of the entities
   * (before the first unit of work only when the batch is written in several).
   */
  async prepareBulk(
    actor: Actor,
    items: readonly OwnedItem[],
    violations: Violation[],
    options: { units?: number; alsoNamed?: Iterable<string> } = {},
  ): Promise<BulkValues> {
    // The pipeline authenticated the actor and checked EDIT_ENTITY_PROPERTIES for the batch.
    const who = actorUrn(actor);
    /** By the item's index in the batch. */
    const wishes: BulkWish[] = [];
    const named = new Set<string>(options.alsoNamed ?? []);
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      const { value } = item;
      const plain = plainValues(value, item);
      const drafts = plain ? plain.drafts : readValuesInput(value, violations, item.path);
      for (let i = 0; i < drafts.length; i++) named.add(drafts[i]!.propertyUrn);
      wishes[item.index] = new BulkWish(drafts, item, plain?.stored === true ? (value as JsonObject) : undefined);
    }
    // The one read of definitions for the batch; a unit of work reads more only for stored values naming others.
    const definitions = await loadDefinitions(this.ctx.adapter, named);
    for (const item of items) checkAssignments(item.urn, wishes[item.index]!.drafts, definitions, violations, item.entityType);
    if ((options.units ?? 1) > 1 && items.length > 0) {
      // Several commits: immutable values are checked against what is stored before the first one.
      const stored = await this.ctx.adapter.readEntities([...new Set(items.map((item) => item.urn))], [VALUES_ASPECT]);
      await this.ensureDefinitions(definitions, propertyUrnsOf(stored));
      const byUrn = new Map(stored.map((e) => [e.urn, e] as const));
      for (const item of items) {
        const entity = byUrn.get(item.urn);
        const wish = wishes[item.index]!;
        if (entity)
          checkImmutables(
            storedValues(entity, definitions).visible,
            wish.drafts,
            definitions,
            () => `${wish.at.path}/properties`,
            violations,
          );
      }
    }
    let stamp: AuditStamp | undefined;
    /** The system metadata of first values, by the properties they name: shared by the entities of a unit of work alike. */
    let firstMetadata: FirstValuesMetadata | undefined;
    return {
      who,
      definitions,
      begin: (current) => this.ensureDefinitions(definitions, propertyUrnsOf(current.values())),
      plan: (item, current, problems, now) => {
        const wish = wishes[item.index];
        if (!wish) return undefined;
        // One stamp per unit of work (its objects are copied where the stored value needs its own).
        if (stamp?.time !== now) {
          stamp = { time: now, actor: who };
          firstMetadata = new FirstValuesMetadata(stamp, definitions);
        }
        // No values stored yet (a new entity): nothing immutable to keep, nothing hidden to carry over.
        if (current?.aspects[VALUES_ASPECT] === undefined)
          return problems.length > 0 ? undefined : firstValues(wish.drafts, firstMetadata!, wish.stored);
        const stored = storedValues(current, definitions);
        // The drafts were checked against these definitions above: only what depends on the stored values is left.
        checkImmutables(stored.visible, wish.drafts, definitions, () => `${wish.at.path}/properties`, problems);
        if (problems.length > 0) return undefined;
        return composeValues(current, stored, wish.drafts, definitions, stamp, { visible: false }).change;
      },
    };
  }

  /**
   * `structuredProperties` in a batch of the one write path: a whole value (canonical: the aspect as
   * stored) checked as `upsertMany` checks one, or a JSON patch (`/properties/<property urn>`) applied
   * to the values the entity holds when the unit of work reads it. Deleting the aspect is refused.
   */
  async prepareItems(actor: Actor, items: readonly OwnedItem[], violations: Violation[], batch?: PrepareContext): Promise<OwnerBatch> {
    const upserts = items.filter((item) => {
      if (item.op !== 'delete') return item.op === 'upsert';
      violations.push({ path: item.path, message: `"${VALUES_ASPECT}" is managed by its own API and cannot be deleted directly` });
      return false;
    });
    // The properties the patches address are read with the rest (the values they keep are read by `begin`).
    const patched = new Set<string>();
    for (const item of items) if (item.op === 'patch') for (const op of item.operations ?? []) addPatchTarget(patched, op);
    for (const item of items) if (item.op === 'edit') namedBy(item.edit as ValueEdit, patched);
    // The clean-up's bookkeeping alone (the background removal of stale values): nothing to check or read beyond the entities.
    if (items.length > 0 && items.every((item) => item.system && (item.edit as ValueEdit).kind === 'removeStale'))
      return { plan: (item, entity) => staleValuesRemoved(item, entity, item.edit as Extract<ValueEdit, { kind: 'removeStale' }>) };
    const values = await this.prepareBulk(actor, upserts, violations, { units: batch?.units ?? 1, alsoNamed: patched });
    const { who, definitions } = values;
    const planPatch = async (item: OwnedItem, entity: StoredEntity | undefined, step: PlanStep): Promise<OwnedChange | undefined> => {
      const stored = storedValues(entity, definitions);
      const softDeleted = new Set(stored.softDeleted.map((s) => s.assignment.propertyUrn));
      let drafts: AssignmentDraft[];
      try {
        const request = { patch: item.operations, ...(item.arrayPrimaryKeys ? { arrayPrimaryKeys: item.arrayPrimaryKeys } : {}) };
        drafts = applyPropertyPatch(stored.visible, request, softDeleted);
      } catch (error) {
        throw withPaths(error, (path) => `${item.path}${path}`);
      }
      drafts = drafts.map((d) => ({ ...d, path: `${item.path}${d.path}`, urnPath: `${item.path}${d.urnPath}` }));
      await this.ensureDefinitions(
        definitions,
        drafts.map((d) => d.propertyUrn),
      );
      const removalPath = (p: string) => `${item.path}/properties/${escapeToken(p)}`;
      const plan = this.plan(who, item.urn, entity, definitions, () => ({ drafts, removalPath }), step.problems, step.now);
      const put = plan.entity?.put?.[VALUES_ASPECT];
      return put ? { put } : undefined;
    };
    return {
      begin: values.begin,
      // The pipeline found the value equal to the stored one: kept as it is when its values are all visible and stamped.
      unchanged: (item, stored) => item.op === 'upsert' && keepsStoredValues(stored, definitions),
      // An upsert is planned without waiting (no turn of the event loop per item); an edit or a patch may read definitions.
      plan: (item, entity, step) => {
        if (item.op === 'upsert') return { put: values.plan(item, entity, step.problems, step.now) };
        if (item.op === 'edit') {
          const edit = item.edit as ValueEdit;
          if (edit.kind === 'removeStale') return staleValuesRemoved(item, entity, edit);
          return this.planEdit(who, item.urn, edit, entity, definitions, step.problems, step.now);
        }
        return planPatch(item, entity, step);
      },
    };
  }

  private ensureDefinitions(definitions: Map<string, DefinitionInfo>, urns: Iterable<string>): Promise<void> {
    return ensureDefinitions(this.ctx, definitions, urns);
  }

  private plan(
    who: string,
    urn: string,
    entity: StoredEntity | undefined,
    definitions: ReadonlyMap<string, DefinitionInfo>,
    wish: Wish,
    violations: Violation[],
    now: number,
    /** The drafts were checked against these definitions already (`checkAssignments`). */
    checked = false,
  ): { visible: PropertyAssignment[]; entity?: EntityPlan } {
    const stored = storedValues(entity, definitions);
    const { drafts, removalPath } = wish(stored);
    if (!checked) checkAssignments(urn, drafts, definitions, violations);
    checkImmutables(stored.visible, drafts, definitions, removalPath, violations);
    if (violations.length > 0) return { visible: stored.visible };
    const { visible, change } = composeValues(entity, stored, drafts, definitions, { time: now, actor: who });
    return { visible, ...(change ? { entity: { urn, put: { [VALUES_ASPECT]: change } } } : {}) };
  }

  /** An edit planned on what the entity holds (definitions of what it names read first, once). */
  private async planEdit(
    who: string,
    urn: string,
    edit: Exclude<ValueEdit, { kind: 'removeStale' }>,
    entity: StoredEntity | undefined,
    definitions: Map<string, DefinitionInfo>,
    problems: Violation[],
    now: number,
  ): Promise<OwnedChange> {
    // The wish is computed once to learn which further definitions it names, then planned for real.
    const first = wishOf(edit)(storedValues(entity, definitions));
    await this.ensureDefinitions(
      definitions,
      first.drafts.map((d) => d.propertyUrn),
    );
    const violations: Violation[] = [...(edit.prior ?? [])];
    const plan = this.plan(who, urn, entity, definitions, () => first, violations, now);
    problems.push(...violations);
    const put = plan.entity?.put?.[VALUES_ASPECT];
    return { ...(put ? { put } : {}), result: plan.visible };
  }
}
