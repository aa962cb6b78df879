import type { Actor } from '../access/actor';
import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { CatalogContext } from '../context';
import type { AspectChange, EntityPlan } from '../entities/writer';
import type { OwnedChange, OwnedItem, OwnerBatch, PlanStep, PrepareContext, ReadTransform } from '../entities/owner';
import type { WriteItem } from '../entities/write-pipeline';
import type { PipelineRoute } from './definitions';
import { escapeToken } from './patch';
import { withPaths } from '../../errors';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { DecoderReport } from './graphql-input';
import { checkSchema, checkSchemaOnly, jsonValueProblems } from '../validation';
import { fromPropertyValue } from './definition-rules';
import { keepsStoredValues, loadDefinitions, propertyUrnsOf, stampedAssignmentsOf, type DefinitionInfo } from './lookup';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import { applyPropertyPatch } from './patch';
import {
  checkAssignments,
  checkImmutables,
  composeValues,
  firstValues,
  FirstValuesMetadata,
  storedValues,
  type AssignmentDraft,
  type StoredValues,
} from './value-rules';
import { VALUES_ASPECT, type PropertyAssignment, type PropertyValue } from './types';
import { restAssignmentSchema, restValuesEnvelopeSchema } from '../validation/schemas/structured-properties';
import { parseUrn } from '../urn';

const BULK_CHUNK = 500;

/** One item's values in a bulk write, checked. */
interface BulkWish {
  drafts: AssignmentDraft[];
  /** Where the item's value sits. */
  at: Where;
  /** The value as sent, when it is what a first write stores as it is (`plainValues`). */
  stored: JsonObject | undefined;
}

/** The values of a bulk write, checked, with what their plans share: the definitions read once for the batch. */
export interface BulkValues {
  who: string;
  definitions: Map<string, DefinitionInfo>;
  /** Once per unit of work: reads the definitions its stored values name that were not read yet. */
  begin(current: ReadonlyMap<string, StoredEntity>): Promise<void>;
  /** The values aspect to write on the entity of this item (undefined when nothing changes). */
  plan(item: OwnedItem, current: StoredEntity | undefined, problems: Violation[], now: number): AspectChange | undefined;
}

/** The property a values patch operation addresses (`/properties/<escaped urn>`), when it names one. */
function addPatchTarget(urns: Set<string>, operation: { path?: unknown }): void {
  const { path } = operation;
  if (typeof path !== 'string' || !path.startsWith('/properties/')) return;
  const token = path.slice('/properties/'.length).split('/')[0] ?? '';
  const urn = token.replace(/~1/g, '/').replace(/~0/g, '~');
  if (propertyUrnProblem(urn) === undefined) urns.add(urn);
}

/** What to write on one entity, given what it holds now. */
type Wish = (stored: StoredValues) => { drafts: AssignmentDraft[]; removalPath: (propertyUrn: string) => string };

/**
 * One entity's edit of its values as this domain's own routes make it, planned by the values' owner
 * on what the entity holds when the unit of work reads it: every property replaced (`replace`), some
 * removed (`remove`, refused for a soft-deleted one), a JSON patch of `/properties/<property urn>`
 * (`patch`). `prior` are problems a decoder found already, reported with the rules' in one answer;
 * the owner sets `visible` to the entity's visible properties after the edit.
 */
export type ValueEdit = (
  { kind: 'replace'; drafts: AssignmentDraft[] } | { kind: 'remove'; propertyUrns: readonly string[] } | { kind: 'patch'; request: unknown }
) & { prior?: readonly Violation[]; visible?: PropertyAssignment[] };

/** The property URNs an edit names (read with the batch's definitions). */
function namedBy(edit: ValueEdit, urns: Set<string>): void {
  if (edit.kind === 'replace') for (const d of edit.drafts) urns.add(d.propertyUrn);
  else if (edit.kind === 'patch') {
    const operations = (edit.request as { patch?: unknown } | null)?.patch;
    if (Array.isArray(operations))
      for (const op of operations) if (op && typeof op === 'object') addPatchTarget(urns, op as { path?: unknown });
  }
}

