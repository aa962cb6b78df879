/**
 * The memory search's document index: documents in numbered slots (slot-table.ts), a `FieldIndex` per
 * searchable field (a standard field, or a structured property under one definition key), per-scope
 * counts, and the full-text index (search-text.ts). Told about every change of a document, including
 * the undo of a failed commit; it keeps no copy of the documents themselves.
 */
import type { SearchDocument } from '../../src/adapter/types';
import { FieldIndex, scopeKey } from './field-index';
import { propertyKey, standardFieldKey } from './field-keys';
import type { SearchState } from './search-conditions';
import { createMemoryFullText, type MemoryFullText } from './search-text';
import { SlotTable } from './slot-table';
import type { IndexedValue } from './value-order';

export interface DocumentIndex {
  readonly table: SlotTable;
  /** Field key → its index. */
  readonly fields: Map<string, FieldIndex>;
  /**
   * The field indexes of each structured property by definition key (the same objects as in
   * `fields`): the property-value questions read them, so no list of URNs per property and key is
   * kept beside them.
   */
  readonly propertyFields: Map<string, Map<string, FieldIndex>>;
  readonly state: SearchState;
  /** Scope key → number of documents. */
  readonly scopeCounts: Map<string, number>;
  readonly fullText: MemoryFullText;
  /** Called after the document of `urn` was replaced (`document`) or removed (undefined). */
  documentChanged(urn: string, document: SearchDocument | undefined): void;
}

