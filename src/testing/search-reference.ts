/**
 * The oracle the conformance suite compares every adapter with: the search contract evaluated in
 * plain JavaScript (src/adapter/search-evaluation.ts, which the scan-based search index answers with
 * too), plus what only a comparison needs: a page the reference cannot rank.
 */
import type { SearchDocument, SearchRequest } from '../adapter/types';
import { matchingDocuments } from '../adapter/search-evaluation';
import { parseTextQuery } from '../adapter/text-analysis';

export {
  aggregateDocuments as referenceAggregate,
  compareCodeUnits,
  matchingDocuments as referenceMatching,
} from '../adapter/search-evaluation';

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

export function referenceSearch(documents: readonly SearchDocument[], request: SearchRequest): ReferenceSearchResult {
  const matching = matchingDocuments(documents, request);
  const ranked = request.order === 'relevance' && parseTextQuery(request.text) !== undefined;
  if (ranked) return { total: matching.length, urns: matching.map((d) => d.urn), ranked };
  let page = matching.map((d) => d.urn);
  if (request.order === 'urn' && request.afterUrn !== undefined) page = page.filter((urn) => urn > request.afterUrn!);
  const offset = request.offset ?? 0;
  return { total: matching.length, urns: page.slice(offset, offset + request.limit), ranked };
}
