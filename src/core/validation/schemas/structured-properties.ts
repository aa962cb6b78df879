import type { JsonObject } from '../../../adapter/types';
import { STRUCTURED_PROPERTY_SETTINGS_FLAGS } from './aspects';

/**
 * JSON schemas of the three input shapes of a structured property definition and of the GraphQL
 * update input. They check structure and JSON types; the meaning (value types, entity types, allowed
 * values typed to the value type, versions) is checked by property-definition-rules.ts, which can
 * name the valid choices.
 */

const str: JsonObject = { type: 'string' };
const strings: JsonObject = { type: 'array', items: str };
const cardinality: JsonObject = { type: 'string', enum: ['SINGLE', 'MULTIPLE'] };
const auditStamp: JsonObject = {
  type: 'object',
  properties: { time: { type: 'integer', minimum: 0 }, actor: str },
  required: ['time', 'actor'],
  additionalProperties: false,
};

/** `{ string }` or `{ double }`: exactly one member. */
const propertyValueSchema: JsonObject = {
  type: 'object',
  properties: { string: str, double: { type: 'number' } },
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
};

/** GraphQL `AllowedValueInput` / `PropertyValueInput` members (the one-of rule is checked in code, with a clearer message). */
const graphqlAllowedValue: JsonObject = {
  type: 'object',
  properties: { stringValue: str, numberValue: { type: 'number' }, description: str },
  additionalProperties: false,
};

/** GraphQL `StructuredPropertySettingsInput` (nulls dropped before the check). */
const graphqlSettingsInput: JsonObject = {
  type: 'object',
  properties: STRUCTURED_PROPERTY_SETTINGS_FLAGS,
  additionalProperties: false,
};

export const graphqlCreateDefinitionSchema: JsonObject = {
  type: 'object',
  properties: {
    id: str,
    qualifiedName: str,
    displayName: str,
    description: str,
    immutable: { type: 'boolean' },
    valueType: str,
    typeQualifier: { type: 'object', properties: { allowedTypes: strings }, additionalProperties: false },
    allowedValues: { type: 'array', items: graphqlAllowedValue },
    cardinality,
    entityTypes: strings,
    version: str,
    settings: graphqlSettingsInput,
  },
  required: ['valueType', 'entityTypes'],
  additionalProperties: false,
};

export const graphqlUpdateDefinitionSchema: JsonObject = {
  type: 'object',
  properties: {
    urn: str,
    displayName: str,
    description: str,
    immutable: { type: 'boolean' },
    newAllowedValues: { type: 'array', items: graphqlAllowedValue },
    setCardinalityAsMultiple: { type: 'boolean' },
    newEntityTypes: strings,
    typeQualifier: { type: 'object', properties: { newAllowedTypes: strings }, additionalProperties: false },
    version: str,
    settings: graphqlSettingsInput,
  },
  required: ['urn'],
  additionalProperties: false,
};

export const restDefinitionSchema: JsonObject = {
  type: 'object',
  properties: {
    qualifiedName: str,
    displayName: str,
    description: str,
    valueType: str,
    typeQualifier: { type: 'object', properties: { allowedTypes: strings }, required: ['allowedTypes'], additionalProperties: false },
    allowedValues: {
      type: 'array',
      items: {
        type: 'object',
        properties: { value: propertyValueSchema, description: str },
        required: ['value'],
        additionalProperties: false,
      },
    },
    cardinality,
    entityTypes: strings,
    immutable: { type: 'boolean' },
    version: str,
    created: auditStamp,
    lastModified: auditStamp,
  },
  required: ['valueType', 'entityTypes'],
  additionalProperties: false,
};

export const yamlDefinitionSchema: JsonObject = {
  type: 'object',
  properties: {
    id: str,
    urn: str,
    qualified_name: str,
    type: str,
    cardinality,
    version: { type: ['string', 'integer'] },
    display_name: str,
    entity_types: strings,
    description: str,
    allowed_values: {
      type: 'array',
      items: {
        type: 'object',
        properties: { value: { type: ['string', 'number'] }, description: str },
        required: ['value'],
        additionalProperties: false,
      },
    },
    immutable: { type: 'boolean' },
    type_qualifier: { type: 'object', properties: { allowed_types: strings }, required: ['allowed_types'], additionalProperties: false },
  },
  required: ['type', 'entity_types'],
  additionalProperties: false,
};

// --- values --------------------------------------------------------------------------------------

export const restAssignmentSchema: JsonObject = {
  type: 'object',
  properties: {
    propertyUrn: str,
    values: { type: 'array', items: propertyValueSchema },
    created: auditStamp,
    lastModified: auditStamp,
  },
  required: ['propertyUrn', 'values'],
  additionalProperties: false,
};

/** The outer shape of the REST body; each element is then checked with `restAssignmentSchema`. */
export const restValuesEnvelopeSchema: JsonObject = {
  type: 'object',
  properties: { properties: { type: 'array' } },
  required: ['properties'],
  additionalProperties: false,
};

export const graphqlAssignmentSchema: JsonObject = {
  type: 'object',
  properties: {
    structuredPropertyUrn: str,
    values: {
      type: 'array',
      items: { type: 'object', properties: { stringValue: str, numberValue: { type: 'number' } }, additionalProperties: false },
    },
  },
  required: ['structuredPropertyUrn', 'values'],
  additionalProperties: false,
};

/** One entity's edit of its values (`catalog.properties.editValues`): properties to set, properties to remove. */
export const propertyValueEditSchema: JsonObject = {
  type: 'object',
  properties: {
    urn: str,
    set: {
      type: 'array',
      items: {
        type: 'object',
        properties: { propertyUrn: str, values: { type: 'array', items: propertyValueSchema } },
        required: ['propertyUrn', 'values'],
        additionalProperties: false,
      },
    },
    remove: strings,
  },
  required: ['urn'],
  additionalProperties: false,
};

export const patchRequestSchema: JsonObject = {
  type: 'object',
  properties: {
    patch: {
      type: 'array',
      items: {
        type: 'object',
        properties: { op: str, path: str, value: {}, from: str },
        required: ['op', 'path'],
        additionalProperties: false,
      },
    },
    arrayPrimaryKeys: { type: 'object', additionalProperties: strings },
  },
  required: ['patch'],
  additionalProperties: false,
};
