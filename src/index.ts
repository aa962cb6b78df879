// `metacatalog`: the public API, by explicit name. Heavy modules (better-sqlite3, lunr, graphql) stay behind their own entry points.
export { createCatalog } from './catalog';
export type { Catalog, CatalogHealth, CatalogOptions } from './catalog';
export { CatalogError, ERROR_CODES, isCatalogError, invalidInput } from './errors';
export type { CatalogErrorCode, CatalogErrorOptions, Violation } from './errors';
export { parseUrn, formatUrn, isUrn, urnProblem, entityTypeOf, urnKey, encodeUrnForPath, decodeUrnFromPath } from './core/urn';
export type { ParsedUrn } from './core/urn';

// Access: privileges and policies.
export { PRIVILEGES, PRIVILEGE_DESCRIPTIONS, READ_ONLY, isPrivilege } from './core/access';
export type {
  Access,
  AccessExplanation,
  Actor,
  CreatePolicyInput,
  CriterionCondition,
  ExplainAccessInput,
  GrantedPrivilegesInput,
  ListPoliciesInput,
  Policies,
  PolicyActorsInput,
  PolicyCriterion,
  PolicyList,
  PolicyResources,
  PolicyState,
  PolicyType,
  Privilege,
  ScopedActor,
  ServiceAccount,
  StaticPolicy,
  StoredPolicy,
  UpdatePolicyInput,
} from './core/access';
export type { CreateServiceAccountInput, ServiceAccounts } from './core/tokens';

// Entities and the registry of entity types and aspects.
export { DEFAULT_SCROLL_COUNT } from './core/entities';
export type {
  AspectMap,
  AspectName,
  AspectSpec,
  AspectValues,
  AspectView,
  AuditStampValue,
  EntityTypeInput,
  EntityTypeMap,
  EntityTypeName,
  GraphQLEntityTypeMap,
  GraphQLEntityTypeName,
  InfoAspectValue,
  StatusValue,
  StructuredPropertiesValue,
  TimeseriesRowValue,
  AspectWriteOptions,
  EntityDeletion,
  EntityReadOptions,
  EntityRegistry,
  EntityScrollPage,
  EntityService,
  EntityTypeSpec,
  EntityUpsert,
  EntityView,
  SearchFieldSpec,
  ArrayPrimaryKeys,
  ChangeProposal,
  ChangeType,
  JsonPatchOperation,
  ProposalOutcome,
} from './core/entities';
export type { JobRunnerOptions, SettleReport } from './core/jobs';

// Structured properties.
export {
  VALUE_TYPE_NAMES,
  DATA_TYPE_URN_PREFIX,
  ENTITY_TYPE_URN_PREFIX,
  toGraphqlInput,
  toRestInput,
  toYamlEntry,
  toReadBack,
  parseYamlDefinitions,
} from './core/properties';
export type {
  AllowedValue,
  CreateStructuredPropertyInput,
  DefinitionChangePreview,
  DefinitionUpsertResult,
  EditValuesOptions,
  EditValuesSummary,
  GraphqlAllowedValueInput,
  GraphqlPropertyAssignmentInput,
  GraphqlPropertyValueInput,
  HardDeleteResult,
  PropertyAssignment,
  PropertyCardinality,
  PropertyPatchOperation,
  PropertyPatchRequest,
  PropertyReadBack,
  PreviewChangeInput,
  PropertyValue,
  PropertyValueEdit,
  PropertyValueEditing,
  PropertyValuesEdit,
  ReindexOptions,
  ReindexProgress,
  ResolvedPropertyField,
  RestPropertyDefinitionInput,
  StructuredPropertyDefinition,
  StructuredPropertySettings,
  StructuredPropertySettingsInput,
  StructuredPropertyView,
  UpdateStructuredPropertyInput,
  ValueTypeInput,
  ValueTypeName,
  CreatePropertyDefinitionInput,
  PropertyDefinitionInput,
  YamlPropertyEntry,
} from './core/properties';

