import type { JsonObject } from '../../adapter/types';
import { CatalogError, type Violation } from '../../errors';
import { checkSchema, checkSchemaOnly, jsonValueProblems } from '../validation';
import { fromPropertyValue } from './definition-rules';
import { propertyUrnProblem, softDeletedMessage } from './messages';
import { applyPropertyPatch } from './patch';
import { type AssignmentDraft, type StoredValues } from './value-rules';
import { type PropertyAssignment, type PropertyValue } from './types';
import { restAssignmentSchema, restValuesEnvelopeSchema } from '../validation/schemas/structured-properties';

/**
 * One item's values in a bulk write, checked. A class, not an object literal: a bulk call keeps one per
 * item for its whole length, and V8 makes the next objects of a literal site that a young-generation
 * collection found all alive in the old generation (pretenuring; docs/sizing.md).
 */
export class BulkWish {
  constructor(
    readonly drafts: AssignmentDraft[],
    /** Where the item's value sits. */
    readonly at: Where,
    /** The value as sent, when it is what a first write stores as it is (`plainValues`). */
    readonly stored: JsonObject | undefined,
  ) {}
}

/** The property a values patch operation addresses (`/properties/<escaped urn>`), when it names one. */
export function addPatchTarget(urns: Set<string>, operation: { path?: unknown }): void {
  const { path } = operation;
  if (typeof path !== 'string' || !path.startsWith('/properties/')) return;
  const token = path.slice('/properties/'.length).split('/')[0] ?? '';
  const urn = token.replace(/~1/g, '/').replace(/~0/g, '~');
  if (propertyUrnProblem(urn) === undefined) urns.add(urn);
}

/** What to write on one entity, given what it holds now. */
export type Wish = (stored: StoredValues) => { drafts: AssignmentDraft[]; removalPath: (propertyUrn: string) => string };

/**
 * One entity's edit of its values as this domain's own routes make it, planned by the values' owner
 * on what the entity holds when the unit of work reads it: every property replaced (`replace`), some
 * removed (`remove`, refused for a soft-deleted one), a JSON patch of `/properties/<property urn>`
 * (`patch`). `prior` are problems a decoder found already, reported with the rules' in one answer;
 * the owner answers the entity's visible properties after the edit (its result). `removeStale` is
 * bookkeeping (the background clean-up): the values of a property written under `incarnation` whose key
 * is not the property's current key go.
 */
export type ValueEdit =
  | ((
      | { kind: 'replace'; drafts: AssignmentDraft[] }
      | { kind: 'remove'; propertyUrns: readonly string[] }
      | { kind: 'patch'; request: unknown }
    ) & { prior?: readonly Violation[] })
  | { kind: 'removeStale'; propertyUrn: string; incarnation: string; currentKey: string | undefined };

/** The property URNs an edit names (read with the batch's definitions). */
export function namedBy(edit: ValueEdit, urns: Set<string>): void {
  if (edit.kind === 'replace') for (const d of edit.drafts) urns.add(d.propertyUrn);
  else if (edit.kind === 'patch') {
    const operations = (edit.request as { patch?: unknown } | null)?.patch;
    if (Array.isArray(operations))
      for (const op of operations) if (op && typeof op === 'object') addPatchTarget(urns, op as { path?: unknown });
  }
}

/** What the edit writes, given what the entity holds. */
export function wishOf(edit: Exclude<ValueEdit, { kind: 'removeStale' }>): Wish {
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
export function plainValues(input: unknown, at: Where): PlainValues | undefined {
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
export interface Where {
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
