import type {
  AggregateRequest,
  FacetBucket,
  FacetResult,
  SearchCondition,
  SearchDocument,
  SearchField,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchScope,
  SeveralValuesRequest,
  SeveralValuesResponse,
} from '../../src/adapter/types';
import { FieldIndex, scopeKey } from './field-index';
import { fieldKeyOf, propertyKey, standardFieldKey } from './field-keys';
import { compileCondition, type CompiledCondition, type SearchState } from './search-conditions';
import { createMemoryFullText, type MemoryFullText } from './search-text';
import { SlotTable } from './slot-table';
import type { IndexedValue } from './value-order';
import { compareValues, topK } from './top-k';

/**
 * The memory adapter's search engine: evaluates search and aggregation requests over the search
 * documents. It reads the adapter's document map (never changes it) and is told about every change
 * of that map, including the undo of a failed commit, so it can keep indexes of its own.
 */
export interface MemorySearch {
  search(request: SearchRequest): SearchResponse;
  aggregate(request: AggregateRequest): FacetResult[];
  /** Called after the document of `urn` was replaced (`document`) or removed (undefined). */
  documentChanged(urn: string, document: SearchDocument | undefined): void;
  /** See `StorageAdapter.findEntitiesWithPropertyValues`. */
  findEntitiesWithPropertyValues(request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number }): string[];
  /** See `StorageAdapter.countEntitiesWithPropertyValues`. */
  countEntitiesWithPropertyValues(propertyUrn: string, definitionKey?: string): number;
  /** See `StorageAdapter.findEntitiesWithSeveralPropertyValues`. */
  findEntitiesWithSeveralPropertyValues(request: SeveralValuesRequest): SeveralValuesResponse;
}

/** Which documents a request matches: every one in scope (no filter, no text), or a list of slots. */
type Evaluation = { scopeOnly: true } | { scopeOnly: false; slots: number[]; scores: Map<string, number> | undefined };

/**
 * Documents live in numbered slots (slot-table.ts). Per searchable field (a standard field, or a
 * structured property under one definition key) a `FieldIndex` keeps value ids by slot, a hash for
 * equality, sorted pairs for ranges and per-scope counts for facets; full text is an incremental
 * BM25 index on lunr's pipeline (search-text.ts). A condition group is evaluated from its most
 * selective indexed condition, every other condition is checked on those candidates only, and a
 * page is picked by URN rank without sorting the matches.
 */
