import type { Actor } from '../core/access';
import type { Catalog } from '../catalog';
import type { AggregateAcrossEntitiesInput, AggregationEntry, FacetEntry } from '../core/search';
import type { ScrollAcrossEntitiesInput, SearchAcrossEntitiesInput, SearchResultEntry } from '../core/search';
import type { SearchScopeInput } from '../core/search';
import { refOf, refOfView, type EntityRef } from './entity-refs';
import { entityTypeOf } from '../core/urn';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

/** GraphQL `SearchFlags`: the catalog's, and `skipAggregates`, which only says whether to compute `facets` here. */
type GraphQLSearchScope = SearchScopeInput & {
  searchFlags?: (SearchScopeInput['searchFlags'] & { skipAggregates?: boolean | null }) | null;
};

/** The parent of `ScrollResults` / `SearchResults` fields: the page, and what `facets` needs to be computed. */
interface SearchPage {
  searchResults: Array<{ entity: EntityRef; matchedFields: [] }>;
  facetScope: { actor: Actor; scope: GraphQLSearchScope };
}

/** What `aggregate` takes of a scroll or search input: the scope without paging. */
function scopeOf({ types, query, orFilters, filters, searchFlags }: GraphQLSearchScope): GraphQLSearchScope {
  return { types, query, orFilters, filters, searchFlags };
}

/**
 * Search and aggregation: each operation is one call of `catalog.search`. Results carry entity
 * references only; the fields a client selects on them load in batches (the request's loader).
 */
export function searchResolvers(
  catalog: Catalog,
  stateOf: (context: unknown) => RequestState,
): Record<string, Record<string, ResolverFunction>> {
  const page =
    <I extends GraphQLSearchScope, R extends { searchResults: SearchResultEntry[] }>(
      run: (actor: Actor, input: I) => Promise<R>,
    ): ResolverFunction =>
    async (_parent: unknown, args: { input: I }, context: unknown): Promise<Omit<R, 'searchResults'> & SearchPage> => {
      const { actor } = stateOf(context);
      const result = await run(actor, args.input);
      return {
        ...result,
        searchResults: result.searchResults.map((r) => ({ entity: refOf(r.entity.urn), matchedFields: [] })),
        facetScope: { actor, scope: scopeOf(args.input) },
      };
    };
  const storedEntity = async (urn: string | undefined, context: unknown): Promise<EntityRef | null> => {
    if (urn === undefined || !catalog.registry.hasEntityType(entityTypeOf(urn))) return null;
    const view = await stateOf(context).entities.load(urn);
    return view ? refOfView(view) : null;
  };
  // Facets of a page are computed only when selected, by the aggregation over the same scope.
  const facets = async ({ facetScope: { actor, scope } }: SearchPage) =>
    scope.searchFlags?.skipAggregates ? null : (await catalog.search.aggregate(actor, scope)).facets;

  return {
    Query: {
      scrollAcrossEntities: page((actor, input: ScrollAcrossEntitiesInput) => catalog.search.scroll(actor, input)),
      searchAcrossEntities: page((actor, input: SearchAcrossEntitiesInput) => catalog.search.search(actor, input)),
      aggregateAcrossEntities: (_parent: unknown, args: { input: AggregateAcrossEntitiesInput }, context: unknown) =>
        catalog.search.aggregate(stateOf(context).actor, args.input),
    },
    ScrollResults: { facets },
    SearchResults: { facets },
    // The entity behind a facet or a facet value, when it is stored (one batched read per level).
    FacetMetadata: { entity: (facet: FacetEntry, _args: unknown, context: unknown) => storedEntity(facet.entity, context) },
    AggregationMetadata: { entity: (entry: AggregationEntry, _args: unknown, context: unknown) => storedEntity(entry.entity, context) },
  };
}