// Stewardship: applying values to every match of a search.
export type {
  ApplyJob,
  ApplyOptions,
  ApplyPreview,
  ApplySample,
  ApplyState,
  ApplyStatus,
  ApplyToMatchesInput,
  ApplyToMatchesService,
  ApplyViolation,
  CancelApplyResult,
  StructuredPropertyService,
} from './core/stewardship';

// Search and aggregation.
export { formatFacetNumber } from './core/search';
export type {
  AggregateAcrossEntitiesInput,
  AggregateAcrossEntitiesResult,
  AggregationEntry,
  FacetCondition,
  FacetEntry,
  FacetFilterInput,
  ScrollAcrossEntitiesInput,
  ScrollAcrossEntitiesResult,
  SearchAcrossEntitiesInput,
  SearchAcrossEntitiesResult,
  SearchFlags,
  SearchResultEntry,
  SearchScopeInput,
  SearchService,
} from './core/search';

// Access tokens.
export { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_DURATION_MS, ACCESS_TOKEN_TYPES } from './core/tokens';
export type {
  AccessTokenDuration,
  AccessTokenList,
  AccessTokenMetadata,
  AccessTokens,
  AccessTokenType,
  BootstrapTokenInput,
  CreateAccessTokenInput,
  CreatedAccessToken,
  EnsureBootstrapTokenInput,
  JsonWebKeySet,
  ListAccessTokensInput,
  PublicJwk,
  ReadRevocationsInput,
  RevokedToken,
  TokenOptions,
  TokenRevocationPage,
  TokenSigningAlgorithm,
  TokenSigningJwk,
  TokenSigningKeyInput,
  TokenSigningOptions,
  VerifiedAccessToken,
} from './core/tokens';

// Timeseries.
export { timeseriesIndexName } from './core/timeseries';
export type {
  TimeseriesAppendResult,
  TimeseriesBulkAppendResult,
  TimeseriesEntry,
  TimeseriesIndexSizeRecord,
  TimeseriesQueryInput,
  TimeseriesQueryResult,
  TimeseriesRecord,
  TruncateInput,
  TruncateOptions,
  TruncateResult,
  TruncationMethod,
  TruncationProgressListener,
  TruncationState,
  TruncationStatus,
} from './core/timeseries';

// Moving a catalog: export records and importing them back.
export type { ExportCounts, ExportExtra, ExportOptions, ExportRecord, ImportOptions } from './core/transfer';

// For adapter authors: the storage/search contract in its parts, the composer that builds an adapter
// from an entity store and the parts it lacks, and the text analysis full text must match.
export { FILTER_OPERATORS } from './adapter/types';
export { composeAdapter } from './adapter/compose-adapter';
export type { AdapterParts, CommittedPart } from './adapter/compose-adapter';
export { createScanSearchIndex } from './adapter/scan-search-index';
export type { ScanSearchIndexOptions } from './adapter/scan-search-index';
export type {
  AdapterCapabilities,
  AggregateRequest,
  AspectPut,
  AuditStamp,
  AspectVersionPut,
  ChangeEvent,
  ChangeLog,
  ChangePage,
  ChangeQuery,
  ClaimRequest,
  EntityScanRequest,
  EntityStore,
  EntityStoreCapabilities,
  EntityWrite,
  FacetBucket,
  FacetResult,
  InitialLoad,
  FaultInjectionOptions,
  FilterOperator,
  Job,
  JobQueue,
  JsonObject,
  JsonPrimitive,
  JsonValue,
  NewChangeEvent,
  NewJob,
  PropertyValueIndex,
  SearchCondition,
  SearchDocument,
  SearchDocumentProperty,
  SearchField,
  SearchFilter,
  SearchHit,
  SearchIndex,
  SearchRequest,
  SearchResponse,
  SearchScope,
  SeveralValuesRequest,
  SeveralValuesResponse,
  StorageAdapter,
  StoredAspect,
  StoredEntity,
  TimeseriesIndexRef,
  TimeseriesIndexSize,
  TimeseriesPage,
  TimeseriesQuery,
  TimeseriesRow,
  TimeseriesStore,
  WriteBatch,
} from './adapter/types';
export { analyzeText, parseTextQuery } from './adapter/text-analysis';
export type { TextQueryTerm } from './adapter/text-analysis';
