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
} from '../../src/adapter/types';
import { FieldIndex, scopeKey } from './field-index';
import { compileCondition, type CompiledCondition, type SearchState } from './search-conditions';
import { createMemoryFullText, type MemoryFullText } from './search-text';
import { SortedStrings } from './sorted-strings';
import type { IndexedValue } from './sorted-value-slots';
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
}

/** Which documents a request matches: every one in scope (no filter, no text), or a list of slots. */
type Evaluation = { scopeOnly: true } | { scopeOnly: false; slots: number[]; scores: Map<string, number> | undefined };

/**
 * Documents live in numbered slots (reused after removal). Per searchable field (a standard field, or
 * a structured property under one definition key) a `FieldIndex` keeps values by slot, a hash for
 * equality, sorted pairs for ranges and per-scope counts for facets; full text is an incremental
 * BM25 index on lunr's pipeline. A condition group is evaluated from its most selective indexed
 * condition, and every other condition is checked on those candidates only.
 */
export function createMemorySearch(documents: ReadonlyMap<string, SearchDocument>): MemorySearch {
  const state: SearchState = {
    slotOf: new Map(),
    docs: [],
    fields: new Map(),
    typeSlots: new Map(),
    allUrns: new SortedStrings(),
  };
  const scopes: string[] = [];
  const freeSlots: number[] = [];
  const urnsByType = new Map<string, SortedStrings>();
  /** Scope key → number of documents. */
  const scopeCounts = new Map<string, number>();
  const fullText: MemoryFullText = createMemoryFullText();
  /** Generation marks, so a slot found by several groups or values is taken once. */
  let marks = new Int32Array(1024);
  let generation = 0;

  for (const [urn, document] of documents) documentChanged(urn, document);

  function index(slot: number, document: SearchDocument): void {
    const scope = scopeKey(document.entityType, document.removed);
    state.docs[slot] = document;
    scopes[slot] = scope;
    state.allUrns.add(document.urn);
    getOrCreate(urnsByType, document.entityType, () => new SortedStrings()).add(document.urn);
    getOrCreate(state.typeSlots, document.entityType, () => new Set<number>()).add(slot);
    scopeCounts.set(scope, (scopeCounts.get(scope) ?? 0) + 1);
    for (const [key, values] of documentValues(document)) getOrCreate(state.fields, key, () => new FieldIndex()).add(slot, values, scope);
  }

  function unindex(slot: number): void {
    const document = state.docs[slot];
    if (!document) return;
    const scope = scopes[slot]!;
    for (const key of documentValues(document).keys()) {
      const field = state.fields.get(key);
      if (!field) continue;
      field.remove(slot, scope);
      if (field.size === 0) state.fields.delete(key);
    }
    const left = (scopeCounts.get(scope) ?? 1) - 1;
    if (left > 0) scopeCounts.set(scope, left);
    else scopeCounts.delete(scope);
    const typed = state.typeSlots.get(document.entityType);
    typed?.delete(slot);
    if (typed?.size === 0) state.typeSlots.delete(document.entityType);
    const urns = urnsByType.get(document.entityType);
    urns?.delete(document.urn);
    if (urns?.size === 0) urnsByType.delete(document.entityType);
    state.allUrns.delete(document.urn);
    state.docs[slot] = undefined;
  }

  function documentChanged(urn: string, document: SearchDocument | undefined): void {
    let slot = state.slotOf.get(urn);
    const previous = slot === undefined ? undefined : state.docs[slot];
    if (slot !== undefined) unindex(slot);
    if (document) {
      if (slot === undefined) {
        slot = freeSlots.pop() ?? state.docs.length;
        state.slotOf.set(urn, slot);
        if (slot >= marks.length) {
          const grown = new Int32Array(Math.max(marks.length * 2, slot + 1));
          grown.set(marks);
          marks = grown;
        }
      }
      index(slot, document);
      if (!previous || !sameText(previous, document)) fullText.upsert(urn, document.text);
    } else if (slot !== undefined) {
      state.slotOf.delete(urn);
      freeSlots.push(slot);
      fullText.remove(urn);
    }
  }

  /** The scope keys a request covers. */
  function scopeKeys(scope: SearchScope): string[] {
    const types = scope.entityTypes.length > 0 ? scope.entityTypes : [...state.typeSlots.keys()];
    const keys: string[] = [];
    for (const type of new Set(types)) {
      keys.push(scopeKey(type, false));
      if (scope.includeRemoved) keys.push(scopeKey(type, true));
    }
    return keys;
  }

  function inScopeTest(scope: SearchScope): (slot: number) => boolean {
    const types = scope.entityTypes.length > 0 ? new Set(scope.entityTypes) : undefined;
    const includeRemoved = scope.includeRemoved;
    return (slot) => {
      const document = state.docs[slot]!;
      return (includeRemoved || !document.removed) && (types === undefined || types.has(document.entityType));
    };
  }

  function evaluate(scope: SearchScope): Evaluation {
    const scores = fullText.search(scope.text);
    const groups = scope.filter.length === 0 || scope.filter.some((group) => group.length === 0) ? [[]] : scope.filter;
    if (scores === undefined && groups.length === 1 && groups[0]!.length === 0) return { scopeOnly: true };

    const inScope = inScopeTest(scope);
    const textCondition: CompiledCondition | undefined = scores && {
      test: (slot) => scores.has(state.docs[slot]!.urn),
      estimate: scores.size,
      candidates: (visit) => {
        for (const urn of scores.keys()) visit(state.slotOf.get(urn)!);
      },
    };
    generation += 1;
    if (generation === 0x7fffffff) {
      marks.fill(0);
      generation = 1;
    }
    const mark = generation;
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
    return { scopeOnly: false, slots, scores };
  }

  /** Every slot of the scope's entity types (removed ones too: the caller checks). */
  function forEachInScope(scope: SearchScope, visit: (slot: number) => void): void {
    if (scope.entityTypes.length === 0) {
      for (const slot of state.slotOf.values()) visit(slot);
      return;
    }
    for (const type of new Set(scope.entityTypes)) for (const slot of state.typeSlots.get(type) ?? []) visit(slot);
  }

  /** The first `count` URNs of the scope after `afterUrn`, in URN order, without a filter. */
  function scopePage(scope: SearchScope, afterUrn: string | undefined, count: number): string[] {
    if (count <= 0) return [];
    const types = [...new Set(scope.entityTypes)];
    const lists = types.length === 0 ? [state.allUrns] : types.map((type) => urnsByType.get(type)).filter((l) => l !== undefined);
    const out: string[] = [];
    for (const list of lists) {
      let taken = 0;
      for (const urn of list.valuesAfter(afterUrn)) {
        if (!scope.includeRemoved && state.docs[state.slotOf.get(urn)!]!.removed) continue;
        out.push(urn);
        if (++taken >= count) break;
      }
    }
    // Each list is sorted; with several entity types, merge their heads.
    if (lists.length > 1) out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return out.slice(0, count);
  }

  function scopeTotal(scope: SearchScope): number {
    let total = 0;
    for (const key of scopeKeys(scope)) total += scopeCounts.get(key) ?? 0;
    return total;
  }

  function hit(slot: number, scores: Map<string, number> | undefined): SearchHit {
    const document = state.docs[slot]!;
    const score = scores?.get(document.urn);
    return score === undefined ? { urn: document.urn, entityType: document.entityType } : { urn: document.urn, entityType: document.entityType, score };
  }

  function search(request: SearchRequest): SearchResponse {
    const offset = Math.max(0, request.offset ?? 0);
    const limit = Math.max(0, request.limit);
    const afterUrn = request.order === 'urn' ? request.afterUrn : undefined;
    const evaluation = evaluate(request);
    if (evaluation.scopeOnly) {
      const urns = scopePage(request, afterUrn, offset + limit).slice(offset);
      return { total: scopeTotal(request), hits: urns.map((urn) => hit(state.slotOf.get(urn)!, undefined)) };
    }
    const { slots, scores } = evaluation;
    const urnOf = (slot: number): string => state.docs[slot]!.urn;
    let page: number[];
    if (request.order === 'relevance' && scores) {
      const scoreOf = (slot: number): number => scores.get(urnOf(slot)) ?? 0;
      page = topK(slots, offset + limit, (a, b) => scoreOf(b) - scoreOf(a) || compareCodeUnits(urnOf(a), urnOf(b)));
    } else {
      const candidates = afterUrn === undefined ? slots : slots.filter((slot) => urnOf(slot) > afterUrn);
      page = topK(candidates, offset + limit, (a, b) => compareCodeUnits(urnOf(a), urnOf(b)));
    }
    const ranked = request.order === 'relevance' ? scores : undefined;
    return { total: slots.length, hits: page.slice(offset).map((slot) => hit(slot, ranked)) };
  }

  function aggregate(request: AggregateRequest): FacetResult[] {
    const evaluation = evaluate(request);
    const maxValues = Math.max(0, request.maxValues);
    return request.facets.map((field) => ({ field, buckets: facetBuckets(field, evaluation, request, maxValues) }));
  }

  function facetBuckets(field: SearchField, evaluation: Evaluation, scope: SearchScope, maxValues: number): FacetBucket[] {
    if (maxValues === 0) return [];
    if (field.kind === 'urn') {
      const urns = evaluation.scopeOnly
        ? scopePage(scope, undefined, maxValues)
        : topK(evaluation.slots, maxValues, (a, b) => compareCodeUnits(state.docs[a]!.urn, state.docs[b]!.urn)).map((slot) => state.docs[slot]!.urn);
      return urns.map((urn) => ({ value: urn, count: 1 }));
    }
    const counts = new Map<IndexedValue, number>();
    const add = (value: IndexedValue, count: number): void => {
      counts.set(value, (counts.get(value) ?? 0) + count);
    };
    if (field.kind === 'entityType') {
      if (evaluation.scopeOnly) {
        for (const key of scopeKeys(scope)) {
          const count = scopeCounts.get(key);
          if (count) add(key.slice(1), count);
        }
      } else {
        for (const slot of evaluation.slots) add(state.docs[slot]!.entityType, 1);
      }
    } else {
      const index = state.fields.get(fieldKeyOf(field));
      if (!index) return [];
      if (evaluation.scopeOnly) {
        for (const key of scopeKeys(scope)) for (const [value, count] of index.countsIn(key) ?? []) add(value, count);
      } else {
        for (const slot of evaluation.slots) for (const value of index.valuesOf(slot) ?? []) add(value, 1);
      }
    }
    const buckets = [...counts].map(([value, count]) => ({ value, count }));
    return topK(buckets, maxValues, (a, b) => b.count - a.count || compareValues(a.value, b.value));
  }

  return { search, aggregate, documentChanged };
}

/** The index key of a standard field or of a property under one definition key. */
export function fieldKeyOf(field: Extract<SearchField, { kind: 'field' | 'property' }>): string {
  return field.kind === 'field' ? `f\u0000${field.name}` : `p\u0000${field.propertyUrn}\u0000${field.definitionKey}`;
}

/** The distinct values of each indexed field of a document. */
function documentValues(document: SearchDocument): Map<string, IndexedValue[]> {
  const out = new Map<string, IndexedValue[]>();
  for (const name of Object.keys(document.fields)) {
    const values = [...new Set(document.fields[name])];
    if (values.length) out.set(fieldKeyOf({ kind: 'field', name }), values);
  }
  for (const property of document.properties) {
    if (property.values.length === 0) continue;
    const key = fieldKeyOf({ kind: 'property', propertyUrn: property.propertyUrn, definitionKey: property.definitionKey, valueKind: 'string' });
    const previous = out.get(key);
    out.set(key, [...new Set(previous ? [...previous, ...property.values] : property.values)]);
  }
  return out;
}

function sameText(a: SearchDocument, b: SearchDocument): boolean {
  return a.text.name === b.text.name && a.text.description === b.text.description && a.text.urnKey === b.text.urnKey;
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
