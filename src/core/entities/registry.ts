import type { JsonObject } from '../../adapter/types';
import { CatalogError, type Violation } from '../../errors';
import * as schemas from '../validation/schemas/aspects';
import { checkSchema, compileSchema, passesSchema } from '../validation';
import type { ParsedUrn } from '../urn';

/** An aspect the catalog knows: its JSON schema (compiled once, on first use) and its kind. */
export interface AspectSpec {
  name: string;
  schema: JsonObject;
  /** Timeseries aspects are appended as rows, never overwritten. */
  timeseries?: boolean;
}

/** A field of the search document, filterable and usable as a facet under its `name`. */
export interface SearchFieldSpec {
  name: string;
  /** Read from this aspect at this path (a string, or an array of strings). */
  aspect?: string;
  path?: readonly string[];
  /** Or read from this aspect's value by a function (when the value is not a string or a list of strings). */
  read?: (value: JsonObject) => string[];
  /** Or derived from the URN. */
  fromUrn?: (urn: ParsedUrn) => string | undefined;
  /**
   * A true/false field: its value is `true` or nothing, and nothing means false. Filters take `true`
   * and `false` (EQUAL, IN, IEQUAL, EXISTS); a facet counts both.
   */
  boolean?: boolean;
}

export interface EntityTypeSpec {
  /** Entity name as in URNs, e.g. `dataset`. */
  name: string;
  /** GraphQL `EntityType` enum name, e.g. `DATASET`. */
  graphqlType: string;
  /** Aspects (versioned or timeseries) an entity of this type may carry. */
  aspects: readonly string[];
  /** Aspect whose `name` and `description` feed full-text search. */
  textAspect?: string;
  searchFields?: readonly SearchFieldSpec[];
  /** False for entities reached only through their own API (access tokens, policies): no search document. Default true. */
  searchable?: boolean;
}

const COMMON_ASPECTS = ['status', 'structuredProperties'] as const;

function platformFromTuple(urn: ParsedUrn): string | undefined {
  const first = urn.parts[0];
  if (first === undefined || first === urn.key) return undefined;
  return first.startsWith('urn:') ? first : `urn:li:dataPlatform:${first}`;
}

const platformField: SearchFieldSpec = { name: 'platform', fromUrn: platformFromTuple };
const nameField = (aspect: string): SearchFieldSpec => ({ name: 'name', aspect, path: ['name'] });
const pathField = (name: string, aspect: string, path: string = name): SearchFieldSpec => ({ name, aspect, path: [path] });

/** `customProperties` as the established platform indexes the map: one `key=value` string per entry. */
function keyValues(value: JsonObject): string[] {
  const map = value.customProperties;
  if (map === undefined || map === null || typeof map !== 'object' || Array.isArray(map)) return NO_STRINGS;
  return Object.entries(map).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
}

/** `true` when the aspect has a non-empty description (the established platform's `hasDescription`). */
function hasDescription(value: JsonObject): string[] {
  return typeof value.description === 'string' && value.description !== '' ? ONLY_TRUE : NO_STRINGS;
}

/**
 * What the built-in `read` functions answer for nothing and for `true`: shared, as the search document
 * never keeps the array a `read` returns (it copies the values it keeps).
 */
const NO_STRINGS = Object.freeze([]) as unknown as string[];
const ONLY_TRUE = Object.freeze(['true']) as unknown as string[];

/**
 * The fields every info aspect of this kind is filtered by: whether it has a description, its custom
 * properties. The description itself is matched by the full-text query, not kept as an exact value: as a
 * filter value it would store every description twice more (about 300 bytes per dataset, a fifth of
 * the SQLite file) for a filter the platform's clients do not send (docs/search.md).
 */
const describedFields = (aspect: string, withHasDescription = true): SearchFieldSpec[] => [
  ...(withHasDescription ? [{ name: 'hasDescription', aspect, read: hasDescription, boolean: true }] : []),
  { name: 'customProperties', aspect, read: keyValues },
];

