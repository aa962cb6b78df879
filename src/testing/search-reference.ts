/**
 * A plain-JS evaluation of the search contract over an array of search documents: the oracle the
 * conformance suite compares every adapter with. Written for clarity, not speed: it re-reads every
 * document for every request. Each rule below is the contract's (src/adapter/types.ts).
 */
import type {
  AggregateRequest,
  FacetBucket,
  FacetResult,
  SearchCondition,
  SearchDocument,
  SearchField,
  SearchRequest,
  SearchScope,
} from '../adapter/types';
import { analyzeText, parseTextQuery } from '../adapter/text-analysis';

export interface ReferenceSearchResult {
  total: number;
  /**
   * The page, as URNs. When the request ranks by full-text score (`order: 'relevance'` with text),
   * the reference cannot know an adapter's scores: `urns` then holds every match in URN order and
   * `ranked` is true, and a comparison checks the set, not the page.
   */
  urns: string[];
  ranked: boolean;
}

/** Code-unit order, the order the contract fixes for URNs and string values. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The contract's value order: numbers (ascending) before strings (code units). */
export function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return compareCodeUnits(a, b);
}

/** The values a document has for a field (properties: only under the field's definition key). */
export function referenceFieldValues(document: SearchDocument, field: SearchField): Array<string | number> {
  switch (field.kind) {
    case 'entityType':
      return [document.entityType];
    case 'urn':
      return [document.urn];
    case 'field':
      return Object.prototype.hasOwnProperty.call(document.fields, field.name) ? [...document.fields[field.name]!] : [];
    case 'property': {
      const out: Array<string | number> = [];
      for (const property of document.properties) {
        if (property.propertyUrn === field.propertyUrn && property.definitionKey === field.definitionKey) out.push(...property.values);
      }
      return out;
    }
  }
}

function valueMatches(operator: SearchCondition['operator'], actual: string | number, wanted: string | number): boolean {
  if (typeof actual !== typeof wanted) return false;
  switch (operator) {
    case 'EQUAL':
    case 'IN':
      return actual === wanted;
    case 'IEQUAL':
      return typeof actual === 'string' ? actual.toLowerCase() === (wanted as string).toLowerCase() : actual === wanted;
    case 'CONTAIN':
      return typeof actual === 'string' && actual.includes(wanted as string);
    case 'START_WITH':
      return typeof actual === 'string' && actual.startsWith(wanted as string);
    case 'END_WITH':
      return typeof actual === 'string' && actual.endsWith(wanted as string);
    case 'GREATER_THAN':
      return actual > wanted;
    case 'GREATER_THAN_OR_EQUAL_TO':
      return actual >= wanted;
    case 'LESS_THAN':
      return actual < wanted;
    case 'LESS_THAN_OR_EQUAL_TO':
      return actual <= wanted;
    case 'EXISTS':
      return true;
  }
}

export function referenceConditionMatches(document: SearchDocument, condition: SearchCondition): boolean {
  const values = referenceFieldValues(document, condition.field);
  const matched =
    condition.operator === 'EXISTS'
      ? values.length > 0
      : values.some((actual) => condition.values.some((wanted) => valueMatches(condition.operator, actual, wanted)));
  return condition.negated ? !matched : matched;
}

/** Every query term must be an index term of the document's text (a prefix term: the start of one). */
export function referenceTextMatches(document: SearchDocument, text: string | undefined): boolean {
  const terms = parseTextQuery(text);
  if (terms === undefined) return true;
  if (terms.length === 0) return false;
  const indexed = new Set([
    ...analyzeText(document.text.name),
    ...analyzeText(document.text.description),
    ...analyzeText(document.text.urnKey),
  ]);
  return terms.every(({ term, prefix }) => (prefix ? [...indexed].some((t) => t.startsWith(term)) : indexed.has(term)));
}

export function referenceMatches(document: SearchDocument, scope: SearchScope): boolean {
  if (scope.entityTypes.length > 0 && !scope.entityTypes.includes(document.entityType)) return false;
  if (document.removed && !scope.includeRemoved) return false;
  if (!referenceTextMatches(document, scope.text)) return false;
  if (scope.filter.length === 0) return true;
  return scope.filter.some((group) => group.every((condition) => referenceConditionMatches(document, condition)));
}

/** The matching documents in URN order. */
export function referenceMatching(documents: readonly SearchDocument[], scope: SearchScope): SearchDocument[] {
  return documents.filter((d) => referenceMatches(d, scope)).sort((a, b) => compareCodeUnits(a.urn, b.urn));
}

export function referenceSearch(documents: readonly SearchDocument[], request: SearchRequest): ReferenceSearchResult {
  const matching = referenceMatching(documents, request);
  const ranked = request.order === 'relevance' && parseTextQuery(request.text) !== undefined;
  if (ranked) return { total: matching.length, urns: matching.map((d) => d.urn), ranked };
  let page = matching.map((d) => d.urn);
  if (request.order === 'urn' && request.afterUrn !== undefined) page = page.filter((urn) => urn > request.afterUrn!);
  const offset = request.offset ?? 0;
  return { total: matching.length, urns: page.slice(offset, offset + request.limit), ranked };
}

export function referenceAggregate(documents: readonly SearchDocument[], request: AggregateRequest): FacetResult[] {
  const matching = referenceMatching(documents, request);
  return request.facets.map((field) => {
    const counts = new Map<string | number, number>();
    for (const document of matching) {
      for (const value of new Set(referenceFieldValues(document, field))) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    const buckets: FacetBucket[] = [...counts]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || compareValues(a.value, b.value))
      .slice(0, request.maxValues);
    return { field, buckets };
  });
}
