import type { Actor } from '../access/actor';
import type { StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { AspectChange, EntityPlan } from '../entities/writer';
import type { OwnedItem, OwnerBatch, ReadTransform } from '../entities/owner';
import { escapeToken } from './patch';
import { withPaths } from '../../errors';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { DecoderReport } from './graphql-input';
import { checkSchema } from '../validation';
import { fromPropertyValue } from './definition-rules';
import { loadDefinitions, propertyUrnsOf, stampedAssignmentsOf, type DefinitionInfo } from './lookup';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import { applyPropertyPatch } from './patch';
import { checkAssignments, checkImmutables, composeValues, storedValues, type AssignmentDraft, type StoredValues } from './value-rules';
import { VALUES_ASPECT, type PropertyAssignment } from './types';
import { restAssignmentSchema, restValuesEnvelopeSchema } from '../validation/schemas/structured-properties';
import { parseUrn } from '../urn';

const BULK_CHUNK = 500;

/** What to write on one entity, given what it holds now. */
type Wish = (stored: StoredValues) => { drafts: AssignmentDraft[]; removalPath: (propertyUrn: string) => string };

/**
 * Reads the canonical values input (the `structuredProperties` aspect) into drafts. Shape errors are
 * violations; an element a decoder reported already as malformed (`malformed`, by index) yields a
 * marked draft so that its property is checked too.
 */
export function readValuesInput(input: unknown, violations: Violation[], prefix = '', malformed?: ReadonlySet<number>): AssignmentDraft[] {
  const envelope = checkSchema(restValuesEnvelopeSchema, input, prefix);
  violations.push(...envelope);
  if (envelope.length) return [];
  const listPath = `${prefix}/properties`;
  const drafts: AssignmentDraft[] = [];
  (input as { properties: unknown[] }).properties.forEach((item, i) => {
    const path = `${listPath}/${i}`;
    const urnPath = `${path}/propertyUrn`;
    const propertyUrn = ((item ?? {}) as Record<string, unknown>).propertyUrn;
    if (malformed?.has(i)) {
      if (typeof propertyUrn === 'string') drafts.push({ propertyUrn, values: [], path, urnPath, malformed: true });
      return;
    }
    const found = checkSchema(restAssignmentSchema, item, path);
    violations.push(...found);
    if (found.length) {
      if (typeof propertyUrn === 'string') drafts.push({ propertyUrn, values: [], path, urnPath, malformed: true });
      return;
    }
    const { created, lastModified } = item as PropertyAssignment;
    drafts.push({
      propertyUrn: propertyUrn as string,
      values: (item as PropertyAssignment).values.map(fromPropertyValue),
      path,
      urnPath,
      ...(created || lastModified ? { sent: { ...(created ? { created } : {}), ...(lastModified ? { lastModified } : {}) } } : {}),
    });
  });
  return drafts;
}

/** Structured property values on entities: read, replace all, remove some, patch, bulk replace. */
export class PropertyValueService {
  constructor(
    private readonly ctx: CatalogContext,
    /** What readers see of stored values (values of missing, soft-deleted or superseded definitions hidden). */
    private readonly visible: ReadTransform,
  ) {}

  private async editor(actor: unknown): Promise<string> {
    const who = await this.ctx.authenticate(actor);
    await this.ctx.authorizer.require(actor as Actor, 'EDIT_ENTITY_PROPERTIES');
    return who;
  }

  /** INVALID_INPUT unless the URN names an entity type that carries structured properties. */
  private entityUrn(urn: unknown, path: string): string {
    const parsed = parseUrn(urn, path);
    const spec = this.ctx.registry.entityType(parsed.entityType, path);
    if (!spec.aspects.includes(VALUES_ASPECT)) {
      const message = `${parsed.entityType} entities carry no structured properties`;
      throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
    }
    return parsed.urn;
  }

  /** The entity's visible structured properties ([] when it has none or does not exist). */
  async get(actor: Actor, entityUrn: string): Promise<PropertyAssignment[]> {
    await this.ctx.authenticate(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    const [entity] = await this.visible(await this.ctx.adapter.readEntities([urn], [VALUES_ASPECT]));
    // The domain's answer says who set each property and when (the aspect itself reads back as written).
    return stampedAssignmentsOf(entity?.aspects[VALUES_ASPECT]);
  }

  /** Replaces all of the entity's structured properties; returns the properties it has afterwards. */
  async upsert(actor: Actor, entityUrn: string, input: unknown, decoded?: DecoderReport): Promise<PropertyAssignment[]> {
    const who = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    const violations: Violation[] = [...(decoded?.violations ?? [])];
    const drafts = readValuesInput(input, violations, '', decoded?.malformed);
    return this.write(who, urn, () => ({ drafts, removalPath: () => '/properties' }), violations);
  }

  /** Removes the named properties from the entity (absent ones are ignored); returns the properties left. */
  async remove(actor: Actor, entityUrn: string, propertyUrns: readonly string[]): Promise<PropertyAssignment[]> {
    const who = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/assetUrn');
    const violations: Violation[] = [];
    if (!Array.isArray(propertyUrns))
      violations.push({ path: '/structuredPropertyUrns', message: 'must be a list of structured property URNs' });
    else
      propertyUrns.forEach((p, i) => {
        const problem = propertyUrnProblem(p);
        if (problem) violations.push({ path: `/structuredPropertyUrns/${i}`, message: problem });
      });
    throwIfViolations(violations, `invalid removal of structured properties from ${urn}`);
    const pathOf = (p: string): string => `/structuredPropertyUrns/${propertyUrns.indexOf(p)}`;
    return this.write(who, urn, (stored) => {
      const hidden = stored.softDeleted.find((s) => propertyUrns.includes(s.assignment.propertyUrn));
      if (hidden) {
        const message = softDeletedMessage(hidden.assignment.propertyUrn, 'removing its values');
        throw new CatalogError('INVALID_INPUT', message, { details: [{ path: pathOf(hidden.assignment.propertyUrn), message }] });
      }
      const drafts = stored.visible
        .filter((a) => !propertyUrns.includes(a.propertyUrn))
        .map((a, i) => ({
          propertyUrn: a.propertyUrn,
          values: a.values.map(fromPropertyValue),
          path: `/kept/${i}`,
          urnPath: `/kept/${i}`,
        }));
      return { drafts, removalPath: pathOf };
    });
  }

  /** JSON Patch on the entity's structured properties (see property-patch.ts); returns the properties left. */
  async patch(actor: Actor, entityUrn: string, request: unknown): Promise<PropertyAssignment[]> {
    const who = await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    return this.write(who, urn, (stored) => {
      const softDeleted = new Set(stored.softDeleted.map((s) => s.assignment.propertyUrn));
      const drafts = applyPropertyPatch(stored.visible, request, softDeleted);
      return { drafts, removalPath: (p) => `/properties/${p.replace(/~/g, '~0').replace(/\//g, '~1')}` };
    });
  }

  /**
   * Replaces the structured properties of many entities: every item is checked first (nothing is
   * written when one is bad; the error lists every violation with its item index), then written in
   * atomic chunks of 500 entities.
   */
  async upsertMany(
    actor: Actor,
    items: ReadonlyArray<{ urn: string; properties: unknown }>,
  ): Promise<Array<{ urn: string; properties: PropertyAssignment[] }>> {
    const who = await this.editor(actor);
    const violations: Violation[] = [];
    const wishes: Array<{ urn: string; drafts: AssignmentDraft[] }> = [];
    const seen = new Set<string>();
    items.forEach((item, i) => {
      let urn: string;
      try {
        urn = this.entityUrn(item?.urn, `/${i}/urn`);
      } catch (error) {
        if (error instanceof CatalogError) violations.push(...error.details);
        return;
      }
      if (seen.has(urn)) violations.push({ path: `/${i}/urn`, message: `${urn} appears more than once` });
      seen.add(urn);
      wishes.push({ urn, drafts: readValuesInput({ properties: item.properties }, violations, `/${i}`) });
    });
    const definitions = await loadDefinitions(
      this.ctx.adapter,
      wishes.flatMap((w) => w.drafts.map((d) => d.propertyUrn)),
    );
    for (const wish of wishes) checkAssignments(wish.urn, wish.drafts, definitions, violations);
    throwIfViolations(violations, 'invalid structured property values');
    // Immutable values depend on what is stored: check them all before the first chunk is written.
    for (let start = 0; start < wishes.length; start += BULK_CHUNK) {
      const chunk = wishes.slice(start, start + BULK_CHUNK);
      const entities = await this.ctx.adapter.readEntities(
        chunk.map((w) => w.urn),
        [VALUES_ASPECT],
      );
      await this.ensureDefinitions(definitions, propertyUrnsOf(entities));
      const byUrn = new Map(entities.map((e) => [e.urn, e] as const));
      for (const wish of chunk) {
        const stored = storedValues(byUrn.get(wish.urn), definitions);
        checkImmutables(stored.visible, wish.drafts, definitions, () => `/${wishes.indexOf(wish)}/properties`, violations);
      }
    }
    throwIfViolations(violations, 'invalid structured property values');
    const results: Array<{ urn: string; properties: PropertyAssignment[] }> = [];
    for (let start = 0; start < wishes.length; start += BULK_CHUNK) {
      const chunk = wishes.slice(start, start + BULK_CHUNK);
      const visible = new Map<string, PropertyAssignment[]>();
      await this.ctx.writer.write(
        who,
        chunk.map((w) => w.urn),
        async (current, now) => {
          await this.ensureDefinitions(definitions, propertyUrnsOf([...current.values()]));
          const plans: EntityPlan[] = [];
          const problems: Violation[] = [];
          for (const wish of chunk) {
            const plan = this.plan(
              who,
              wish.urn,
              current.get(wish.urn),
              definitions,
              () => ({ drafts: wish.drafts, removalPath: () => '/properties' }),
              problems,
              now,
            );
            visible.set(wish.urn, plan.visible);
            if (plan.entity) plans.push(plan.entity);
          }
          throwIfViolations(problems, 'invalid structured property values');
          return { entities: plans };
        },
      );
      for (const wish of chunk) results.push({ urn: wish.urn, properties: visible.get(wish.urn) ?? [] });
    }
    return results;
  }

  /**
   * Structured properties in a bulk write of whole entities (`catalog.entities.upsertMany`): the values
   * of every item are checked as `upsertMany` here checks them (shape, definitions, immutable values), the
   * actor must hold EDIT_ENTITY_PROPERTIES, and each entity's change is then planned inside the entity
   * writer's unit of work, so that it commits atomically with the entity's other aspects.
   */
  async prepareBulk(
    actor: Actor,
    items: ReadonlyArray<{ index: number; urn: string; value: unknown }>,
    prefix: (index: number) => string,
    violations: Violation[],
    keyOf: (index: number, urn: string) => string | number = (_index, urn) => urn,
  ): Promise<
    (key: string | number, current: StoredEntity | undefined, problems: Violation[], now: number) => Promise<AspectChange | undefined>
  > {
    const who = await this.editor(actor);
    const wishes = new Map<string | number, { urn: string; drafts: AssignmentDraft[]; path: string }>();
    for (const { index, urn, value } of items) {
      wishes.set(keyOf(index, urn), {
        urn,
        drafts: readValuesInput(value, violations, prefix(index)),
        path: `${prefix(index)}/properties`,
      });
    }
    const definitions = await loadDefinitions(
      this.ctx.adapter,
      [...wishes.values()].flatMap((w) => w.drafts.map((d) => d.propertyUrn)),
    );
    for (const wish of wishes.values()) checkAssignments(wish.urn, wish.drafts, definitions, violations);
    const stored = await this.ctx.adapter.readEntities([...new Set([...wishes.values()].map((w) => w.urn))], [VALUES_ASPECT]);
    await this.ensureDefinitions(definitions, propertyUrnsOf(stored));
    const byUrn = new Map(stored.map((e) => [e.urn, e] as const));
    for (const wish of wishes.values()) {
      const entity = byUrn.get(wish.urn);
      if (entity) checkImmutables(storedValues(entity, definitions).visible, wish.drafts, definitions, () => wish.path, violations);
    }
    return async (key, current, problems, now) => {
      const wish = wishes.get(key);
      if (!wish) return undefined;
      const urn = wish.urn;
      await this.ensureDefinitions(definitions, propertyUrnsOf(current ? [current] : []));
      const plan = this.plan(who, urn, current, definitions, () => ({ drafts: wish.drafts, removalPath: () => wish.path }), problems, now);
      return plan.entity?.put?.[VALUES_ASPECT];
    };
  }

  /**
   * `structuredProperties` in a batch of the one write path: a whole value (canonical: the aspect as
   * stored) checked as `upsertMany` checks one, or a JSON patch (`/properties/<property urn>`) applied
   * to the values the entity holds when the unit of work reads it. Deleting the aspect is refused.
   */
  async prepareItems(actor: Actor, items: readonly OwnedItem[], violations: Violation[]): Promise<OwnerBatch> {
    const upserts = items.filter((item) => {
      if (item.op !== 'delete') return item.op === 'upsert';
      violations.push({ path: item.path, message: `"${VALUES_ASPECT}" is managed by its own API and cannot be deleted directly` });
      return false;
    });
    const pathOf = new Map(upserts.map((item) => [item.index, item.path]));
    const planner = await this.prepareBulk(
      actor,
      upserts.map((item) => ({ index: item.index, urn: item.urn, value: item.value })),
      (index) => pathOf.get(index) ?? '',
      violations,
      (index) => index,
    );
    const who = await this.ctx.authenticate(actor);
    // Definitions read inside the unit of work, once per batch rather than once per entity (a batch of
    // patches names the same few properties again and again).
    const known = new Map<string, DefinitionInfo>();
    const asked = new Set<string>();
    const load = async (urns: Iterable<string>): Promise<void> => {
      const missing = [...urns].filter((u) => !asked.has(u));
      for (const u of missing) asked.add(u);
      for (const [urn, info] of await loadDefinitions(this.ctx.adapter, missing)) known.set(urn, info);
    };
    return {
      plan: async (item, entity, step) => {
        if (item.op === 'upsert') return { put: await planner(item.index, entity, step.problems, step.now) };
        await load(propertyUrnsOf(entity ? [entity] : []));
        const definitions = known;
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
        await load(drafts.map((d) => d.propertyUrn));
        const removalPath = (p: string) => `${item.path}/properties/${escapeToken(p)}`;
        const plan = this.plan(who, item.urn, entity, definitions, () => ({ drafts, removalPath }), step.problems, step.now);
        const put = plan.entity?.put?.[VALUES_ASPECT];
        return put ? { put } : undefined;
      },
    };
  }

  private async ensureDefinitions(definitions: Map<string, DefinitionInfo>, urns: Iterable<string>): Promise<void> {
    const missing = [...urns].filter((u) => !definitions.has(u));
    for (const [urn, info] of await loadDefinitions(this.ctx.adapter, missing)) definitions.set(urn, info);
  }

  private plan(
    who: string,
    urn: string,
    entity: StoredEntity | undefined,
    definitions: ReadonlyMap<string, DefinitionInfo>,
    wish: Wish,
    violations: Violation[],
    now: number,
  ): { visible: PropertyAssignment[]; entity?: EntityPlan } {
    const stored = storedValues(entity, definitions);
    const { drafts, removalPath } = wish(stored);
    checkAssignments(urn, drafts, definitions, violations);
    checkImmutables(stored.visible, drafts, definitions, removalPath, violations);
    if (violations.length > 0) return { visible: stored.visible };
    const { visible, change } = composeValues(entity, stored, drafts, definitions, { time: now, actor: who });
    return { visible, ...(change ? { entity: { urn, put: { [VALUES_ASPECT]: change } } } : {}) };
  }

  /** One entity, one atomic commit: read what it holds, decide, check, write. */
  private async write(who: string, urn: string, wish: Wish, shapeViolations: readonly Violation[] = []): Promise<PropertyAssignment[]> {
    let result: PropertyAssignment[] = [];
    await this.ctx.writer.write(who, [urn], async (current, now) => {
      const entity = current.get(urn);
      const definitions = await loadDefinitions(this.ctx.adapter, propertyUrnsOf(entity ? [entity] : []));
      // The wish is computed once to learn which further definitions it names, then planned for real.
      const first = wish(storedValues(entity, definitions));
      const extra = first.drafts.map((d) => d.propertyUrn).filter((u) => !definitions.has(u));
      for (const [u, info] of await loadDefinitions(this.ctx.adapter, extra)) definitions.set(u, info);
      const violations: Violation[] = [...shapeViolations];
      const plan = this.plan(who, urn, entity, definitions, () => first, violations, now);
      throwIfViolations(violations, `invalid structured properties for ${urn}`);
      result = plan.visible;
      return { entities: plan.entity ? [plan.entity] : [] };
    });
    return result;
  }
}
