/**
 * A search index that works over any entity store: it keeps no index of its own and answers each
 * question by reading every search document the store holds (under `SEARCH_DOCUMENT_ASPECT`, where
 * `composeAdapter` writes them through the store's commit) and evaluating the contract in plain
 * JavaScript (search-evaluation.ts, the same evaluation the conformance suite compares adapters with).
 *
 * Correct by construction and always in step with the store (it reads what was committed); its cost
 * is a full read per question, so it suits stores of a few thousand entities, tests and prototypes.
 * A larger catalog brings a search index of its own.
 */
import { scanPages } from './scan-pages';
import type { EntityStore } from './entity-store';
import type { PropertyValueIndex } from './property-value-index';
import { aggregateDocuments, compareCodeUnits, documentMatches, matchingDocuments } from './search-evaluation';
import type { SearchDocument, SearchIndex, SearchRequest, SearchResponse, SearchScope } from './search-index';
import { SEARCH_DOCUMENT_ASPECT } from './store-records';
import { analyzeText, parseTextQuery } from './text-analysis';

const PAGE = 500;
/** A term found in the name weighs this much more than one in the description or the URN key. */
const NAME_WEIGHT = 3;

export interface ScanSearchIndexOptions {
  /** Documents read per `scanEntities` call. Default 500. */
  pageSize?: number;
}

/**
 * A search index over the documents an entity store keeps (see the file's comment for its cost). It
 * answers the property-value questions over the same documents too: give it to `composeAdapter` as
 * `propertyValues` as well to have them answered here rather than by the domain's scan of the aspects.
 */
export function createScanSearchIndex(store: EntityStore, options: ScanSearchIndexOptions = {}): SearchIndex & PropertyValueIndex {
  const pageSize = options.pageSize ?? PAGE;

  async function documents(): Promise<SearchDocument[]> {
    const out: SearchDocument[] = [];
    const request = { requireAspect: SEARCH_DOCUMENT_ASPECT, aspectNames: [SEARCH_DOCUMENT_ASPECT] };
    for await (const page of scanPages(store, request, pageSize)) {
      for (const entity of page) {
        const aspect = entity.aspects[SEARCH_DOCUMENT_ASPECT];
        if (aspect) out.push(aspect.value as unknown as SearchDocument);
      }
    }
    return out;
  }

  return {
    async search(request) {
      // The token first: the answer is read from this state or a later one, never an earlier one.
      const changeToken = store.capabilities.changeToken && store.changeToken ? await store.changeToken() : undefined;
      const matching = matchingDocuments(await documents(), request);
      const response = page(matching, request);
      if (changeToken !== undefined) response.changeToken = changeToken;
      return response;
    },
    async aggregate(request) {
      return aggregateDocuments(await documents(), request);
    },
    async findEntitiesWithPropertyValues(request) {
      const { propertyUrn, keepDefinitionKey, afterUrn, limit } = request;
      return (await documents())
        .filter((d) => afterUrn === undefined || d.urn > afterUrn)
        .filter((d) => d.properties.some((p) => p.propertyUrn === propertyUrn && p.definitionKey !== keepDefinitionKey && p.values.length))
        .map((d) => d.urn)
        .sort(compareCodeUnits)
        .slice(0, limit);
    },
    async countEntitiesWithPropertyValues(propertyUrn, definitionKey) {
      return (await documents()).filter((d) =>
        d.properties.some(
          (p) => p.propertyUrn === propertyUrn && (definitionKey === undefined || p.definitionKey === definitionKey) && p.values.length,
        ),
      ).length;
    },
    async findEntitiesWithSeveralPropertyValues(request) {
      const { propertyUrn, definitionKey, afterUrn, limit } = request;
      const scope: SearchScope = { entityTypes: [], filter: request.filter ?? [], includeRemoved: true };
      const several = (await documents())
        .filter(
          (d) =>
            d.properties.some((p) => p.propertyUrn === propertyUrn && p.definitionKey === definitionKey && p.values.length > 1) &&
            documentMatches(d, scope),
        )
        .map((d) => d.urn)
        .sort(compareCodeUnits);
      const urns = several.filter((urn) => afterUrn === undefined || urn > afterUrn).slice(0, Math.max(0, limit));
      return { total: several.length, urns };
    },
  };
}

/** One page of matches (in URN order) as the request orders it. */
function page(matching: SearchDocument[], request: SearchRequest): SearchResponse {
  const offset = request.offset ?? 0;
  const terms = request.order === 'relevance' ? parseTextQuery(request.text) : undefined;
  if (terms !== undefined) {
    const scored = matching.map((document) => ({ document, score: score(document, terms) }));
    scored.sort((a, b) => b.score - a.score || compareCodeUnits(a.document.urn, b.document.urn));
    return {
      total: matching.length,
      hits: scored
        .slice(offset, offset + request.limit)
        .map(({ document, score }) => ({ urn: document.urn, entityType: document.entityType, score })),
    };
  }
  const after = request.order === 'urn' ? request.afterUrn : undefined;
  const rest = after === undefined ? matching : matching.filter((d) => d.urn > after);
  return {
    total: matching.length,
    hits: rest.slice(offset, offset + request.limit).map((d) => ({ urn: d.urn, entityType: d.entityType })),
  };
}

/** How often the query's terms occur, a name's occurrences weighing more (a simple term frequency). */
function score(document: SearchDocument, terms: ReadonlyArray<{ term: string; prefix: boolean }>): number {
  const count = (text: string | undefined): number => {
    const analysed = analyzeText(text);
    let n = 0;
    for (const { term, prefix } of terms) for (const t of analysed) if (prefix ? t.startsWith(term) : t === term) n++;
    return n;
  };
  return NAME_WEIGHT * count(document.text.name) + count(document.text.description) + count(document.text.urnKey);
}
