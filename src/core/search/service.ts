import type { Actor } from '../access/actor';
import { decodeCursor, encodeCursor } from '../../adapter/cursor';
import type { SearchHit, SearchRequest, SearchResponse, SearchScope } from '../../adapter/types';
import { aggregateAcrossEntities, type AggregateAcrossEntitiesInput, type AggregateAcrossEntitiesResult } from './aggregation';
import type { CatalogContext } from '../context';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import { checkSchema } from '../validation';
import { scrollInputSchema, searchInputSchema } from '../validation/schemas/search';
import { SearchInputResolver, type FilterFieldSource, type SearchScopeInput } from './input';
import type { StructuredPropertyService } from '../properties/service';

export interface ScrollAcrossEntitiesInput extends SearchScopeInput {
  /** Page size, 0 to 10,000; default 10. */
  count?: number | null;
  /** The `nextScrollId` of the previous page; absent for the first page. */
  scrollId?: string | null;
  /** Accepted for compatibility and ignored: a scroll id never expires. */
  keepAlive?: string | null;
}

export interface SearchAcrossEntitiesInput extends SearchScopeInput {
  /** Offset of the first result; default 0. */
  start?: number | null;
  /** Page size, 0 to 10,000; default 10. */
  count?: number | null;
}

/** One result: the entity's URN and its GraphQL `EntityType` name. */
export interface SearchResultEntry {
  entity: { urn: string; type: string };
}

export interface ScrollAcrossEntitiesResult {
  /** Pass it back as `scrollId` for the next page; null when this page is the last. */
  nextScrollId: string | null;
  /** Results on this page. */
  count: number;
  /** Matches in total, over all pages. */
  total: number;
  searchResults: SearchResultEntry[];
}

export interface SearchAcrossEntitiesResult {
  start: number;
  count: number;
  total: number;
  searchResults: SearchResultEntry[];
}

/**
 * `catalog.search`: scrollAcrossEntities, searchAcrossEntities and aggregateAcrossEntities over the
 * adapter's search documents. Reading needs an authenticated actor and no privilege. docs/search.md
 * describes every rule.
 */
export interface SearchService {
  /** Pages in URN order with an opaque cursor that stays valid while writes happen (no duplicates, no gaps). */
  scroll(actor: Actor, input: ScrollAcrossEntitiesInput): Promise<ScrollAcrossEntitiesResult>;
  /** Best full-text matches first (URN order without a query), paged by offset. */
  search(actor: Actor, input: SearchAcrossEntitiesInput): Promise<SearchAcrossEntitiesResult>;
  /** Counts per value of each facet over the matching entities. */
  aggregate(actor: Actor, input: AggregateAcrossEntitiesInput): Promise<AggregateAcrossEntitiesResult>;
}

const DEFAULT_COUNT = 10;
const CURSOR_VERSION = 1;

/** The scroll id: the last URN returned, so the next page starts right after it whatever was written meanwhile. */
function encodeScrollId(afterUrn: string): string {
  return encodeCursor({ v: CURSOR_VERSION, after: afterUrn });
}

function decodeScrollId(scrollId: string, violations: Violation[]): string | undefined {
  const after = decodeCursor(scrollId, ({ v, after }) => (v === CURSOR_VERSION && typeof after === 'string' ? after : undefined));
  if (after !== undefined) return after;
  violations.push({ path: '/scrollId', message: 'is not a scroll id returned by scrollAcrossEntities' });
  return undefined;
}

function checkShape(schema: Parameters<typeof checkSchema>[0], input: unknown, operation: string): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new CatalogError('INVALID_INPUT', `${operation}: the input must be an object`, {
      details: [{ path: '/', message: 'must be an object' }],
    });
  }
  throwIfViolations(checkSchema(schema, input), `invalid ${operation} input`);
}

/** What a search asks for besides its scope. */
type PageRequest = Omit<SearchRequest, keyof SearchScope>;

function requestOf(scope: SearchScope, page: PageRequest): SearchRequest {
  return { ...scope, ...page };
}

