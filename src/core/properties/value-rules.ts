import type { AuditStamp, JsonObject, StoredEntity } from '../../adapter/types';
import type { Violation } from '../../errors';
import { formatValue, fromPropertyValue, toPropertyValue, typedValueProblem } from './definition-rules';
import {
  assignmentState,
  assignmentsOf,
  keysOf,
  PROPERTY_STAMPS_METADATA,
  stampedAssignmentsOf,
  stampsOf,
  type AssignmentStamps,
  type DefinitionInfo,
} from './lookup';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import { ENTITY_TYPE_URN_PREFIX, VALUES_ASPECT, type PropertyAssignment, type PropertyValue } from './types';
import { PROPERTY_KEYS_METADATA } from '../entities/search-document';
import { entityTypeOf } from '../urn';

/**
 * The rules for values on an entity, pure: what a stored values aspect holds (visible, kept hidden
 * for a soft-deleted property, stale), whether a wished-for list of assignments fits the definitions,
 * and the aspect to store.
 */

/** One property's wished-for values, with where it came from in the input (for error paths). */
export interface AssignmentDraft {
  propertyUrn: string;
  values: Array<string | number>;
  /** Path of the assignment in the input; values are at `${path}/values/<i>`. */
  path: string;
  /** Path of its property URN in the input. */
  urnPath: string;
  /** Its values did not have the input shape (already reported): only the property itself is checked. */
  malformed?: boolean;
  /** The stamps the writer sent with the assignment: stored in the value, read back as sent. */
  sent?: { created?: AuditStamp; lastModified?: AuditStamp };
  /**
   * The values as sent (`{ string }` or `{ double }` each), when the draft was read in place: `values`
   * is made from them when first asked for, which checking them does not need.
   */
  readonly given?: readonly PropertyValue[];
}

export interface StoredValues {
  visible: PropertyAssignment[];
  /** Values of soft-deleted properties: hidden, kept, visible again on restore. */
  softDeleted: Array<{ assignment: PropertyAssignment; key: string }>;
  stale: PropertyAssignment[];
}

export function storedValues(entity: StoredEntity | undefined, definitions: ReadonlyMap<string, DefinitionInfo>): StoredValues {
  const aspect = entity?.aspects[VALUES_ASPECT];
  const out: StoredValues = { visible: [], softDeleted: [], stale: [] };
  if (!aspect) return out;
  const keys = keysOf(aspect);
  const stamped = stampedAssignmentsOf(aspect);
  assignmentsOf(aspect).forEach((assignment, i) => {
    const state = assignmentState(definitions.get(assignment.propertyUrn), keys[assignment.propertyUrn]);
    if (state === 'visible') out.visible.push(stamped[i]!);
    else if (state === 'softDeleted') out.softDeleted.push({ assignment, key: keys[assignment.propertyUrn]! });
    else out.stale.push(assignment);
  });
  return out;
}

/** A deep copy of JSON data, as JSON.parse(JSON.stringify(value)) makes it, without the text in between. */
function copyJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out[i] = v === undefined ? null : copyJson(v);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (key === '__proto__') Object.defineProperty(out, key, { value: copyJson(v), enumerable: true, writable: true, configurable: true });
    else out[key] = copyJson(v);
  }
  return out;
}

const sortedValues = (values: ReadonlyArray<string | number>): string => JSON.stringify(values.map(formatValue).sort());

