/**
 * The search contract evaluated in plain JavaScript over search documents: which documents match a
 * scope, what a field holds, how facets count. Written for clarity, not speed (every request looks at
 * every document). The scan-based search index answers with it, and the conformance suite compares
 * every adapter with it. Each rule is the contract's (search-index.ts).
 */
import type { AggregateRequest, FacetBucket, FacetResult, SearchCondition, SearchDocument, SearchField, SearchScope } from './search-index';
import { analyzeText, parseTextQuery } from './text-analysis';

/** Code-unit order, the order the contract fixes for URNs and string values. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The contract's value order: numbers (ascending) before strings (code units). */
function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return compareCodeUnits(a, b);
}

/** The values a document has for a field (properties: only under the field's definition key). */
function documentFieldValues(document: SearchDocument, field: SearchField): Array<string | number> {
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

function conditionMatches(document: SearchDocument, condition: SearchCondition): boolean {
  const values = documentFieldValues(document, condition.field);
  const matched =
    condition.operator === 'EXISTS'
      ? values.length > 0
      : values.some((actual) => condition.values.some((wanted) => valueMatches(condition.operator, actual, wanted)));
  return condition.negated ? !matched : matched;
}

/** The last query parsed: `matchingDocuments` asks for the same one once per document. */
let lastQuery: { text: string | undefined; terms: ReturnType<typeof parseTextQuery> } = { text: undefined, terms: undefined };

function queryTerms(text: string | undefined): ReturnType<typeof parseTextQuery> {
  if (text !== lastQuery.text) lastQuery = { text, terms: parseTextQuery(text) };
  return lastQuery.terms;
}

interface IndexedText {
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly urnKey: string | undefined;
  readonly terms: ReadonlySet<string>;
  /** The same terms as a list, for the prefix terms' scan. */
  readonly list: readonly string[];
}

/**
 * The index terms of a document's text, kept per document object while it lives (a weak map: the documents a
 * caller evaluates many requests against, such as the reference of the conformance suite, are analysed once).
 * Kept with the texts they come from, so that a document whose text was changed since is analysed again.
 */
const indexedTexts = new WeakMap<SearchDocument, IndexedText>();

function indexedText(document: SearchDocument): IndexedText {
  const { name, description, urnKey } = document.text;
  const known = indexedTexts.get(document);
  if (known !== undefined && known.name === name && known.description === description && known.urnKey === urnKey) return known;
  const terms = new Set([...analyzeText(name), ...analyzeText(description), ...analyzeText(urnKey)]);
  const indexed = { name, description, urnKey, terms, list: [...terms] };
  indexedTexts.set(document, indexed);
  return indexed;
}

/** Every query term must be an index term of the document's text (a prefix term: the start of one). */
function textMatches(document: SearchDocument, text: string | undefined): boolean {
  const terms = queryTerms(text);
  if (terms === undefined) return true;
  if (terms.length === 0) return false;
  const indexed = indexedText(document);
  return terms.every(({ term, prefix }) => (prefix ? indexed.list.some((t) => t.startsWith(term)) : indexed.terms.has(term)));
}

export function documentMatches(document: SearchDocument, scope: SearchScope): boolean {
  if (scope.entityTypes.length > 0 && !scope.entityTypes.includes(document.entityType)) return false;
  if (document.removed && !scope.includeRemoved) return false;
  if (!textMatches(document, scope.text)) return false;
  if (scope.filter.length === 0) return true;
  return scope.filter.some((group) => group.every((condition) => conditionMatches(document, condition)));
}

/** The matching documents in URN order. */
export function matchingDocuments(documents: readonly SearchDocument[], scope: SearchScope): SearchDocument[] {
  return documents.filter((d) => documentMatches(d, scope)).sort((a, b) => compareCodeUnits(a.urn, b.urn));
}

export function aggregateDocuments(documents: readonly SearchDocument[], request: AggregateRequest): FacetResult[] {
  const matching = matchingDocuments(documents, request);
  return request.facets.map((field) => {
    const counts = new Map<string | number, number>();
    for (const document of matching) {
      for (const value of new Set(documentFieldValues(document, field))) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    const buckets: FacetBucket[] = [...counts]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || compareValues(a.value, b.value))
      .slice(0, request.maxValues);
    return { field, buckets };
  });
}
