import type {
  AggregateRequest,
  FacetBucket,
  FacetResult,
  SearchDocument,
  SearchField,
  SearchHit,
  SearchRequest,
  SearchResponse,
  SearchScope,
  SeveralValuesRequest,
  SeveralValuesResponse,
} from '../../src/adapter/types';
import { scopeKey } from './field-index';
import { fieldKeyOf } from './field-keys';
import * as propertyValues from './property-values';
import { createDocumentIndex, type DocumentIndex } from './search-documents';
import { evaluate, firstByUrn, scopeKeys, scopeTotal, typesOf, walk, type Evaluation } from './search-scope';
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

/**
 * Documents live in numbered slots (slot-table.ts). Per searchable field (a standard field, or a
 * structured property under one definition key) a `FieldIndex` keeps value ids by slot, a hash for
 * equality, sorted pairs for ranges and per-scope counts for facets; full text is an incremental
 * BM25 index on lunr's pipeline (search-text.ts). A condition group is evaluated from its most
 * selective indexed condition, every other condition is checked on those candidates only, and a
 * page is picked by URN rank without sorting the matches.
 */
export function createMemorySearch(): MemorySearch {
  const index = createDocumentIndex();
  const { table } = index;
  // Every question reads URN ranks: the slots placed since the last one are ranked first (slot-table.ts).
  return {
    search: (request) => (table.settle(), search(index, request)),
    aggregate: (request) => (table.settle(), aggregate(index, request)),
    documentChanged: index.documentChanged,
    findEntitiesWithPropertyValues: (request) => (table.settle(), propertyValues.findEntitiesWithPropertyValues(index, request)),
    countEntitiesWithPropertyValues: (propertyUrn, definitionKey) => (
      table.settle(),
      propertyValues.countEntitiesWithPropertyValues(index, propertyUrn, definitionKey)
    ),
    findEntitiesWithSeveralPropertyValues: (request) => (
      table.settle(),
      propertyValues.findEntitiesWithSeveralPropertyValues(index, request)
    ),
  };
}

function hit(index: DocumentIndex, slot: number, scores: Map<string, number> | undefined): SearchHit {
  const urn = index.table.urns[slot]!;
  const entityType = index.table.typeNames[index.table.typeId[slot]!]!;
  const score = scores?.get(urn);
  return score === undefined ? { urn, entityType } : { urn, entityType, score };
}

function search(index: DocumentIndex, request: SearchRequest): SearchResponse {
  const offset = Math.max(0, request.offset ?? 0);
  const limit = Math.max(0, request.limit);
  const afterUrn = request.order === 'urn' ? request.afterUrn : undefined;
  const evaluation = evaluate(index, request);
  if (evaluation.scopeOnly) {
    const urns = walk(index, request, afterUrn, offset + limit, () => true).slice(offset);
    return { total: scopeTotal(index, request), hits: urns.map((urn) => hit(index, index.table.slotOf.get(urn)!, undefined)) };
  }
  const { slots, scores, mark } = evaluation;
  let page: number[];
  if (request.order === 'relevance' && scores) {
    const { rank } = index.table;
    const scoreOf = (slot: number): number => scores.get(index.table.urns[slot]!) ?? 0;
    page = topK(slots, offset + limit, (a, b) => scoreOf(b) - scoreOf(a) || rank[a]! - rank[b]!);
  } else {
    page = firstByUrn(index, request, slots, mark, afterUrn, offset + limit);
  }
  const ranked = request.order === 'relevance' ? scores : undefined;
  return { total: slots.length, hits: page.slice(offset).map((slot) => hit(index, slot, ranked)) };
}

function aggregate(index: DocumentIndex, request: AggregateRequest): FacetResult[] {
  const evaluation = evaluate(index, request);
  const maxValues = Math.max(0, request.maxValues);
  return request.facets.map((field) => ({ field, buckets: facetBuckets(index, field, evaluation, request, maxValues) }));
}

function facetBuckets(
  index: DocumentIndex,
  field: SearchField,
  evaluation: Evaluation & { mark: number },
  scope: SearchScope,
  maxValues: number,
): FacetBucket[] {
  if (maxValues === 0) return [];
  if (field.kind === 'urn') {
    const slots = evaluation.scopeOnly
      ? walk(index, scope, undefined, maxValues, () => true).map((urn) => index.table.slotOf.get(urn)!)
      : firstByUrn(index, scope, evaluation.slots, evaluation.mark, undefined, maxValues);
    return slots.map((slot) => ({ value: index.table.urns[slot]!, count: 1 }));
  }
  const buckets: FacetBucket[] = [];
  if (field.kind === 'entityType') {
    if (evaluation.scopeOnly) {
      for (const type of typesOf(index, scope)) {
        const count =
          (index.scopeCounts.get(scopeKey(type, false)) ?? 0) +
          (scope.includeRemoved ? (index.scopeCounts.get(scopeKey(type, true)) ?? 0) : 0);
        if (count) buckets.push({ value: type, count });
      }
    } else {
      const counts = new Int32Array(index.table.typeNames.length);
      for (const slot of evaluation.slots) counts[index.table.typeId[slot]!]! += 1;
      counts.forEach((count, id) => {
        if (count) buckets.push({ value: index.table.typeNames[id]!, count });
      });
    }
  } else {
    const fieldIndex = index.fields.get(fieldKeyOf(field));
    if (!fieldIndex) return [];
    if (evaluation.scopeOnly) {
      const counts = new Map<IndexedValue, number>();
      for (const key of scopeKeys(index, scope))
        for (const [value, count] of fieldIndex.countsIn(key) ?? []) counts.set(value, (counts.get(value) ?? 0) + count);
      for (const [value, count] of counts) buckets.push({ value, count });
    } else {
      const counts = new Int32Array(fieldIndex.idLimit);
      for (const slot of evaluation.slots) fieldIndex.countValues(slot, counts);
      counts.forEach((count, id) => {
        if (count) buckets.push({ value: fieldIndex.valueOf(id), count });
      });
    }
  }
  return topK(buckets, maxValues, (a, b) => b.count - a.count || compareValues(a.value, b.value));
}
