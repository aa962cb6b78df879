import type { SearchHit, SearchRequest } from '../adapter/types';
import { aggregateAcrossEntities, type AggregateAcrossEntitiesInput, type AggregateAcrossEntitiesResult } from './aggregation';
import type { CatalogContext } from './context';
import { CatalogError, throwIfViolations, type Violation } from './errors';
import { checkSchema } from './property-definition-shapes';
import { scrollInputSchema, searchInputSchema } from './schemas/search';
import { SearchInputResolver, type SearchScopeInput } from './search-input';
import type { StructuredPropertyService } from './structured-properties';

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
  scroll(actor: string, input: ScrollAcrossEntitiesInput): Promise<ScrollAcrossEntitiesResult>;
  /** Best full-text matches first (URN order without a query), paged by offset. */
  search(actor: string, input: SearchAcrossEntitiesInput): Promise<SearchAcrossEntitiesResult>;
  /** Counts per value of each facet over the matching entities. */
  aggregate(actor: string, input: AggregateAcrossEntitiesInput): Promise<AggregateAcrossEntitiesResult>;
}

const DEFAULT_COUNT = 10;
const CURSOR_VERSION = 1;

/** The scroll id: the last URN returned, so the next page starts right after it whatever was written meanwhile. */
export function encodeScrollId(afterUrn: string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: afterUrn }), 'utf8').toString('base64url');
}

export function decodeScrollId(scrollId: string, violations: Violation[]): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(scrollId, 'base64url').toString('utf8')) as { v?: unknown; after?: unknown };
    if (parsed && parsed.v === CURSOR_VERSION && typeof parsed.after === 'string') return parsed.after;
  } catch {
    // Reported below.
  }
  violations.push({ path: '/scrollId', message: 'is not a scroll id returned by scrollAcrossEntities' });
  return undefined;
}

function checkShape(schema: Parameters<typeof checkSchema>[0], input: unknown, operation: string): void {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new CatalogError('INVALID_INPUT', `${operation}: the input must be an object`, { details: [{ path: '/', message: 'must be an object' }] });
  }
  throwIfViolations(checkSchema(schema, input), `invalid ${operation} input`);
}

export function createSearchService(ctx: CatalogContext, properties: StructuredPropertyService): SearchService {
  const resolver = new SearchInputResolver(ctx, properties);
  /** Hits as results; the GraphQL type is looked up once per run of hits of one entity type. */
  const entries = (hits: readonly SearchHit[]): SearchResultEntry[] => {
    const out: SearchResultEntry[] = [];
    let entityType: string | undefined;
    let type = '';
    for (let i = 0; i < hits.length; i++) {
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
      const violations: Violation[] = [];
      const scope = await resolver.scope(who, input, violations);
      const afterUrn = input.scrollId ? decodeScrollId(input.scrollId, violations) : undefined;
      throwIfViolations(violations, 'invalid scrollAcrossEntities input');
      const count = input.count ?? DEFAULT_COUNT;
      // One more than asked tells whether a next page exists without an empty last page.
      const request: SearchRequest = { ...scope, order: 'urn', limit: count + 1 };
      if (afterUrn !== undefined) request.afterUrn = afterUrn;
      const result = await ctx.adapter.search(request);
      const hits = result.hits.slice(0, count);
      const more = result.hits.length > count && hits.length > 0;
      return {
        nextScrollId: more ? encodeScrollId(hits[hits.length - 1]!.urn) : null,
        count: hits.length,
        total: result.total,
        searchResults: entries(hits),
      };
    },

    async search(actor, input) {
      const who = await ctx.authenticate(actor);
      checkShape(searchInputSchema, input, 'searchAcrossEntities');
      const violations: Violation[] = [];
      const scope = await resolver.scope(who, input, violations);
      throwIfViolations(violations, 'invalid searchAcrossEntities input');
      const start = input.start ?? 0;
      const result = await ctx.adapter.search({ ...scope, order: 'relevance', offset: start, limit: input.count ?? DEFAULT_COUNT });
      return { start, count: result.hits.length, total: result.total, searchResults: entries(result.hits) };
    },

    aggregate: (actor, input) => aggregateAcrossEntities(ctx, resolver, properties, actor, input),
  };
}
