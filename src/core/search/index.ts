// The public face of the search domain: what transports, the test kit and the package root use.
export { formatFacetNumber } from './aggregation';
export type { AggregateAcrossEntitiesInput, AggregateAcrossEntitiesResult, AggregationEntry, FacetEntry } from './aggregation';
export type { FacetCondition, FacetFilterInput } from './filters';
export type { SearchFlags, SearchScopeInput } from './input';
export { reindexSearchDocuments } from './reindex';
export type {
  ScrollAcrossEntitiesInput,
  ScrollAcrossEntitiesResult,
  SearchAcrossEntitiesInput,
  SearchAcrossEntitiesResult,
  SearchResultEntry,
  SearchService,
} from './service';
export { searchModule } from './module';