/** Whether two resolutions of one input give the adapter the same request (same keys, same typed values). */
function sameScope(a: SearchScope, b: SearchScope): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function createSearchService(
  ctx: CatalogContext,
  properties: StructuredPropertyService,
  filterFields: FilterFieldSource,
): SearchService {
  const resolver = new SearchInputResolver(ctx, filterFields);
  /** Whether the adapter's answers carry the change token they were read under (learnt from the first). */
  let answersCarryToken = false;

  /**
   * Resolves the scope and searches. When answers carry their change token, the scope is first
   * resolved from cached definitions without asking for the token, and the answer's token checks them
   * afterwards: equal, the definitions held for the state searched; different, the scope is resolved
   * again at the current state and the search repeated only if that changed it. `pageProblems`: what
   * the caller found wrong with the rest of the input, reported after the scope's problems.
   */
  const run = async (
    who: string,
    input: SearchScopeInput,
    operation: string,
    pageProblems: Violation[],
    page: PageRequest,
  ): Promise<SearchResponse> => {
    const cached = answersCarryToken ? resolver.cachedScope(input) : undefined;
    if (cached) {
      throwIfViolations(pageProblems, `invalid ${operation} input`);
      const response = await ctx.adapter.search(requestOf(cached.scope, page));
      if (cached.token === undefined || response.changeToken === cached.token) return response;
      const violations: Violation[] = [];
      const scope = await resolver.scope(who, input, violations);
      throwIfViolations(violations, `invalid ${operation} input`);
      return sameScope(scope, cached.scope) ? response : ctx.adapter.search(requestOf(scope, page));
    }
    const violations: Violation[] = [];
    const scope = await resolver.scope(who, input, violations);
    violations.push(...pageProblems);
    throwIfViolations(violations, `invalid ${operation} input`);
    const response = await ctx.adapter.search(requestOf(scope, page));
    if (response.changeToken !== undefined) answersCarryToken = true;
    return response;
  };

  /** Results: at most `count` hits; the GraphQL type is looked up once per run of hits of one entity type. */
  const entries = (hits: readonly SearchHit[], count: number): SearchResultEntry[] => {
    const out: SearchResultEntry[] = [];
    let entityType: string | undefined;
    let type = '';
    for (let i = 0; i < hits.length && i < count; i++) {
      const hit = hits[i]!;
      if (hit.entityType !== entityType) {
        entityType = hit.entityType;
        type = resolver.graphqlType(entityType);
      }
      out.push({ entity: { urn: hit.urn, type } });
    }
    return out;
  };

  return {
    async scroll(actor, input) {
      const who = await ctx.authenticate(actor);
      checkShape(scrollInputSchema, input, 'scrollAcrossEntities');
      const problems: Violation[] = [];
      const afterUrn = input.scrollId ? decodeScrollId(input.scrollId, problems) : undefined;
      const count = input.count ?? DEFAULT_COUNT;
      // One more than asked tells whether a next page exists without an empty last page.
      const page: PageRequest = { order: 'urn', limit: count + 1 };
      if (afterUrn !== undefined) page.afterUrn = afterUrn;
      const result = await run(who, input, 'scrollAcrossEntities', problems, page);
      const searchResults = entries(result.hits, count);
      const more = result.hits.length > count && searchResults.length > 0;
      return {
        nextScrollId: more ? encodeScrollId(searchResults[searchResults.length - 1]!.entity.urn) : null,
        count: searchResults.length,
        total: result.total,
        searchResults,
      };
    },

    async search(actor, input) {
      const who = await ctx.authenticate(actor);
      checkShape(searchInputSchema, input, 'searchAcrossEntities');
      const start = input.start ?? 0;
      const result = await run(who, input, 'searchAcrossEntities', [], {
        order: 'relevance',
        offset: start,
        limit: input.count ?? DEFAULT_COUNT,
      });
      return { start, count: result.hits.length, total: result.total, searchResults: entries(result.hits, result.hits.length) };
    },

    aggregate: (actor, input) => aggregateAcrossEntities(ctx, resolver, properties, actor, input),
  };
}
