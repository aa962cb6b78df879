import type { Actor } from '../access/actor';
import type { StructuredPropertySettings, StructuredPropertySettingsInput } from './settings';
import type { EntityTypeInput } from '../entities/aspect-types';
import type { AuditStamp, JsonValue } from '../../adapter/types';
import type { Violation } from '../../errors';

/**
 * Types of structured properties: the stored definition (the REST aspect shape of the established
 * platform), the three input shapes it is accepted from, the read-back form of the command line, and
 * the values written on entities.
 */

import { ENTITY_TYPE_URN_PREFIX, VALUE_TYPE_NAMES } from '../entities/platform-types';

export { ENTITY_TYPE_URN_PREFIX, VALUE_TYPE_NAMES };
export type ValueTypeName = (typeof VALUE_TYPE_NAMES)[number];

/** A value type as inputs take it: its short name or its data-type URN. */
export type ValueTypeInput = ValueTypeName | `datahub.${ValueTypeName}` | `urn:li:dataType:datahub.${ValueTypeName}`;

export const DATA_TYPE_URN_PREFIX = 'urn:li:dataType:datahub.';
export const STRUCTURED_PROPERTY_ENTITY = 'structuredProperty';
export const DEFINITION_ASPECT = 'propertyDefinition';
export const VALUES_ASPECT = 'structuredProperties';

export type PropertyCardinality = 'SINGLE' | 'MULTIPLE';

/** One typed value: `{ string }` for string, rich_text, date and urn properties; `{ double }` for numbers. */
export type PropertyValue = { string: string } | { double: number };

export interface AllowedValue {
  value: PropertyValue;
  description?: string;
}

/** The `propertyDefinition` aspect as stored and returned (full URNs, defaults filled in). */
export interface StructuredPropertyDefinition {
  qualifiedName: string;
  displayName?: string;
  description?: string;
  /** `urn:li:dataType:datahub.<string|rich_text|number|date|urn>`. */
  valueType: string;
  /** For `urn` values: the entity types (full entity-type URNs) a value may point at. */
  typeQualifier?: { allowedTypes: string[] };
  allowedValues?: AllowedValue[];
  cardinality: PropertyCardinality;
  /** Full entity-type URNs, e.g. `urn:li:entityType:datahub.dataset`. */
  entityTypes: string[];
  immutable: boolean;
  /** `yyyyMMddhhmmss`; a greater version allows breaking changes and supersedes older values. */
  version?: string;
  created?: AuditStamp;
  lastModified?: AuditStamp;
}

// --- input shapes ---------------------------------------------------------------------------------

/** GraphQL `AllowedValueInput`: exactly one of `stringValue` / `numberValue`. */
export interface GraphqlAllowedValueInput {
  stringValue?: string | null;
  numberValue?: number | null;
  description?: string | null;
}

/** GraphQL `CreateStructuredPropertyInput`. */
export interface CreateStructuredPropertyInput {
  id?: string | null;
  qualifiedName?: string | null;
  displayName?: string | null;
  description?: string | null;
  immutable?: boolean | null;
  /** `string`, `rich_text`, `number`, `date`, `urn`, or the data-type URN (`urn:li:dataType:datahub.string`). */
  valueType: ValueTypeInput;
  typeQualifier?: { allowedTypes?: string[] | null } | null;
  allowedValues?: GraphqlAllowedValueInput[] | null;
  cardinality?: PropertyCardinality | null;
  /** Entity type names (`dataset`) or entity-type URNs (`urn:li:entityType:datahub.dataset`). */
  entityTypes: readonly EntityTypeInput[];
  version?: string | null;
  /** Where the property is shown (the `structuredPropertySettings` aspect); flags left out are false. */
  settings?: StructuredPropertySettingsInput | null;
}

/** GraphQL `UpdateStructuredPropertyInput`: everything but `urn` is optional; lists are appended. */
export interface UpdateStructuredPropertyInput {
  urn: string;
  displayName?: string | null;
  description?: string | null;
  immutable?: boolean | null;
  newAllowedValues?: GraphqlAllowedValueInput[] | null;
  setCardinalityAsMultiple?: boolean | null;
  newEntityTypes?: string[] | null;
  typeQualifier?: { newAllowedTypes?: string[] | null } | null;
  version?: string | null;
  /** Flags to change in the `structuredPropertySettings` aspect; flags left out keep their value. */
  settings?: StructuredPropertySettingsInput | null;
}

