export { createCatalog, createCatalogContext } from './catalog';
export type { Catalog, CatalogOptions } from './catalog';
export { CatalogError, ERROR_CODES, isCatalogError, invalidInput } from './core/errors';
export type { CatalogErrorCode, CatalogErrorOptions, Violation } from './core/errors';
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
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, isPrivilege } from './core/privileges';
export type { Privilege } from './core/privileges';
export type { StaticPolicy, StoredPolicy } from './core/authorization';
export { EntityRegistry } from './core/entity-registry';
export type { AspectSpec, EntityTypeSpec, SearchFieldSpec } from './core/entity-registry';
export type { EntityService, EntityView, AspectView, EntityUpsert } from './core/entities';
export type { JobRunnerOptions, SettleReport } from './core/jobs';
export { FILTER_OPERATORS } from './adapter/types';
export type * from './adapter/types';
export type { StructuredPropertyService } from './core/structured-properties';
export type * from './core/property-types';
export {
  VALUE_TYPE_NAMES,
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
} from './core/property-types';
export { definitionKey, definitionKeyOf, incarnationOf } from './core/definition-key';
export {
  toGraphqlInput,
  toRestInput,
  toYamlEntry,
  toReadBack,
  parseYamlDefinitions,
} from './core/property-definition-shapes';
export { CLEANUP_JOB_TYPE, SYSTEM_ACTOR } from './core/property-cleanup';
export type { FacetFilterInput, FacetCondition } from './core/filters';
export type {
  SearchService,
  ScrollAcrossEntitiesInput,
  ScrollAcrossEntitiesResult,
  SearchAcrossEntitiesInput,
  SearchAcrossEntitiesResult,
  SearchResultEntry,
} from './core/search';
export type { SearchFlags, SearchScopeInput } from './core/search-input';
export type { AggregateAcrossEntitiesInput, AggregateAcrossEntitiesResult, AggregationEntry, FacetEntry } from './core/aggregation';
export { formatFacetNumber } from './core/aggregation';
export { analyzeText, parseTextQuery, tokenize, STOP_WORDS } from './adapter/text-analysis';
export type { TextQueryTerm } from './adapter/text-analysis';
export { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_DURATION_MS, ACCESS_TOKEN_TYPES } from './core/token-model';
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
} from './core/token-model';
export type { Policies, PolicyList, PolicyState, PolicyActorsInput, CreatePolicyInput, UpdatePolicyInput } from './core/policies';
export { timeseriesIndexName } from './core/timeseries-input';
export type { TruncationMethod } from './core/timeseries-input';
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
export type { TruncationStatus, TruncationState, TruncationProgressListener } from './core/timeseries-truncation';