/** What the edit writes, given what the entity holds. */
function wishOf(edit: ValueEdit): Wish {
  switch (edit.kind) {
    case 'replace':
      return () => ({ drafts: edit.drafts, removalPath: () => '/properties' });
    case 'remove': {
      const { propertyUrns } = edit;
      const pathOf = (p: string): string => `/structuredPropertyUrns/${propertyUrns.indexOf(p)}`;
      return (stored) => {
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
      };
    }
    case 'patch':
      return (stored) => {
        const softDeleted = new Set(stored.softDeleted.map((s) => s.assignment.propertyUrn));
        const drafts = applyPropertyPatch(stored.visible, edit.request, softDeleted);
        return { drafts, removalPath: (p) => `/properties/${p.replace(/~/g, '~0').replace(/\//g, '~1')}` };
      };
  }
}

/**
 * Reads the canonical values input (the `structuredProperties` aspect) into drafts. Shape errors are
 * violations; an element a decoder reported already as malformed (`malformed`, by index) yields a
 * marked draft so that its property is checked too.
 */
export function readValuesInput(input: unknown, violations: Violation[], prefix = '', malformed?: ReadonlySet<number>): AssignmentDraft[] {
  // The usual body is read in one pass, with nothing for any check to find (`plainValues`).
  if (!malformed?.size) {
    const plain = plainValues(input, { path: prefix });
    if (plain) return plain.drafts;
  }
  // Any other body: the schema says what is wrong with it (the same answer for a valid one).
  const envelope = isPlainEnvelope(input) ? jsonValueProblems(input, prefix) : checkSchema(restValuesEnvelopeSchema, input, prefix);
  for (let k = 0; k < envelope.length; k++) violations.push(envelope[k]!);
  if (envelope.length) return [];
  const listPath = `${prefix}/properties`;
  const list = (input as { properties: unknown[] }).properties;
  const drafts: AssignmentDraft[] = [];
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!malformed?.has(i) && plainAssignment(item) !== NOT_PLAIN) {
      // The common case: checked in place, its paths made only if a violation names them.
      drafts.push(new ReadDraft((item as PlainAssignment).propertyUrn, (item as PlainAssignment).values, { path: prefix }, i));
      continue;
    }
    if (!(i in list)) continue; // a hole of a sparse list, as `forEach` skips it
    const path = `${listPath}/${i}`;
    const urnPath = `${path}/propertyUrn`;
    const propertyUrn = ((item ?? {}) as Record<string, unknown>).propertyUrn;
    if (malformed?.has(i)) {
      if (typeof propertyUrn === 'string') drafts.push({ propertyUrn, values: [], path, urnPath, malformed: true });
      continue;
    }
    // The whole body was found free of what no input may hold (`envelope`): each element gets its schema only.
    const found = checkSchemaOnly(restAssignmentSchema, item, path);
    for (let k = 0; k < found.length; k++) violations.push(found[k]!);
    if (found.length) {
      if (typeof propertyUrn === 'string') drafts.push({ propertyUrn, values: [], path, urnPath, malformed: true });
      continue;
    }
    const { created, lastModified, values: sentValues } = item as PropertyAssignment;
    const values = new Array<string | number>(sentValues.length);
    for (let j = 0; j < sentValues.length; j++) values[j] = fromPropertyValue(sentValues[j]!);
    const draft: AssignmentDraft = { propertyUrn: propertyUrn as string, values, path, urnPath };
    if (created || lastModified) draft.sent = { ...(created ? { created } : {}), ...(lastModified ? { lastModified } : {}) };
    drafts.push(draft);
  }
  return drafts;
}

/** The usual values body read: its drafts, and whether it is the stored form already. */
interface PlainValues {
  drafts: AssignmentDraft[];
  /**
   * Every assignment is `{ propertyUrn, values }` in that order with `{ string }` or `{ double }`
   * values: the body is what a first write of these values stores, as it is.
   */
  stored: boolean;
}

/**
 * The drafts of the usual values body (`{ properties: [{ propertyUrn, values }] }` with string and
 * finite number values, all text well-formed): valid for the envelope's schema, with nothing that no
 * input may hold, so it is read in one pass, in place. Undefined for any other body.
 */