/**
 * A change of a stored definition in the rules' own terms (what GraphQL `updateStructuredProperty` is
 * decoded into): texts and flags replaced, lists appended without duplicates, SINGLE → MULTIPLE, a new
 * version, settings flags over the stored ones. Violations are reported under these names
 * (`/addEntityTypes`, `/addAllowedValues/0`, `/multiple`).
 */
export interface DefinitionUpdate {
  urn: string;
  displayName?: string;
  description?: string;
  immutable?: boolean;
  /** SINGLE → MULTIPLE (never back). */
  multiple?: boolean;
  addEntityTypes?: string[];
  addAllowedTypes?: string[];
  addAllowedValues?: Array<{ value: string | number; description?: string }>;
  version?: string;
  settings?: StructuredPropertySettingsInput;
  /** Problems a decoder found in the allowed values (reported with the rules' problems of the allowed values, in one answer). */
  allowedValueProblems?: Violation[];
}

/** The REST aspect JSON (`POST .../structuredProperty/{urn}/propertyDefinition`); short names accepted. */
export interface RestPropertyDefinitionInput {
  qualifiedName?: string;
  displayName?: string;
  description?: string;
  valueType: string;
  typeQualifier?: { allowedTypes: string[] };
  allowedValues?: AllowedValue[];
  cardinality?: PropertyCardinality;
  entityTypes: string[];
  immutable?: boolean;
  version?: string;
  /** Ignored on input (the catalog stamps them); accepted so that a definition read back can be posted again. */
  created?: AuditStamp;
  lastModified?: AuditStamp;
}

/** One entry of the command-line YAML file (`metacatalog properties upsert -f`). */
export interface YamlPropertyEntry {
  id?: string;
  urn?: string;
  qualified_name?: string;
  /** `number`, `string`, ... or a data-type URN. */
  type: string;
  cardinality?: PropertyCardinality;
  /** 14 digits; YAML may give it unquoted (a number). */
  version?: string | number;
  display_name?: string;
  /** Short names (`dataset`, `dataFlow`) or entity-type URNs. */
  entity_types: string[];
  description?: string;
  allowed_values?: Array<{ value: string | number; description?: string }>;
  immutable?: boolean;
  type_qualifier?: { allowed_types: string[] };
}

/** The read-back form of the command line (`metacatalog properties get --urn`): full URNs, values as strings. */
export interface PropertyReadBack {
  urn: string;
  qualified_name: string;
  type: string;
  description?: string;
  display_name?: string;
  entity_types: string[];
  cardinality: PropertyCardinality;
  allowed_values?: Array<{ value: string; description?: string }>;
  /** Only when set. */
  version?: string;
  /** Only when true. */
  immutable?: boolean;
  /** Only for restricted `urn` properties. */
  type_qualifier?: { allowed_types: string[] };
}

/**
 * The one input `catalog.properties` takes for a definition: the `propertyDefinition` aspect's JSON
 * (REST spelling, short names accepted) and the URN it is written to when the caller names one. The
 * GraphQL, REST and YAML spellings are decoded into it by their transports.
 */
export type PropertyDefinitionInput = RestPropertyDefinitionInput & { urn?: string };

/** The canonical definition `catalog.properties.create` takes, its value type and entity types checked by the compiler. */
export type CreatePropertyDefinitionInput = Omit<PropertyDefinitionInput, 'valueType' | 'entityTypes'> & {
  valueType: ValueTypeInput;
  entityTypes: readonly EntityTypeInput[];
};

/** A definition as a reader sees it. */
export interface StructuredPropertyView {
  urn: string;
  definition: StructuredPropertyDefinition;
  /** Soft-deleted (`status.removed`). */
  removed: boolean;
  /** `${incarnation}:${version ?? ''}` — values written under another key are not visible. */
  definitionKey: string;
  /** The `structuredPropertySettings` aspect, when the property has one. */
  settings?: StructuredPropertySettings;
}

