export { createCatalog, createCatalogContext } from './catalog';
export type { Catalog, CatalogOptions } from './catalog';
export { CatalogError, ERROR_CODES, isCatalogError, invalidInput } from './errors';
export type { CatalogErrorCode, CatalogErrorOptions, Violation } from './errors';
export {
  parseUrn,
  formatUrn,
  isUrn,
  urnProblem,
  entityTypeOf,
  urnKey,
  encodeUrnForPath,
  decodeUrnFromPath,
} from './core/urn';
export type { ParsedUrn } from './core/urn';
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, isPrivilege } from './core/access';
export type { Privilege } from './core/access';
export type { StaticPolicy, StoredPolicy } from './core/access';
export { EntityRegistry } from './core/entities';
export type { AspectSpec, EntityTypeSpec, SearchFieldSpec } from './core/entities';
export type { EntityService, EntityView, AspectView, EntityUpsert, EntityDeletion, EntityScrollPage } from './core/entities';
export { DEFAULT_SCROLL_COUNT } from './core/entities';
export type { JobRunnerOptions, SettleReport } from './core/jobs';
export { FILTER_OPERATORS } from './adapter/types';
export type * from './adapter/types';
export type { StructuredPropertyService } from './core/properties';
export type * from './core/properties';
export {
  VALUE_TYPE_NAMES,
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
} from './core/properties';
export { definitionKey, definitionKeyOf, incarnationOf } from './core/properties';
export {
  toGraphqlInput,
  toRestInput,
  toYamlEntry,
  toReadBack,
  parseYamlDefinitions,
} from './core/properties';
export { CLEANUP_JOB_TYPE, SYSTEM_ACTOR } from './core/properties';
export type { FacetFilterInput, FacetCondition } from './core/search';
export type {
  SearchService,
  ScrollAcrossEntitiesInput,
  ScrollAcrossEntitiesResult,
  SearchAcrossEntitiesInput,
  SearchAcrossEntitiesResult,
  SearchResultEntry,
} from './core/search';
export type { SearchFlags, SearchScopeInput } from './core/search';
export type { AggregateAcrossEntitiesInput, AggregateAcrossEntitiesResult, AggregationEntry, FacetEntry } from './core/search';
export { formatFacetNumber } from './core/search';
export { analyzeText, parseTextQuery, tokenize, STOP_WORDS } from './adapter/text-analysis';
export type { TextQueryTerm } from './adapter/text-analysis';
export { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_DURATION_MS, ACCESS_TOKEN_TYPES } from './core/tokens';
export type {
  AccessTokens,
  AccessTokenDuration,
  AccessTokenList,
  AccessTokenMetadata,
  AccessTokenType,
  BootstrapTokenInput,
  EnsureBootstrapTokenInput,
  CreateAccessTokenInput,
  CreatedAccessToken,
  ListAccessTokensInput,
  TokenOptions,
  VerifiedAccessToken,
} from './core/tokens';
export type { Policies, PolicyList, PolicyState, PolicyActorsInput, CreatePolicyInput, UpdatePolicyInput } from './core/access';
export { timeseriesIndexName } from './core/timeseries';
export type { TruncationMethod } from './core/timeseries';
export type {
  TimeseriesService,
  TimeseriesRecord,
  TimeseriesAppendResult,
  TimeseriesEntry,
  TimeseriesBulkAppendResult,
  TimeseriesQueryInput,
  TimeseriesQueryResult,
  TimeseriesIndexSizeRecord,
  TruncateInput,
  TruncateResult,
  TruncateOptions,
} from './core/timeseries';
export type { TruncationStatus, TruncationState, TruncationProgressListener } from './core/timeseries';