const BUILT_IN_ENTITY_TYPES: readonly EntityTypeSpec[] = [
  {
    name: 'dataset',
    graphqlType: 'DATASET',
    aspects: [...COMMON_ASPECTS, 'datasetProperties', 'datasetProfile', 'datasetUsageStatistics', 'operation'],
    textAspect: 'datasetProperties',
    searchFields: [
      platformField,
      nameField('datasetProperties'),
      { name: 'origin', fromUrn: (u) => (u.parts.length === 3 ? u.parts[2] : undefined) },
      { name: 'id', fromUrn: (u) => (u.parts.length === 3 ? u.parts[1] : undefined) },
      pathField('qualifiedName', 'datasetProperties'),
      ...describedFields('datasetProperties'),
    ],
  },
  {
    name: 'dataFlow',
    graphqlType: 'DATA_FLOW',
    aspects: [...COMMON_ASPECTS, 'dataFlowInfo'],
    textAspect: 'dataFlowInfo',
    searchFields: [
      platformField,
      nameField('dataFlowInfo'),
      pathField('project', 'dataFlowInfo'),
      pathField('env', 'dataFlowInfo'),
      ...describedFields('dataFlowInfo'),
    ],
  },
  {
    name: 'dataJob',
    graphqlType: 'DATA_JOB',
    aspects: [...COMMON_ASPECTS, 'dataJobInfo', 'operation'],
    textAspect: 'dataJobInfo',
    searchFields: [nameField('dataJobInfo'), ...describedFields('dataJobInfo')],
  },
  {
    name: 'chart',
    graphqlType: 'CHART',
    aspects: [...COMMON_ASPECTS, 'chartInfo', 'chartUsageStatistics'],
    textAspect: 'chartInfo',
    searchFields: [platformField, nameField('chartInfo'), pathField('title', 'chartInfo'), ...describedFields('chartInfo', false)],
  },
  {
    name: 'dashboard',
    graphqlType: 'DASHBOARD',
    aspects: [...COMMON_ASPECTS, 'dashboardInfo', 'dashboardUsageStatistics'],
    textAspect: 'dashboardInfo',
    searchFields: [
      platformField,
      nameField('dashboardInfo'),
      pathField('title', 'dashboardInfo'),
      ...describedFields('dashboardInfo', false),
    ],
  },
  {
    name: 'container',
    graphqlType: 'CONTAINER',
    aspects: [...COMMON_ASPECTS, 'containerProperties'],
    textAspect: 'containerProperties',
    searchFields: [
      nameField('containerProperties'),
      pathField('qualifiedName', 'containerProperties'),
      pathField('env', 'containerProperties'),
      ...describedFields('containerProperties'),
    ],
  },
  { name: 'schemaField', graphqlType: 'SCHEMA_FIELD', aspects: [...COMMON_ASPECTS] },
  {
    name: 'glossaryTerm',
    graphqlType: 'GLOSSARY_TERM',
    aspects: [...COMMON_ASPECTS, 'glossaryTermInfo'],
    textAspect: 'glossaryTermInfo',
    searchFields: [nameField('glossaryTermInfo')],
  },
  {
    name: 'corpuser',
    graphqlType: 'CORP_USER',
    // serviceAccountInfo: a service account's record (written only by catalog.serviceAccounts).
    aspects: [...COMMON_ASPECTS, 'corpUserInfo', 'serviceAccountInfo'],
    textAspect: 'corpUserInfo',
    searchFields: [nameField('corpUserInfo')],
  },
  {
    name: 'corpGroup',
    graphqlType: 'CORP_GROUP',
    aspects: [...COMMON_ASPECTS, 'corpGroupInfo'],
    textAspect: 'corpGroupInfo',
    searchFields: [nameField('corpGroupInfo')],
  },
  {
    name: 'dataPlatform',
    graphqlType: 'DATA_PLATFORM',
    aspects: [...COMMON_ASPECTS, 'dataPlatformInfo'],
    textAspect: 'dataPlatformInfo',
    searchFields: [nameField('dataPlatformInfo')],
  },
  {
    name: 'structuredProperty',
    graphqlType: 'STRUCTURED_PROPERTY',
    aspects: ['propertyDefinition', 'status', 'structuredPropertySettings'],
    // DataHub indexes every settings flag (its web app filters the property list on them).
    searchFields: ['isHidden', 'showInSearchFilters', 'showInAssetSummary', 'showAsAssetBadge', 'showInColumnsTable'].map((flag) => ({
      name: flag,
      aspect: 'structuredPropertySettings',
      path: [flag],
      boolean: true,
    })),
  },
  { name: 'accessToken', graphqlType: 'ACCESS_TOKEN', aspects: ['ServiceAccessTokenInfo'], searchable: false },
  { name: 'policy', graphqlType: 'POLICY', aspects: ['policyInfo'], searchable: false },
  // A background task's request and progress (applying structured properties to every match of a search).
  {
    name: 'dataHubExecutionRequest',
    graphqlType: 'EXECUTION_REQUEST',
    aspects: ['dataHubExecutionRequestInput', 'dataHubExecutionRequestResult'],
    searchable: false,
  },
];

