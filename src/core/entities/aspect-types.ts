/**
 * The built-in aspects as TypeScript types, so that a typo in an aspect's name or a wrong field type
 * fails to compile. A host that registers its own aspects and entity types adds them by declaration
 * merging, and then writes them with the same checks:
 *
 * ```ts
 * declare module 'metacatalog' {
 *   interface AspectMap { ownership: { owners: string[] } }
 *   interface EntityTypeMap { notebook: true }
 *   interface GraphQLEntityTypeMap { NOTEBOOK: true }
 * }
 * ```
 */

export interface AuditStampValue {
  time: number;
  actor: string;
}

/** The fields every `*Info` / `*Properties` aspect shares. */
export interface InfoAspectValue {
  name?: string;
  description?: string;
  customProperties?: Record<string, string>;
  externalUrl?: string;
  qualifiedName?: string;
  created?: AuditStampValue;
  lastModified?: AuditStampValue;
}

export interface StatusValue {
  /** True: soft-deleted. */
  removed: boolean;
}

export interface StructuredPropertiesValue {
  properties: Array<{ propertyUrn: string; values: Array<{ string: string } | { double: number }> }>;
}

/** Aspect name → the type of its value. Extend it for a host's own aspects (see above). */
export interface AspectMap {
  status: StatusValue;
  structuredProperties: StructuredPropertiesValue;
  datasetProperties: InfoAspectValue & { uri?: string; tags?: string[] };
  dataFlowInfo: InfoAspectValue & { name: string; project?: string; /** Environment (`PROD`, `DEV`, ...). */ env?: string };
  dataJobInfo: InfoAspectValue & { name: string; type?: string; flowUrn?: string };
  chartInfo: InfoAspectValue & { title?: string; chartUrl?: string };
  dashboardInfo: InfoAspectValue & { title?: string; dashboardUrl?: string };
  containerProperties: InfoAspectValue & { name: string; /** Environment (`PROD`, `DEV`, ...). */ env?: string };
  glossaryTermInfo: InfoAspectValue & { definition?: string; termSource?: string };
  corpUserInfo: InfoAspectValue & { active?: boolean; displayName?: string; email?: string; title?: string; fullName?: string };
  corpGroupInfo: InfoAspectValue & { displayName?: string; email?: string };
  dataPlatformInfo: InfoAspectValue & { displayName?: string; type?: string };
  /** Owned by their services (write them through `catalog.properties`, `catalog.tokens`, `catalog.policies`). */
  propertyDefinition: Record<string, unknown>;
  /** Where a structured property is shown; checked by `catalog.properties` (hidden means shown nowhere, one asset badge). */
  structuredPropertySettings: {
    isHidden?: boolean;
    showInSearchFilters?: boolean;
    showInAssetSummary?: boolean;
    hideInAssetSummaryWhenEmpty?: boolean;
    showAsAssetBadge?: boolean;
    showInColumnsTable?: boolean;
    lastModified?: { time: number; actor: string };
  };
  ServiceAccessTokenInfo: Record<string, unknown>;
  policyInfo: Record<string, unknown>;
  /** A service account's record, written only by `catalog.serviceAccounts`. */
  serviceAccountInfo: Record<string, unknown>;
  /** A background task's request and progress, written only by the catalog (`catalog.properties.applyToMatches`). */
  dataHubExecutionRequestInput: Record<string, unknown>;
  dataHubExecutionRequestResult: Record<string, unknown>;
  /** Timeseries aspects: rows appended with `catalog.timeseries.append`; a read answers the newest row. */
  datasetProfile: TimeseriesRowValue;
  datasetUsageStatistics: TimeseriesRowValue;
  operation: TimeseriesRowValue;
  chartUsageStatistics: TimeseriesRowValue;
  dashboardUsageStatistics: TimeseriesRowValue;
}

export interface TimeseriesRowValue {
  timestampMillis: number;
  [field: string]: unknown;
}

export type AspectName = keyof AspectMap & string;

/** Aspects of one write: each known aspect with its own type. */
export type AspectValues = { [K in AspectName]?: AspectMap[K] };

/** Entity type names (`urn:li:<name>:...`). Extend it for a host's own entity types. */
export interface EntityTypeMap {
  dataset: true;
  dataFlow: true;
  dataJob: true;
  chart: true;
  dashboard: true;
  container: true;
  schemaField: true;
  glossaryTerm: true;
  corpuser: true;
  corpGroup: true;
  dataPlatform: true;
  structuredProperty: true;
}

export type EntityTypeName = keyof EntityTypeMap & string;

/** An entity type as inputs take it: its name or its entity-type URN. */
export type EntityTypeInput = EntityTypeName | `urn:li:entityType:datahub.${EntityTypeName}`;

/** GraphQL `EntityType` names. Extend it beside `EntityTypeMap`. */
export interface GraphQLEntityTypeMap {
  DATASET: true;
  DATA_FLOW: true;
  DATA_JOB: true;
  CHART: true;
  DASHBOARD: true;
  CONTAINER: true;
  SCHEMA_FIELD: true;
  GLOSSARY_TERM: true;
  CORP_USER: true;
  CORP_GROUP: true;
  DATA_PLATFORM: true;
  STRUCTURED_PROPERTY: true;
}

export type GraphQLEntityTypeName = keyof GraphQLEntityTypeMap & string;