export function createMemorySearch(): MemorySearch {
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

  /** Takes the slot out of one field index; an index left empty goes, with its property entry. */
  function removeFrom(key: string, slot: number, scope: string, property?: { propertyUrn: string; definitionKey: string }): void {
    const field = fields.get(key);
    if (!field) return;
    field.remove(slot, scope);
    if (field.size > 0) return;
    fields.delete(key);
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
        table.remove(urn);
        fullText.remove(urn);
      }
      return;
    }
    const slot = table.put(document);
    const scope = scopeKey(document.entityType, document.removed);
    scopeCounts.set(scope, (scopeCounts.get(scope) ?? 0) + 1);
    const indexed = documentValues(document);
    for (const [key, { values }] of indexed) {
      let field = fields.get(key);
      if (!field) {
        field = new FieldIndex();
        fields.set(key, field);
      }
      field.add(slot, values, scope);
    }
    fieldsBySlot[slot] = fieldListOf(indexed);
    for (const property of document.properties) {
      if (property.values.length === 0) continue;
      let byKey = propertyFields.get(property.propertyUrn);
      if (byKey?.has(property.definitionKey)) continue;
      if (!byKey) {
        byKey = new Map();
        propertyFields.set(property.propertyUrn, byKey);
      }
      byKey.set(property.definitionKey, fields.get(propertyKey(property.propertyUrn, property.definitionKey))!);
    }
    // The full-text index leaves a document whose terms did not change as it is.
    fullText.upsert(urn, document.text);
  }

  function fieldListOf(indexed: Map<string, IndexedField>): readonly FieldRef[] {
    // Field keys are built once (field-keys.ts): comparing them by identity finds a shared list.
    const first = indexed.keys().next().value;
    const candidates = first === undefined ? undefined : sharedFieldLists.get(first);
    if (candidates) {
      for (const list of candidates) {
        if (list.length !== indexed.size) continue;
        let i = 0;
        let same = true;
        for (const key of indexed.keys()) {
          if (list[i++]!.key !== key) {
            same = false;
            break;
          }
        }
        if (same) return list;
      }
    }
    const list = [...indexed].map(([key, { property }]) =>
      property ? { key, property: { propertyUrn: property.propertyUrn, definitionKey: property.definitionKey } } : { key },
    );
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

  /** Slots with values of the property under any key but `keep`, each once, with a rank above `after`. */
  function propertySlots(propertyUrn: string, keep: string | undefined, after: number): number[] {
    const slots: number[] = [];
    const byKey = propertyFields.get(propertyUrn);
    if (!byKey) return slots;
    const mark = table.nextMark();
    const { marks, rank } = table;
    for (const [key, field] of byKey) {
      if (key === keep) continue;
      field.forEachSlot((slot) => {
        if (marks[slot] === mark || rank[slot]! <= after) return;
        marks[slot] = mark;
        slots.push(slot);
      });
    }
    return slots;
  }

  function findEntitiesWithPropertyValues(request: {
    propertyUrn: string;
    keepDefinitionKey?: string;
    afterUrn?: string;
    limit: number;
  }): string[] {
    if (request.limit <= 0) return [];
    const after = request.afterUrn === undefined ? Number.NEGATIVE_INFINITY : table.rankAtOrBefore(request.afterUrn);
    const slots = propertySlots(request.propertyUrn, request.keepDefinitionKey, after);
    const { rank } = table;
    return topK(slots, request.limit, (a, b) => rank[a]! - rank[b]!).map((slot) => table.urns[slot]!);
  }

  function countEntitiesWithPropertyValues(propertyUrn: string, definitionKey?: string): number {
    const byKey = propertyFields.get(propertyUrn);
    if (!byKey) return 0;
    if (definitionKey !== undefined) return byKey.get(definitionKey)?.size ?? 0;
    if (byKey.size === 1) return byKey.values().next().value!.size;
    return propertySlots(propertyUrn, undefined, Number.NEGATIVE_INFINITY).length;
  }

  function findEntitiesWithSeveralPropertyValues(request: SeveralValuesRequest): SeveralValuesResponse {
    const field = propertyFields.get(request.propertyUrn)?.get(request.definitionKey);
    if (!field) return { total: 0, urns: [] };
    let slots = field.slotsWithSeveralValues();
    if (request.filter?.length) {
      const matching = evaluate({ entityTypes: [], filter: request.filter, includeRemoved: true });
      if (!matching.scopeOnly) {
        const { marks } = table;
        slots = slots.filter((slot) => marks[slot] === matching.mark);
      }
    }
    if (request.limit <= 0) return { total: slots.length, urns: [] };
    const after = request.afterUrn === undefined ? Number.NEGATIVE_INFINITY : table.rankAtOrBefore(request.afterUrn);
    const { rank } = table;
    const later = slots.filter((slot) => rank[slot]! > after);
    const urns = topK(later, request.limit, (a, b) => rank[a]! - rank[b]!).map((slot) => table.urns[slot]!);
    return { total: slots.length, urns };
  }

  /** The entity types a request covers (all known when it names none). */
  function typesOf(scope: SearchScope): string[] {
    return scope.entityTypes.length > 0
      ? [...new Set(scope.entityTypes)]
      : table.typeNames.filter((_, id) => table.typeSlots[id]!.size > 0);
  }

  /** The scope keys a request covers. */
  function scopeKeys(scope: SearchScope): string[] {
    const keys: string[] = [];
    for (const type of typesOf(scope)) {
      keys.push(scopeKey(type, false));
      if (scope.includeRemoved) keys.push(scopeKey(type, true));
    }
    return keys;
  }

  function inScopeTest(scope: SearchScope): (slot: number) => boolean {
    const { removed, typeId } = table;
    if (scope.entityTypes.length === 0) return scope.includeRemoved ? () => true : (slot) => removed[slot] === 0;
    const allowed = new Uint8Array(table.typeNames.length);
    for (const type of scope.entityTypes) {
      const id = table.knownTypeId(type);
      if (id !== undefined) allowed[id] = 1;
    }
    return scope.includeRemoved ? (slot) => allowed[typeId[slot]!] === 1 : (slot) => removed[slot] === 0 && allowed[typeId[slot]!] === 1;
  }

  function evaluate(scope: SearchScope): Evaluation & { mark: number } {
    const scores = fullText.search(scope.text);
    const groups = scope.filter.length === 0 || scope.filter.some((group) => group.length === 0) ? [[]] : scope.filter;
    if (scores === undefined && groups.length === 1 && groups[0]!.length === 0) return { scopeOnly: true, mark: 0 };

    const inScope = inScopeTest(scope);
    const textCondition: CompiledCondition | undefined = scores && {
      test: (slot) => scores.has(table.urns[slot]!),
      estimate: scores.size,
      candidates: (visit) => {
        for (const urn of scores.keys()) visit(table.slotOf.get(urn)!);
      },
    };
    const mark = table.nextMark();
    const marks = table.marks;
    const slots: number[] = [];
    for (const group of groups as SearchCondition[][]) {
      const conditions = group.map((condition) => compileCondition(state, condition));
      if (textCondition) conditions.push(textCondition);
      let driver: CompiledCondition | undefined;
      for (const condition of conditions) {
        if (condition.candidates && (driver === undefined || condition.estimate! < driver.estimate!)) driver = condition;
      }
      const checks = conditions.filter((condition) => condition !== driver).map((condition) => condition.test);
      const visit = (slot: number): void => {
        if (marks[slot] === mark || !inScope(slot)) return;
        for (const check of checks) if (!check(slot)) return;
        marks[slot] = mark;
        slots.push(slot);
      };
      if (driver) driver.candidates!(visit);
      else forEachInScope(scope, visit);
    }
    return { scopeOnly: false, slots, scores, mark };
  }

  /** Every slot of the scope's entity types (removed ones too: the caller checks). */
  function forEachInScope(scope: SearchScope, visit: (slot: number) => void): void {
    for (const type of typesOf(scope)) {
      const id = table.knownTypeId(type);
      if (id !== undefined) for (const slot of table.typeSlots[id]!) visit(slot);
    }
  }

  /**
   * The first `count` URNs in URN order after `afterUrn` that pass `accept` (all of the scope when
   * absent): walks the sorted URNs of the scope's types. With several types, each list gives its
   * first `count` and the heads are merged.
   */
  function walk(scope: SearchScope, afterUrn: string | undefined, count: number, accept: (slot: number) => boolean): string[] {
    if (count <= 0) return [];
    const types = [...new Set(scope.entityTypes)];
    const lists = types.length === 0 ? [table.allUrns] : types.map((type) => table.urnsByType.get(type)).filter((l) => l !== undefined);
    const out: string[] = [];
    for (const list of lists) {
      let taken = 0;
      for (const urn of list.valuesAfter(afterUrn)) {
        const slot = table.slotOf.get(urn)!;
        if ((!scope.includeRemoved && table.removed[slot] === 1) || !accept(slot)) continue;
        out.push(urn);
        if (++taken >= count) break;
      }
    }
    if (lists.length > 1) out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return out.slice(0, count);
  }

  function scopeTotal(scope: SearchScope): number {
    let total = 0;
    for (const key of scopeKeys(scope)) total += scopeCounts.get(key) ?? 0;
    return total;
  }

  function hit(slot: number, scores: Map<string, number> | undefined): SearchHit {
    const urn = table.urns[slot]!;
    const entityType = table.typeNames[table.typeId[slot]!]!;
    const score = scores?.get(urn);
    return score === undefined ? { urn, entityType } : { urn, entityType, score };
  }

  /**
   * The first `count` matches in URN order after `afterUrn`. Usually: one pass over the matches
   * comparing ranks (numbers in a typed array) against the worst of the best `count` so far. When
   * the matches are most of the scope, walking the URNs and taking the marked ones reaches `count`
   * after about count × scope size / matches steps, each a map lookup: cheaper only then.
   */
  function firstByUrn(scope: SearchScope, slots: readonly number[], mark: number, afterUrn: string | undefined, count: number): number[] {
    if (count <= 0 || slots.length === 0) return [];
    const steps = count * (table.slotOf.size / slots.length);
    if (steps * WALK_STEP_COST < slots.length) {
      const marks = table.marks;
      return walk(scope, afterUrn, count, (slot) => marks[slot] === mark).map((urn) => table.slotOf.get(urn)!);
    }
    const after = afterUrn === undefined ? Number.NEGATIVE_INFINITY : table.rankAtOrBefore(afterUrn);
    const { rank } = table;
    if (count <= SMALL_PAGE) return smallestRanks(rank, slots, after, count);
    const candidates = afterUrn === undefined ? slots : slots.filter((slot) => rank[slot]! > after);
    return topK(candidates, count, (a, b) => rank[a]! - rank[b]!);
  }

  function search(request: SearchRequest): SearchResponse {
    const offset = Math.max(0, request.offset ?? 0);
    const limit = Math.max(0, request.limit);
    const afterUrn = request.order === 'urn' ? request.afterUrn : undefined;
    const evaluation = evaluate(request);
    if (evaluation.scopeOnly) {
      const urns = walk(request, afterUrn, offset + limit, () => true).slice(offset);
      return { total: scopeTotal(request), hits: urns.map((urn) => hit(table.slotOf.get(urn)!, undefined)) };
    }
    const { slots, scores, mark } = evaluation;
    let page: number[];
    if (request.order === 'relevance' && scores) {
      const { rank } = table;
      const scoreOf = (slot: number): number => scores.get(table.urns[slot]!) ?? 0;
      page = topK(slots, offset + limit, (a, b) => scoreOf(b) - scoreOf(a) || rank[a]! - rank[b]!);
    } else {
      page = firstByUrn(request, slots, mark, afterUrn, offset + limit);
    }
    const ranked = request.order === 'relevance' ? scores : undefined;
    return { total: slots.length, hits: page.slice(offset).map((slot) => hit(slot, ranked)) };
  }

  function aggregate(request: AggregateRequest): FacetResult[] {
    const evaluation = evaluate(request);
    const maxValues = Math.max(0, request.maxValues);
    return request.facets.map((field) => ({ field, buckets: facetBuckets(field, evaluation, request, maxValues) }));
  }

  function facetBuckets(
    field: SearchField,
    evaluation: Evaluation & { mark: number },
    scope: SearchScope,
    maxValues: number,
  ): FacetBucket[] {
    if (maxValues === 0) return [];
    if (field.kind === 'urn') {
      const slots = evaluation.scopeOnly
        ? walk(scope, undefined, maxValues, () => true).map((urn) => table.slotOf.get(urn)!)
        : firstByUrn(scope, evaluation.slots, evaluation.mark, undefined, maxValues);
      return slots.map((slot) => ({ value: table.urns[slot]!, count: 1 }));
    }
    const buckets: FacetBucket[] = [];
    if (field.kind === 'entityType') {
      if (evaluation.scopeOnly) {
        for (const type of typesOf(scope)) {
          const count =
            (scopeCounts.get(scopeKey(type, false)) ?? 0) + (scope.includeRemoved ? (scopeCounts.get(scopeKey(type, true)) ?? 0) : 0);
          if (count) buckets.push({ value: type, count });
        }
      } else {
        const counts = new Int32Array(table.typeNames.length);
        for (const slot of evaluation.slots) counts[table.typeId[slot]!]! += 1;
        counts.forEach((count, id) => {
          if (count) buckets.push({ value: table.typeNames[id]!, count });
        });
      }
    } else {
      const index = fields.get(fieldKeyOf(field));
      if (!index) return [];
      if (evaluation.scopeOnly) {
        const counts = new Map<IndexedValue, number>();
        for (const key of scopeKeys(scope))
          for (const [value, count] of index.countsIn(key) ?? []) counts.set(value, (counts.get(value) ?? 0) + count);
        for (const [value, count] of counts) buckets.push({ value, count });
      } else {
        const counts = new Int32Array(index.idLimit);
        for (const slot of evaluation.slots) index.countValues(slot, counts);
        counts.forEach((count, id) => {
          if (count) buckets.push({ value: index.valueOf(id), count });
        });
      }
    }
    return topK(buckets, maxValues, (a, b) => b.count - a.count || compareValues(a.value, b.value));
  }

  // Every question reads URN ranks: the slots placed since the last one are ranked first (slot-table.ts).
  return {
    search: (request) => (table.settle(), search(request)),
    aggregate: (request) => (table.settle(), aggregate(request)),
    documentChanged,
    findEntitiesWithPropertyValues: (request) => (table.settle(), findEntitiesWithPropertyValues(request)),
    countEntitiesWithPropertyValues: (propertyUrn, definitionKey) => (
      table.settle(),
      countEntitiesWithPropertyValues(propertyUrn, definitionKey)
    ),
    findEntitiesWithSeveralPropertyValues: (request) => (table.settle(), findEntitiesWithSeveralPropertyValues(request)),
  };
}

/** Pages up to this size (offset included) are picked by `smallestRanks`, larger ones by a heap. */
const SMALL_PAGE = 100;

/** What one step of a URN walk costs against one rank comparison (a map lookup of a URN, about). */
const WALK_STEP_COST = 32;

/**
 * The `count` slots of smallest rank above `after`, in rank order: a sorted array of the best so far,
 * which most slots leave at one comparison with its last element.
 */
function smallestRanks(rank: Float64Array, slots: readonly number[], after: number, count: number): number[] {
  const best: number[] = [];
  const bestRanks: number[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const r = rank[slot]!;
    if (r >= worst || r <= after) continue;
    let at = best.length;
    if (at === count) {
      best.pop();
      bestRanks.pop();
      at--;
    }
    while (at > 0 && bestRanks[at - 1]! > r) at--;
    best.splice(at, 0, slot);
    bestRanks.splice(at, 0, r);
    if (best.length === count) worst = bestRanks[count - 1]!;
  }
  return best;
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

/** The distinct values of each indexed field of a document (-0 counts as 0). */
function documentValues(document: SearchDocument): Map<string, IndexedField> {
  const out = new Map<string, IndexedField>();
  const normalized = (value: IndexedValue): IndexedValue => (value === 0 ? 0 : value);
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