export function createDocumentIndex(): DocumentIndex {
  const table = new SlotTable();
  const fields = new Map<string, FieldIndex>();
  /**
   * The field indexes of each structured property by definition key (the same objects as in
   * `fields`): the clean-up questions about a property's values read them, so no list of URNs per
   * property and key is kept beside them.
   */
  const propertyFields = new Map<string, Map<string, FieldIndex>>();
  const state: SearchState = { table, fields };
  /** Scope key → number of documents. */
  const scopeCounts = new Map<string, number>();
  const fullText: MemoryFullText = createMemoryFullText();
  /**
   * The fields each slot is indexed under, to take it out again: the document itself is not kept.
   * Documents with the same fields share one list, found by the first key (bounded: a cleared map
   * only stops the sharing).
   */
  const fieldsBySlot: Array<readonly FieldRef[] | undefined> = [];
  const sharedFieldLists = new Map<string, Array<readonly FieldRef[]>>();
  /** The fields of the document being indexed (reused: a document has a handful). */
  const scratchKeys: string[] = [];
  const scratchProperties: Array<SearchDocument['properties'][number] | undefined> = [];
  /**
   * The fields of the documents indexed lately, by position (a bulk load's documents have the same
   * fields in the same order): a field's name, or a property's URN and definition key, with its key
   * and index, so that a document of the same shape finds each index without building or looking up
   * its key. Trusted while no field index was dropped since (`fieldsDropped`).
   */
  const recentNames: string[] = [];
  const recentDefinitions: Array<string | undefined> = [];
  const recentKeys: string[] = [];
  const recentFields: FieldIndex[] = [];
  let recentDropped = 0;
  /** Field indexes dropped so far (left empty): only grows. */
  let fieldsDropped = 0;

  /** Takes the slot out of one field index; an index left empty goes, with its property entry. */
  function removeFrom(key: string, slot: number, scope: string, property?: { propertyUrn: string; definitionKey: string }): void {
    const field = fields.get(key);
    if (!field) return;
    field.remove(slot, scope);
    if (field.size > 0) return;
    fields.delete(key);
    fieldsDropped += 1;
    if (!property) return;
    const byKey = propertyFields.get(property.propertyUrn);
    byKey?.delete(property.definitionKey);
    if (byKey?.size === 0) propertyFields.delete(property.propertyUrn);
  }

  function unindex(slot: number): void {
    if (table.urns[slot] === undefined) return;
    const scope = scopeKey(table.typeNames[table.typeId[slot]!]!, table.removed[slot] === 1);
    for (const ref of fieldsBySlot[slot] ?? []) removeFrom(ref.key, slot, scope, ref.property);
    fieldsBySlot[slot] = undefined;
    const left = (scopeCounts.get(scope) ?? 1) - 1;
    if (left > 0) scopeCounts.set(scope, left);
    else scopeCounts.delete(scope);
    table.unplace(slot);
  }

  function documentChanged(urn: string, document: SearchDocument | undefined): void {
    const existing = table.slotOf.get(urn);
    if (existing !== undefined) unindex(existing);
    if (!document) {
      if (existing !== undefined) {
        // The full text first: the slot is free for another URN once the table let it go.
        fullText.removeAt(existing);
        table.remove(urn);
      }
      return;
    }
    const slot = table.put(document, existing ?? null);
    const scope = scopeKey(document.entityType, document.removed);
    scopeCounts.set(scope, (scopeCounts.get(scope) ?? 0) + 1);
    fieldsBySlot[slot] = hasRepeatedProperty(document) ? indexMerged(slot, scope, document) : indexEach(slot, scope, document);
    // The full-text index leaves a document whose terms did not change as it is.
    fullText.upsertAt(slot, urn, document.text);
  }

  /** The index of a field, created on first use (a property's is listed under its URN and definition key then). */
  function fieldOf(key: string, property: SearchDocument['properties'][number] | undefined): FieldIndex {
    let field = fields.get(key);
    if (field !== undefined) return field;
    field = new FieldIndex();
    fields.set(key, field);
    if (property !== undefined) {
      // An entry goes with its field index (removeFrom), so a new index is the only time to add it.
      let byKey = propertyFields.get(property.propertyUrn);
      if (!byKey) {
        byKey = new Map();
        propertyFields.set(property.propertyUrn, byKey);
      }
      byKey.set(property.definitionKey, field);
    }
    return field;
  }

  /**
   * Remembers the field at `position` of the document being indexed (see `recentNames`). Every position
   * before it was remembered or found in this document, so the lists never have holes.
   */
  function remember(position: number, name: string, definitionKey: string | undefined, key: string, field: FieldIndex): void {
    recentNames[position] = name;
    recentDefinitions[position] = definitionKey;
    recentKeys[position] = key;
    recentFields[position] = field;
  }

  /**
   * Indexes each field of a document (no structured property twice under one definition key) as it
   * comes, with no map or object per field; returns the fields it is indexed under.
   */
  function indexEach(slot: number, scope: string, document: SearchDocument): readonly FieldRef[] {
    const keys = scratchKeys;
    const properties = scratchProperties;
    let count = 0;
    if (recentDropped !== fieldsDropped) {
      recentNames.length = 0;
      recentDropped = fieldsDropped;
    }
    const standard = document.fields;
    for (const name in standard) {
      if (!Object.hasOwn(standard, name)) continue;
      const values = standard[name]!;
      if (values.length === 0) continue;
      let field: FieldIndex;
      if (recentNames[count] === name && recentDefinitions[count] === undefined) field = recentFields[count]!;
      else {
        const key = standardFieldKey(name);
        field = fieldOf(key, undefined);
        remember(count, name, undefined, key, field);
      }
      field.add(slot, distinct(values), scope);
      keys[count] = recentKeys[count]!;
      properties[count++] = undefined;
    }
    for (const property of document.properties) {
      const { values } = property;
      if (values.length === 0) continue;
      const { propertyUrn, definitionKey } = property;
      let field: FieldIndex;
      if (recentNames[count] === propertyUrn && recentDefinitions[count] === definitionKey) field = recentFields[count]!;
      else {
        const key = propertyKey(propertyUrn, definitionKey);
        field = fieldOf(key, property);
        remember(count, propertyUrn, definitionKey, key, field);
      }
      field.add(slot, values.length === 1 && values[0] !== 0 ? values : distinct(values.map(normalized)), scope);
      keys[count] = recentKeys[count]!;
      properties[count++] = property;
    }
    return fieldListOf(keys, properties, count);
  }

  /** Indexes a document that lists a structured property twice under one definition key: its values merged. */
  function indexMerged(slot: number, scope: string, document: SearchDocument): readonly FieldRef[] {
    const indexed = documentValues(document);
    const keys: string[] = [];
    const properties: Array<SearchDocument['properties'][number] | undefined> = [];
    indexed.forEach(({ values, property }, key) => {
      fieldOf(key, property).add(slot, values, scope);
      keys.push(key);
      properties.push(property);
    });
    return fieldListOf(keys, properties, keys.length);
  }

  /** The first `count` keys (and properties) as a field list, shared with documents indexed under the same fields. */
  function fieldListOf(
    keys: readonly string[],
    properties: ReadonlyArray<SearchDocument['properties'][number] | undefined>,
    count: number,
  ): readonly FieldRef[] {
    // Field keys are built once (field-keys.ts): comparing them by identity finds a shared list.
    const first = count === 0 ? undefined : keys[0]!;
    const candidates = first === undefined ? undefined : sharedFieldLists.get(first);
    if (candidates) {
      for (const list of candidates) {
        if (list.length !== count) continue;
        let same = true;
        for (let i = 0; i < count; i++) {
          if (list[i]!.key !== keys[i]) {
            same = false;
            break;
          }
        }
        if (same) return list;
      }
    }
    const list: FieldRef[] = [];
    for (let i = 0; i < count; i++) {
      const property = properties[i];
      list.push(
        property
          ? { key: keys[i]!, property: { propertyUrn: property.propertyUrn, definitionKey: property.definitionKey } }
          : { key: keys[i]! },
      );
    }
    if (first !== undefined) {
      if (sharedFieldLists.size >= 1_000) sharedFieldLists.clear();
      const lists = sharedFieldLists.get(first) ?? [];
      // A few lists per first key are enough to share between documents of the same shape.
      if (lists.length >= 16) lists.shift();
      lists.push(list);
      sharedFieldLists.set(first, lists);
    }
    return list;
  }

  return { table, fields, propertyFields, state, scopeCounts, fullText, documentChanged };
}