export const BUILT_IN_ASPECTS: readonly AspectSpec[] = [
  { name: 'status', schema: schemas.statusSchema },
  { name: 'structuredProperties', schema: schemas.structuredPropertiesSchema },
  { name: 'datasetProperties', schema: schemas.datasetPropertiesSchema },
  { name: 'dataFlowInfo', schema: schemas.dataFlowInfoSchema },
  { name: 'dataJobInfo', schema: schemas.dataJobInfoSchema },
  { name: 'chartInfo', schema: schemas.chartInfoSchema },
  { name: 'dashboardInfo', schema: schemas.dashboardInfoSchema },
  { name: 'containerProperties', schema: schemas.containerPropertiesSchema },
  { name: 'glossaryTermInfo', schema: schemas.glossaryTermInfoSchema },
  { name: 'corpUserInfo', schema: schemas.corpUserInfoSchema },
  { name: 'corpGroupInfo', schema: schemas.corpGroupInfoSchema },
  { name: 'dataPlatformInfo', schema: schemas.dataPlatformInfoSchema },
  // Owned by domain services that validate them with their own schemas.
  { name: 'propertyDefinition', schema: schemas.domainValidatedSchema },
  { name: 'structuredPropertySettings', schema: schemas.structuredPropertySettingsSchema },
  { name: 'ServiceAccessTokenInfo', schema: schemas.domainValidatedSchema },
  { name: 'policyInfo', schema: schemas.domainValidatedSchema },
  { name: 'serviceAccountInfo', schema: schemas.domainValidatedSchema },
  { name: 'dataHubExecutionRequestInput', schema: schemas.domainValidatedSchema },
  { name: 'dataHubExecutionRequestResult', schema: schemas.domainValidatedSchema },
  { name: 'datasetProfile', schema: schemas.datasetProfileSchema, timeseries: true },
  { name: 'datasetUsageStatistics', schema: schemas.datasetUsageStatisticsSchema, timeseries: true },
  { name: 'operation', schema: schemas.operationSchema, timeseries: true },
  { name: 'chartUsageStatistics', schema: schemas.chartUsageStatisticsSchema, timeseries: true },
  { name: 'dashboardUsageStatistics', schema: schemas.dashboardUsageStatisticsSchema, timeseries: true },
];

const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
const ENTITY_TYPE_URN_PREFIX = 'urn:li:entityType:datahub.';

/**
 * The entity types and aspects a catalog knows. Built-ins are registered at construction; a host
 * application adds its own with `registerAspect` and `registerEntityType`.
 */
export class EntityRegistry {
  private readonly entityTypes = new Map<string, EntityTypeSpec>();
  private readonly aspects = new Map<string, AspectSpec>();

  constructor() {
    // The built-in schemas ship with the library and compile on their first check (every one is compiled
    // by test/core/validation/validation.test.ts): a catalog that never writes an aspect never compiles its schema.
    for (const aspect of BUILT_IN_ASPECTS) this.aspects.set(aspect.name, { ...aspect });
    for (const entityType of BUILT_IN_ENTITY_TYPES) this.registerEntityType(entityType);
  }

  registerAspect(spec: AspectSpec): void {
    if (!NAME_PATTERN.test(spec.name)) {
      throw new CatalogError('INVALID_INPUT', `aspect name "${spec.name}" must match ${NAME_PATTERN}`);
    }
    if (this.aspects.has(spec.name)) throw new CatalogError('CONFLICT', `aspect "${spec.name}" is already registered`);
    try {
      compileSchema(spec.schema);
    } catch (cause) {
      throw new CatalogError('INVALID_INPUT', `aspect "${spec.name}" has an invalid JSON schema: ${(cause as Error).message}`, { cause });
    }
    this.aspects.set(spec.name, { ...spec });
  }