function plainValues(input: unknown, at: Where): PlainValues | undefined {
  if (!isPlainEnvelope(input)) return undefined;
  const list = (input as { properties: unknown[] }).properties;
  const drafts = new Array<AssignmentDraft>(list.length);
  let stored = true;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const kind = plainAssignment(item, true);
    if (kind === NOT_PLAIN) return undefined;
    if (kind !== STORED_ORDER) stored = false;
    drafts[i] = new ReadDraft((item as PlainAssignment).propertyUrn, (item as PlainAssignment).values, at, i);
  }
  return { drafts, stored };
}

/** Where a value sits in the input (`path` is read only when a violation names it). */
interface Where {
  readonly path: string;
}

/** A draft read from the usual input: its paths (which only a violation needs) and its values are made when asked for. */
class ReadDraft implements AssignmentDraft {
  private read: Array<string | number> | undefined = undefined;

  constructor(
    readonly propertyUrn: string,
    readonly given: readonly PropertyValue[],
    private readonly at: Where,
    private readonly index: number,
  ) {}

  get values(): Array<string | number> {
    if (this.read === undefined) {
      const { given } = this;
      const values = new Array<string | number>(given.length);
      for (let j = 0; j < given.length; j++) values[j] = fromPropertyValue(given[j]!);
      this.read = values;
    }
    return this.read;
  }

  get path(): string {
    return `${this.at.path}/properties/${this.index}`;
  }

  get urnPath(): string {
    return `${this.at.path}/properties/${this.index}/propertyUrn`;
  }
}

/** `{ properties: [...] }` and nothing else: what `restValuesEnvelopeSchema` accepts (it is the schema's answer, without the schema). */
function isPlainEnvelope(input: unknown): boolean {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
  for (const key in input) if (key !== 'properties') return false;
  return Array.isArray((input as { properties?: unknown }).properties);
}

type PlainAssignment = { propertyUrn: string; values: PropertyValue[] };

const NOT_PLAIN = 0;
const PLAIN = 1;
/** Plain, with `propertyUrn` before `values` (the order a stored assignment has). */
const STORED_ORDER = 2;

/**
 * `{ propertyUrn, values }` with string and finite number values, nothing else: valid for
 * `restAssignmentSchema` (NOT_PLAIN for anything else: the schema then decides, and says why). With
 * `wellFormed`, also NOT_PLAIN when a string is not well-formed Unicode.
 */
function plainAssignment(item: unknown, wellFormed = false): typeof NOT_PLAIN | typeof PLAIN | typeof STORED_ORDER {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return NOT_PLAIN;
  let first: string | undefined;
  for (const key in item) {
    if (key !== 'propertyUrn' && key !== 'values') return NOT_PLAIN;
    first ??= key;
  }
  const { propertyUrn, values } = item as { propertyUrn?: unknown; values?: unknown };
  if (typeof propertyUrn !== 'string' || !Array.isArray(values)) return NOT_PLAIN;
  if (wellFormed && !propertyUrn.isWellFormed()) return NOT_PLAIN;
  for (let j = 0; j < values.length; j++) if (!isPlainPropertyValue(values[j], wellFormed)) return NOT_PLAIN;
  return first === 'propertyUrn' ? STORED_ORDER : PLAIN;
}

/** `{ string: <string> }` or `{ double: <finite number> }`, one own field (with `wellFormed`, a well-formed string). */
function isPlainPropertyValue(value: unknown, wellFormed: boolean): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  let fields = 0;
  for (const key in value) {
    if (++fields > 1 || !Object.hasOwn(value, key)) return false;
    const field = (value as Record<string, unknown>)[key];
    if (key === 'string') {
      if (typeof field !== 'string' || (wellFormed && !field.isWellFormed())) return false;
    } else if (key !== 'double' || typeof field !== 'number' || !Number.isFinite(field)) return false;
  }
  return fields === 1;
}

/** Structured property values on entities: read, replace all, remove some, patch, bulk replace. */
export class PropertyValueService {
  constructor(
    private readonly ctx: CatalogContext,
    /** What readers see of stored values (values of missing, soft-deleted or superseded definitions hidden). */
    private readonly visible: ReadTransform,
    /** The one write path (built with this domain's owners, so handed over once it exists). */
    private readonly route: PipelineRoute,
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
    await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    const violations: Violation[] = [...(decoded?.violations ?? [])];
    const drafts = readValuesInput(input, violations, '', decoded?.malformed);
    return this.write(actor, urn, { kind: 'replace', drafts, prior: violations });
  }