/** The distinct values of a list; the list itself when it holds one value. */
function distinct<V>(values: readonly V[]): V[] {
  if (values.length === 1) return values as V[];
  return [...new Set(values)];
}

/** A field a document is indexed under; a structured property's says which (to drop its entry when empty). */
interface FieldRef {
  readonly key: string;
  readonly property?: { readonly propertyUrn: string; readonly definitionKey: string };
}

interface IndexedField {
  values: IndexedValue[];
  /** For a structured property: the document's entry (read for its URN and definition key only). */
  property?: SearchDocument['properties'][number];
}

/** -0 counts as 0. */
function normalized(value: IndexedValue): IndexedValue {
  return value === 0 ? 0 : value;
}

/** Whether a document lists a structured property (with values) twice under one definition key. */
function hasRepeatedProperty(document: SearchDocument): boolean {
  const { properties } = document;
  for (let i = 1; i < properties.length; i++) {
    const property = properties[i]!;
    if (property.values.length === 0) continue;
    for (let j = 0; j < i; j++) {
      const other = properties[j]!;
      if (other.definitionKey === property.definitionKey && other.propertyUrn === property.propertyUrn && other.values.length > 0)
        return true;
    }
  }
  return false;
}

/** The distinct values of each indexed field of a document (-0 counts as 0). */
function documentValues(document: SearchDocument): Map<string, IndexedField> {
  const out = new Map<string, IndexedField>();
  const { fields } = document;
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    const values = fields[name]!;
    if (values.length) out.set(standardFieldKey(name), { values: distinct(values) });
  }
  for (const property of document.properties) {
    if (property.values.length === 0) continue;
    const key = propertyKey(property.propertyUrn, property.definitionKey);
    const values = property.values.length === 1 && property.values[0] !== 0 ? property.values : property.values.map(normalized);
    const previous = out.get(key);
    out.set(key, { values: previous === undefined ? distinct(values) : [...new Set([...previous.values, ...values])], property });
  }
  return out;
}