/** Checks every wished-for assignment against its definition; adds one violation per problem. */
export function checkAssignments(
  entityUrn: string,
  drafts: readonly AssignmentDraft[],
  definitions: ReadonlyMap<string, DefinitionInfo>,
  violations: Violation[],
  /** The entity type of `entityUrn`, when the caller knows it already. */
  entityType: string = entityTypeOf(entityUrn),
): void {
  const entityTypeUrn = entityTypeUrnOf(entityType);
  // A few drafts (the usual entity) are compared with the earlier ones; many go through a set.
  const seen = drafts.length > 16 ? new Set<string>() : undefined;
  for (let k = 0; k < drafts.length; k++) {
    const draft = drafts[k]!;
    const urn = draft.propertyUrn;
    if (seen ? seen.has(urn) : listedBefore(drafts, k)) {
      violations.push({ path: draft.urnPath, message: `${urn} appears more than once; a property is set once per entity` });
      continue;
    }
    seen?.add(urn);
    const info = definitions.get(urn);
    // A definition was read under this URN, so it is a structured property URN: only an unknown one is checked.
    const notAPropertyUrn = info ? undefined : propertyUrnProblem(urn);
    if (notAPropertyUrn) {
      violations.push({ path: draft.urnPath, message: notAPropertyUrn });
      continue;
    }
    if (!info) {
      violations.push({ path: draft.urnPath, message: `structured property ${urn} does not exist` });
      continue;
    }
    if (info.removed) {
      violations.push({ path: draft.urnPath, message: softDeletedMessage(urn, 'assigning a value') });
      continue;
    }
    const { definition } = info;
    if (!definition.entityTypes.includes(entityTypeUrn)) {
      const names = definition.entityTypes.map((t) => t.slice(ENTITY_TYPE_URN_PREFIX.length)).join(', ');
      violations.push({
        path: draft.urnPath,
        message: `${urn} cannot be set on ${entityType} entities; its entity types are ${names}`,
      });
    }
    if (draft.malformed) continue;
    const given = draft.given;
    const count = given ? given.length : draft.values.length;
    if (count === 0) {
      violations.push({ path: `${draft.path}/values`, message: `${urn} needs at least one value (remove the property to unset it)` });
    }
    if (definition.cardinality === 'SINGLE' && count > 1) {
      violations.push({
        path: `${draft.path}/values`,
        message: `${urn} takes a single value (cardinality SINGLE), got ${count}`,
      });
    }
    const allowed = definition.allowedValues?.map((a) => fromPropertyValue(a.value));
    const allowedTypes = definition.typeQualifier?.allowedTypes;
    // Values already listed (string and number values never equal each other, as their JSON texts differ).
    let listed: Set<string | number> | undefined;
    for (let i = 0; i < count; i++) {
      const value = given ? fromPropertyValue(given[i]!) : draft.values[i]!;
      const problem = typedValueProblem(info.valueType, allowedTypes, value);
      if (problem) {
        violations.push({ path: `${draft.path}/values/${i}`, message: `value ${formatValue(value)} of ${urn} ${problem}` });
        continue;
      }
      if (allowed && !allowed.includes(value)) {
        violations.push({
          path: `${draft.path}/values/${i}`,
          message: `value ${formatValue(value)} of ${urn} should be one of ${JSON.stringify(allowed)}`,
        });
        continue;
      }
      if (count === 1) continue;
      listed ??= new Set();
      if (listed.has(value))
        violations.push({ path: `${draft.path}/values/${i}`, message: `value ${formatValue(value)} of ${urn} is listed twice` });
      listed.add(value);
    }
  }
}

/** The entity-type URN `entityTypeUrnOf` made last, and its type: the same type again makes no new string. */
let lastTypeUrn = { entityType: '', urn: '' };

function entityTypeUrnOf(entityType: string): string {
  if (lastTypeUrn.entityType !== entityType) lastTypeUrn = { entityType, urn: `${ENTITY_TYPE_URN_PREFIX}${entityType}` };
  return lastTypeUrn.urn;
}

/** Whether a draft before `k` names the property of draft `k`. */
function listedBefore(drafts: readonly AssignmentDraft[], k: number): boolean {
  const urn = drafts[k]!.propertyUrn;
  for (let j = 0; j < k; j++) if (drafts[j]!.propertyUrn === urn) return true;
  return false;
}

/** Immutable values can be set once: afterwards they are neither changed nor removed. */
export function checkImmutables(
  current: readonly PropertyAssignment[],
  drafts: readonly AssignmentDraft[],
  definitions: ReadonlyMap<string, DefinitionInfo>,
  removalPath: (propertyUrn: string) => string,
  violations: Violation[],
): void {
  for (const assignment of current) {
    if (!definitions.get(assignment.propertyUrn)?.definition.immutable) continue;
    const draft = drafts.find((d) => d.propertyUrn === assignment.propertyUrn);
    const before = assignment.values.map(fromPropertyValue);
    if (!draft) {
      violations.push({
        path: removalPath(assignment.propertyUrn),
        message: `${assignment.propertyUrn} is immutable: once set, it cannot be removed`,
      });
    } else if (!draft.malformed && sortedValues(draft.values) !== sortedValues(before)) {
      violations.push({
        path: `${draft.path}/values`,
        message: `${assignment.propertyUrn} is immutable: once set, its values cannot be changed`,
      });
    }
  }
}