/**
 * What writing a definition would do (`catalog.properties.previewChange`); nothing is written.
 * `outcome`: what the real upsert would answer (`refused`: it would refuse the change, a CONFLICT).
 * `breaking`: the change invalidates or hides values already written (a breaking rule, or a new
 * version, which supersedes every value of the current one); `reasons` says why in plain words.
 * `affected`: the entities holding such values (see docs/structured-properties.md for what counts);
 * `sample`: a few of them (URN order) with their current values of the property.
 */
export interface DefinitionChangePreview {
  urn: string;
  outcome: 'created' | 'updated' | 'unchanged' | 'refused';
  breaking: boolean;
  reasons: string[];
  affected: number;
  sample: Array<{ urn: string; values: PropertyValue[] }>;
}

/** The input of `previewChange`: the definition as the `propertyDefinition` aspect holds it, with its URN. */
export type PreviewChangeInput = PropertyDefinitionInput;

export interface DefinitionUpsertResult {
  outcome: 'created' | 'updated' | 'unchanged';
  property: StructuredPropertyView;
}

export interface HardDeleteResult {
  urn: string;
  /** Entities that carried values of the property when it was deleted; background work removes them. */
  entitiesToClean: number;
}

// --- values ---------------------------------------------------------------------------------------

/** One property's values on one entity (an element of the `structuredProperties` aspect). */
export interface PropertyAssignment {
  propertyUrn: string;
  values: PropertyValue[];
  created?: AuditStamp;
  lastModified?: AuditStamp;
}

/** GraphQL `PropertyValueInput`: exactly one of the two. */
export interface GraphqlPropertyValueInput {
  stringValue?: string | null;
  numberValue?: number | null;
}

/** GraphQL `StructuredPropertyInputParams`. */
export interface GraphqlPropertyAssignmentInput {
  structuredPropertyUrn: string;
  values: GraphqlPropertyValueInput[];
}

export interface PropertyPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'test';
  /** `/properties/<property urn>` (RFC 6901 escaping: `~1` for `/`, `~0` for `~`), optionally deeper. */
  path: string;
  value?: JsonValue;
}

/** The body of `PATCH .../structuredProperties` (`application/json-patch+json`). */
export interface PropertyPatchRequest {
  patch: PropertyPatchOperation[];
  /** Only `{ properties: ['propertyUrn'] }` is meaningful; the same addressing applies when it is left out. */
  arrayPrimaryKeys?: { properties: string[] };
}

/** What the search layer needs to filter on `structuredProperties.<qualifiedName>`. */
export interface ResolvedPropertyField {
  propertyUrn: string;
  definitionKey: string;
  valueKind: 'string' | 'number';
  valueType: ValueTypeName;
}

export interface ReindexProgress {
  /** Entities whose search document was rebuilt so far. */
  processed: number;
  /** Entities skipped (an entity type the registry no longer knows). */
  skipped: number;
  /** The last URN of the batch just done. */
  lastUrn: string | undefined;
  done: boolean;
  /** With `countTotal`: the entities there were when the rebuild started (for a progress bar; writes meanwhile may move it). */
  total?: number;
}

export interface ReindexOptions {
  /** Entities per atomic batch (1..5000, default 500). */
  batchSize?: number;
  onProgress?: (progress: ReindexProgress) => void;
  /** Count the entities first, so that progress reports carry `total` (one extra pass over the URNs). */
  countTotal?: boolean;
}

/** Structured property filter fields, as the search resolver needs them. */
export interface FilterFieldSource {
  /**
   * `structuredProperties.<qualifiedName>` resolved at the current state: a property without a
   * definition (hard-deleted or never created) is a field nothing matches (its key is one no value has); INVALID_INPUT
   * for a soft-deleted property and a name that cannot be one.
   */
  resolve(actor: Actor, qualifiedName: string): Promise<ResolvedPropertyField>;
  /** From cached definitions only: undefined when not cached or soft-deleted. */
  cached(qualifiedName: string): ResolvedPropertyField | undefined;
  /** The change token the cached definitions hold for; undefined while nothing is cached. */
  cachedToken(): string | undefined;
}