  registerEntityType(spec: EntityTypeSpec): void {
    if (!NAME_PATTERN.test(spec.name)) {
      throw new CatalogError('INVALID_INPUT', `entity type name "${spec.name}" must match ${NAME_PATTERN}`);
    }
    if (this.entityTypes.has(spec.name)) throw new CatalogError('CONFLICT', `entity type "${spec.name}" is already registered`);
    const unknown = spec.aspects.filter((a) => !this.aspects.has(a));
    if (unknown.length) {
      throw new CatalogError('INVALID_INPUT', `entity type "${spec.name}" names unknown aspects: ${unknown.join(', ')}`);
    }
    this.entityTypes.set(spec.name, { ...spec, aspects: [...spec.aspects] });
  }

  entityTypeNames(): string[] {
    return [...this.entityTypes.keys()];
  }

  hasEntityType(name: string): boolean {
    return this.entityTypes.has(name);
  }

  /** The spec of an entity type; unknown is INVALID_INPUT listing the known ones. */
  entityType(name: string, where = 'entityType'): EntityTypeSpec {
    const spec = this.entityTypes.get(name);
    if (!spec) {
      const message = `unknown entity type "${name}"; known types: ${this.entityTypeNames().join(', ')}`;
      throw new CatalogError('INVALID_INPUT', `${where}: ${message}`, { details: [{ path: where, message }] });
    }
    return spec;
  }

  hasAspect(name: string): boolean {
    return this.aspects.has(name);
  }

  aspect(name: string, where = 'aspect'): AspectSpec {
    const spec = this.aspects.get(name);
    if (!spec) {
      const message = `unknown aspect "${name}"`;
      throw new CatalogError('INVALID_INPUT', `${where}: ${message}`, { details: [{ path: where, message }] });
    }
    return spec;
  }

  /** INVALID_INPUT unless the entity type may carry the aspect. */
  requireAspectOf(entityType: string, aspectName: string): AspectSpec {
    const entity = this.entityType(entityType);
    const aspect = this.aspect(aspectName);
    if (!entity.aspects.includes(aspectName)) {
      const message = `entity type "${entityType}" has no aspect "${aspectName}"; its aspects: ${entity.aspects.join(', ')}`;
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'aspect', message }] });
    }
    return aspect;
  }

  timeseriesAspectsOf(entityType: string): string[] {
    return this.entityType(entityType).aspects.filter((a) => this.aspects.get(a)?.timeseries);
  }

  /** Validates an aspect value against its schema; returns every violation, paths prefixed with `prefix`. */
  validateAspect(aspectName: string, value: unknown, prefix = ''): Violation[] {
    return checkSchema(this.aspect(aspectName).schema, value, prefix);
  }

  /** Whether `validateAspect` finds nothing (without a path to report under). */
  passesAspectSchema(aspectName: string, value: unknown): boolean {
    return passesSchema(this.aspect(aspectName).schema, value);
  }

  // --- entity-type URNs and GraphQL names -------------------------------------------------------

  /** `dataset` → `urn:li:entityType:datahub.dataset`. */
  entityTypeUrn(name: string): string {
    return `${ENTITY_TYPE_URN_PREFIX}${this.entityType(name).name}`;
  }

  /**
   * Accepts a short name (`dataset`) or a full entity-type URN (`urn:li:entityType:datahub.dataset`);
   * returns the entity name, or undefined when it names no registered type.
   */
  entityNameFromInput(input: string): string | undefined {
    if (this.entityTypes.has(input)) return input;
    if (input.startsWith(ENTITY_TYPE_URN_PREFIX)) {
      const name = input.slice(ENTITY_TYPE_URN_PREFIX.length);
      return this.entityTypes.has(name) ? name : undefined;
    }
    return undefined;
  }

  graphqlTypeOf(entityName: string): string {
    return this.entityType(entityName).graphqlType;
  }

  entityNameFromGraphqlType(graphqlType: string): string | undefined {
    for (const spec of this.entityTypes.values()) if (spec.graphqlType === graphqlType) return spec.name;
    return undefined;
  }
}