/**
 * `composeValues(...).change` for an entity that holds no values aspect (nothing visible, hidden or
 * stale to keep), when the caller drops `visible`: the same aspect, made directly. The value holds what
 * the writer sent (`sent`: the body as it came, when it is that already); who set each property and when
 * is kept beside it, in system metadata shared by the entities of the unit of work that name the same
 * properties (`metadata`).
 */
export function firstValues(
  drafts: readonly AssignmentDraft[],
  metadata: FirstValuesMetadata,
  sent?: JsonObject,
): { value: JsonObject; systemMetadata: JsonObject } | undefined {
  const count = drafts.length;
  if (count === 0) return undefined;
  if (sent) return { value: sent, systemMetadata: metadata.of(drafts) };
  const properties = new Array<PropertyAssignment>(count);
  for (let i = 0; i < count; i++) {
    const draft = drafts[i]!;
    const given = draft.values;
    const values = new Array<PropertyValue>(given.length);
    for (let j = 0; j < given.length; j++) values[j] = toPropertyValue(given[j]!);
    properties[i] = draft.sent ? { propertyUrn: draft.propertyUrn, values, ...draft.sent } : { propertyUrn: draft.propertyUrn, values };
  }
  return { value: { properties: properties as unknown as JsonObject[] }, systemMetadata: metadata.of(drafts) };
}

/** How many different sets of properties a unit of work shares first-values metadata for (more make their own). */
const SHARED_METADATA_LIMIT = 8;

/**
 * The system metadata of first values written by one unit of work (one stamp): the definition key and
 * the stamps of each property. Entities naming the same properties in the same order get the same
 * object, frozen: nothing changes stored system metadata in place (a later write makes its own).
 */
export class FirstValuesMetadata {
  private readonly known: Array<{ urns: string[]; metadata: JsonObject }> = [];
  private readonly stamped: { created: AuditStamp; lastModified: AuditStamp };

  constructor(
    stamp: AuditStamp,
    private readonly definitions: ReadonlyMap<string, DefinitionInfo>,
  ) {
    this.stamped = Object.freeze({ created: stamp, lastModified: stamp });
  }

  of(drafts: readonly AssignmentDraft[]): JsonObject {
    const count = drafts.length;
    for (const { urns, metadata } of this.known) {
      if (urns.length !== count) continue;
      let same = true;
      for (let i = 0; i < count && same; i++) same = urns[i] === drafts[i]!.propertyUrn;
      if (same) return metadata;
    }
    const urns = new Array<string>(count);
    const keys: Record<string, string> = {};
    const stamps: AssignmentStamps = {};
    for (let i = 0; i < count; i++) {
      const propertyUrn = drafts[i]!.propertyUrn;
      urns[i] = propertyUrn;
      keys[propertyUrn] = this.definitions.get(propertyUrn)!.key;
      stamps[propertyUrn] = this.stamped;
    }
    const metadata: JsonObject = Object.freeze({
      [PROPERTY_KEYS_METADATA]: Object.freeze(keys),
      [PROPERTY_STAMPS_METADATA]: Object.freeze(stamps) as unknown as JsonObject,
    });
    if (this.known.length < SHARED_METADATA_LIMIT) this.known.push({ urns, metadata });
    return metadata;
  }
}

/**
 * The values aspect after the write: the wished-for assignments (stamped; a property whose values did
 * not change keeps its stamps), then the hidden values of soft-deleted properties; stale values are
 * dropped on the way. Undefined when nothing changes.
 */