  /** Removes the named properties from the entity (absent ones are ignored); returns the properties left. */
  async remove(actor: Actor, entityUrn: string, propertyUrns: readonly string[]): Promise<PropertyAssignment[]> {
    await this.editor(actor);
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
    return this.write(actor, urn, { kind: 'remove', propertyUrns });
  }

  /** JSON Patch on the entity's structured properties (see property-patch.ts); returns the properties left. */
  async patch(actor: Actor, entityUrn: string, request: unknown): Promise<PropertyAssignment[]> {
    await this.editor(actor);
    const urn = this.entityUrn(entityUrn, '/urn');
    return this.write(actor, urn, { kind: 'patch', request });
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
    await this.editor(actor);
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
    // Written through the write path in atomic chunks: the values' owner plans each entity's edit in its unit of work.
    const edits = wishes.map((wish): ValueEdit => ({ kind: 'replace', drafts: wish.drafts }));
    const writes = wishes.map((wish, i): WriteItem => ({
      op: 'edit',
      urn: wish.urn,
      aspect: VALUES_ASPECT,
      edit: edits[i],
      path: `/${i}`,
    }));
    await this.route.pipeline().write(actor, writes, { message: 'invalid structured property values', chunkEntities: BULK_CHUNK });
    const results = wishes.map((wish, i) => ({ urn: wish.urn, properties: edits[i]!.visible ?? [] }));
    return results;
  }

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
    const who = await this.editor(actor);
    /** By the item's index in the batch. */
    const wishes: BulkWish[] = [];
    const named = new Set<string>(options.alsoNamed ?? []);
    for (let k = 0; k < items.length; k++) {
      const item = items[k]!;
      const { value } = item;
      const plain = plainValues(value, item);
      const drafts = plain ? plain.drafts : readValuesInput(value, violations, item.path);
      for (let i = 0; i < drafts.length; i++) named.add(drafts[i]!.propertyUrn);
      wishes[item.index] = { drafts, at: item, stored: plain?.stored === true ? (value as JsonObject) : undefined };
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
        if (item.op === 'edit')
          return this.planEdit(who, item.urn, item.edit as ValueEdit, entity, definitions, step.problems, step.now).then((put) => ({
            put,
          }));
        return planPatch(item, entity, step);
      },
    };
  }

  private async ensureDefinitions(definitions: Map<string, DefinitionInfo>, urns: Iterable<string>): Promise<void> {
    const missing: string[] = [];
    for (const urn of urns) if (!definitions.has(urn)) missing.push(urn);
    if (missing.length === 0) return;
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

  /** One entity's edit through the write path (its owner plans it in the unit of work); the visible properties after it. */
  private async write(actor: Actor, urn: string, edit: ValueEdit): Promise<PropertyAssignment[]> {
    const item: WriteItem = { op: 'edit', urn, aspect: VALUES_ASPECT, edit, path: '' };
    await this.route.pipeline().write(actor, [item], { message: `invalid structured properties for ${urn}` });
    return edit.visible ?? [];
  }

  /** An edit planned on what the entity holds (definitions of what it names read first, once). */
  private async planEdit(
    who: string,
    urn: string,
    edit: ValueEdit,
    entity: StoredEntity | undefined,
    definitions: Map<string, DefinitionInfo>,
    problems: Violation[],
    now: number,
  ): Promise<AspectChange | undefined> {
    // The wish is computed once to learn which further definitions it names, then planned for real.
    const first = wishOf(edit)(storedValues(entity, definitions));
    await this.ensureDefinitions(
      definitions,
      first.drafts.map((d) => d.propertyUrn),
    );
    const violations: Violation[] = [...(edit.prior ?? [])];
    const plan = this.plan(who, urn, entity, definitions, () => first, violations, now);
    problems.push(...violations);
    edit.visible = plan.visible;
    return plan.entity?.put?.[VALUES_ASPECT];
  }
}
