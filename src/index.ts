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
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, isPrivilege } from './core/access/privileges';
export type { Privilege } from './core/access/privileges';
export type { StaticPolicy, StoredPolicy } from './core/access/authorization';
export { EntityRegistry } from './core/entities/registry';
export type { AspectSpec, EntityTypeSpec, SearchFieldSpec } from './core/entities/registry';
export type { EntityService, EntityView, AspectView, EntityUpsert, EntityDeletion } from './core/entities/service';
export type { JobRunnerOptions, SettleReport } from './core/jobs/runner';
export { FILTER_OPERATORS } from './adapter/types';
export type * from './adapter/types';
export type { StructuredPropertyService } from './core/properties/service';
export type * from './core/properties/types';
export {
  VALUE_TYPE_NAMES,
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
} from './core/properties/types';
export { definitionKey, definitionKeyOf, incarnationOf } from './core/properties/definition-key';
export {
  toGraphqlInput,
  toRestInput,
  toYamlEntry,
  toReadBack,
  parseYamlDefinitions,
} from './core/properties/definition-shapes';
export { CLEANUP_JOB_TYPE, SYSTEM_ACTOR } from './core/properties/cleanup';
export type { FacetFilterInput, FacetCondition } from './core/search/filters';
export type {
  SearchService,
  ScrollAcrossEntitiesInput,
  ScrollAcrossEntitiesResult,
  SearchAcrossEntitiesInput,
  SearchAcrossEntitiesResult,
  SearchResultEntry,
} from './core/search/service';
export type { SearchFlags, SearchScopeInput } from './core/search/input';
export type { AggregateAcrossEntitiesInput, AggregateAcrossEntitiesResult, AggregationEntry, FacetEntry } from './core/search/aggregation';
export { formatFacetNumber } from './core/search/aggregation';
export { analyzeText, parseTextQuery, tokenize, STOP_WORDS } from './adapter/text-analysis';
export type { TextQueryTerm } from './adapter/text-analysis';
export { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_DURATION_MS, ACCESS_TOKEN_TYPES } from './core/tokens/model';
export type {
  AccessTokens,
  AccessTokenDuration,
  AccessTokenList,
  AccessTokenMetadata,
  AccessTokenType,
  BootstrapTokenInput,
  CreateAccessTokenInput,
  CreatedAccessToken,
  ListAccessTokensInput,
  TokenOptions,
  VerifiedAccessToken,
} from './core/tokens/model';
export type { Policies, PolicyList, PolicyState, PolicyActorsInput, CreatePolicyInput, UpdatePolicyInput } from './core/access/policies';
export { timeseriesIndexName } from './core/timeseries/input';
export type { TruncationMethod } from './core/timeseries/input';
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
} from './core/timeseries/service';
export type { TruncationStatus, TruncationState, TruncationProgressListener } from './core/timeseries/truncation';