export function composeValues(
  entity: StoredEntity | undefined,
  stored: StoredValues,
  drafts: readonly AssignmentDraft[],
  definitions: ReadonlyMap<string, DefinitionInfo>,
  stamp: AuditStamp,
  /**
   * `visible: false`: the caller drops `visible`, so the stored value may share its objects (with it,
   * with the stamp, with the aspect read): nothing is copied. By default the stored value is a copy.
   */
  options: { visible?: boolean } = {},
): { visible: PropertyAssignment[]; change?: { value: JsonObject; systemMetadata: JsonObject } } {
  const copy = options.visible !== false;
  const count = drafts.length;
  const visible = new Array<PropertyAssignment>(count);
  /** Whether visible[i] is the stored assignment, kept as it was. */
  const reused = new Array<boolean>(count);
  for (let i = 0; i < count; i++) {
    const draft = drafts[i]!;
    const before = stored.visible.length ? stored.visible.find((a) => a.propertyUrn === draft.propertyUrn) : undefined;
    if (before) {
      const info = definitions.get(draft.propertyUrn);
      const same = sortedValues(before.values.map(fromPropertyValue)) === sortedValues(draft.values);
      if (same && (info?.definition.immutable || JSON.stringify(before.values.map(fromPropertyValue)) === JSON.stringify(draft.values))) {
        visible[i] = before;
        reused[i] = true;
        continue;
      }
    }
    visible[i] = {
      propertyUrn: draft.propertyUrn,
      values: draft.values.map(toPropertyValue),
      created: before?.created ?? stamp,
      lastModified: stamp,
    };
    reused[i] = false;
  }
  const keys: Record<string, string> = {};
  for (const a of visible) keys[a.propertyUrn] = definitions.get(a.propertyUrn)!.key;
  for (const { assignment, key } of stored.softDeleted) keys[assignment.propertyUrn] = key;
  const aspect = entity?.aspects[VALUES_ASPECT];
  // The value holds what the writer sent (its stamps only when it sent them); who set what when is kept beside it.
  const oldStamps = stampsOf(aspect);
  const stamps: AssignmentStamps = {};
  const total = count + stored.softDeleted.length;
  /** The assignments after the write (compared with the stored ones). */
  const properties = new Array<unknown>(total);
  /** What is stored: a copy that shares no object with `visible` (which goes back to the caller) nor with the input. */
  const copies = copy ? new Array<unknown>(total) : properties;
  for (let i = 0; i < count; i++) {
    const a = visible[i]!;
    const draft = drafts[i]!;
    if (a.created && a.lastModified) stamps[a.propertyUrn] = { created: a.created, lastModified: a.lastModified };
    const raw = reused[i] && !draft.sent ? assignmentsOf(aspect).find((b) => b.propertyUrn === a.propertyUrn) : undefined;
    if (copy && !raw && !reused[i] && !draft.sent) {
      // A new assignment: its stored copy is made from the draft directly (with nothing stored, only the count of `properties` matters).
      properties[i] = aspect === undefined ? a : { propertyUrn: a.propertyUrn, values: a.values };
      copies[i] = { propertyUrn: a.propertyUrn, values: draft.values.map(toPropertyValue) };
      continue;
    }
    const written =
      raw ??
      (draft.sent ? { propertyUrn: a.propertyUrn, values: a.values, ...draft.sent } : { propertyUrn: a.propertyUrn, values: a.values });
    properties[i] = written;
    if (copy) copies[i] = copyJson(written);
  }
  for (let j = 0; j < stored.softDeleted.length; j++) {
    const { assignment } = stored.softDeleted[j]!;
    if (oldStamps[assignment.propertyUrn]) stamps[assignment.propertyUrn] = oldStamps[assignment.propertyUrn]!;
    properties[count + j] = assignment;
    if (copy) copies[count + j] = copyJson(assignment);
  }
  const unchanged =
    aspect !== undefined
      ? JSON.stringify(assignmentsOf(aspect)) === JSON.stringify(properties) &&
        JSON.stringify(keysOf(aspect)) === JSON.stringify(keys) &&
        JSON.stringify(oldStamps) === JSON.stringify(stamps)
      : properties.length === 0;
  if (unchanged) return { visible };
  return {
    visible,
    change: {
      value: { ...(aspect?.value ?? {}), properties: copies as JsonObject[] },
      systemMetadata: {
        ...(aspect?.systemMetadata ?? {}),
        [PROPERTY_KEYS_METADATA]: keys,
        [PROPERTY_STAMPS_METADATA]: (copy ? copyJson(stamps) : stamps) as JsonObject,
      },
    },
  };
}
