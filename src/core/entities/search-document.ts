import type { JsonObject, JsonValue, SearchDocument, SearchDocumentProperty, StoredAspect } from '../../adapter/types';
import type { EntityRegistry } from './registry';
import { parseCheckedUrn, urnKey, type ParsedUrn } from '../urn';

/** The search field of the `status` flag: `['true']` on soft-deleted entities, absent (false) otherwise. */
export const REMOVED_FIELD = 'removed';

/** Where each structured property's values came from: property URN → definition key (see SearchDocumentProperty). */
export const PROPERTY_KEYS_METADATA = 'propertyKeys';

function readPath(value: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let current: JsonValue | undefined = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = current[key];
  }
  return current;
}

function asStrings(value: JsonValue | undefined): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.flatMap((v) => asStrings(v));
  return [];
}

/** Typed values of the `structuredProperties` aspect with the definition key each assignment was written under. */
export function propertiesForSearch(aspect: StoredAspect | undefined): SearchDocumentProperty[] {
  if (!aspect) return [];
  const keys = (aspect.systemMetadata?.[PROPERTY_KEYS_METADATA] ?? {}) as JsonObject;
  const assignments = (aspect.value.properties ?? []) as JsonObject[];
  const out: SearchDocumentProperty[] = new Array<SearchDocumentProperty>(assignments.length);
  for (let i = 0; i < assignments.length; i++) {
    const assignment = assignments[i]!;
    const propertyUrn = String(assignment.propertyUrn);
    const stored = (assignment.values ?? []) as JsonObject[];
    const values: Array<string | number> = new Array<string | number>(stored.length);
    for (let j = 0; j < stored.length; j++) {
      const v = stored[j]!;
      values[j] = typeof v.double === 'number' ? v.double : String(v.string);
    }
    const key = keys[propertyUrn];
    out[i] = { propertyUrn, definitionKey: typeof key === 'string' ? key : '', values };
  }
  return out;
}

/** The values once each, in a new array (a field's values never share the aspect's array). */
function distinct(values: readonly string[]): string[] {
  if (values.length < 2) return values.length ? [values[0]!] : [];
  if (values.length < 16) {
    const out: string[] = [];
    for (const v of values) if (!out.includes(v)) out.push(v);
    return out;
  }
  return [...new Set(values)];
}

/**
 * The one search document of an entity, derived from its aspects. Full text: `name` and
 * `description` of the type's text aspect and the URN key; never structured-property values.
 */
export function deriveSearchDocument(
  registry: EntityRegistry,
  urn: string,
  entityType: string,
  aspects: Readonly<Record<string, StoredAspect>>,
): SearchDocument {
  const spec = registry.entityType(entityType);
  // Only URNs that were checked on the way in reach a search document; the tuple is split only for a field that reads it.
  let parsed: ParsedUrn | undefined;
  const textAspect = spec.textAspect ? aspects[spec.textAspect]?.value : undefined;
  const name = textAspect && typeof textAspect.name === 'string' ? textAspect.name : undefined;
  const description = textAspect && typeof textAspect.description === 'string' ? textAspect.description : undefined;
  const fields: Record<string, string[]> = {};
  for (const field of spec.searchFields ?? []) {
    let values: readonly string[] = NONE;
    /** Whether `values` is a new array made here (a field's values never share an array the aspect holds). */
    let fresh = true;
    if (field.fromUrn) {
      const v = field.fromUrn((parsed ??= parseCheckedUrn(urn, entityType)));
      if (v !== undefined) values = [v];
    } else if (field.aspect && field.read) {
      const value = aspects[field.aspect]?.value;
      if (value) values = field.read(value);
      fresh = false;
    } else if (field.aspect && field.path) {
      values = asStrings(readPath(aspects[field.aspect]?.value, field.path));
    }
    // A true/false field holds `true` or nothing (nothing is false).
    if (field.boolean) {
      values = values.includes('true') ? TRUE : NONE;
      fresh = false;
    }
    if (values.length) fields[field.name] = fresh && values.length === 1 ? (values as string[]) : distinct(values);
  }
  const removed = aspects.status?.value.removed === true;
  // `removed` is a standard true/false field of every type (the `status` flag), besides the document flag.
  if (removed) fields[REMOVED_FIELD] = ['true'];
  const key = parsed ? parsed.key : urnKey(urn);
  // One object with its fields at once (no field added later).
  const text: SearchDocument['text'] =
    name === undefined
      ? description === undefined
        ? { urnKey: key }
        : { urnKey: key, description }
      : description === undefined
        ? { urnKey: key, name }
        : { urnKey: key, name, description };
  return { urn, entityType, removed, text, fields, properties: propertiesForSearch(aspects.structuredProperties) };
}

const NONE: readonly string[] = [];
const TRUE: readonly string[] = ['true'];
