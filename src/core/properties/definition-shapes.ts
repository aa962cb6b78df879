import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { JsonObject, JsonValue } from '../../adapter/types';
import { checkSchema } from '../validation';
import type { EntityTypeInput } from '../entities/aspect-types';
import { CatalogError, type Violation } from '../../errors';
import { fromPropertyValue, valueTypeNameOf, type DefinitionDraft, type DraftPaths } from './definition-rules';
import {
  ENTITY_TYPE_URN_PREFIX,
  type CreateStructuredPropertyInput,
  type PropertyReadBack,
  type RestPropertyDefinitionInput,
  type StructuredPropertyDefinition,
  type ValueTypeInput,
  type YamlPropertyEntry,
} from './types';
import * as schemas from '../validation/schemas/structured-properties';

/** The yaml package, loaded on the first YAML document (a process that reads none never loads it). */
let yamlModule: typeof Yaml | undefined;
const parseYaml = (text: string): unknown => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text) as unknown;

/**
 * The canonical input of a definition (the aspect's JSON, as stored) read into a draft for the rules,
 * and the stored definition written out in each spelling the transports answer with (GraphQL input,
 * YAML entry, read-back form). Conversions are lossless: stored → spelling → decoded gives the same
 * definition. The GraphQL and YAML inputs are decoded by their transports (src/graphql/property-input.ts,
 * src/http/property-yaml.ts) before the rules see them.
 */

function paths(
  prefix: string,
  names: {
    id: string;
    qualifiedName: string;
    valueType: string;
    allowedTypes: string;
    allowedValues: string;
    cardinality: string;
    entityTypes: string;
    version: string;
    urn: string;
  },
  valueSuffix: string,
): DraftPaths {
  return {
    urn: `${prefix}${names.urn}`,
    id: `${prefix}${names.id}`,
    qualifiedName: `${prefix}${names.qualifiedName}`,
    valueType: `${prefix}${names.valueType}`,
    allowedTypes: `${prefix}${names.allowedTypes}`,
    allowedValues: `${prefix}${names.allowedValues}`,
    allowedValue: (i) => `${prefix}${names.allowedValues}/${i}${valueSuffix}`,
    cardinality: `${prefix}${names.cardinality}`,
    entityTypes: `${prefix}${names.entityTypes}`,
    version: `${prefix}${names.version}`,
  };
}

const CAMEL = {
  urn: '/urn',
  id: '/id',
  qualifiedName: '/qualifiedName',
  valueType: '/valueType',
  allowedTypes: '/typeQualifier/allowedTypes',
  allowedValues: '/allowedValues',
  cardinality: '/cardinality',
  entityTypes: '/entityTypes',
  version: '/version',
};
export const REST_PATHS = paths('', CAMEL, '/value');
/** The canonical (aspect) spelling's paths under a prefix (an item of a batch). */
export function restPaths(prefix: string): DraftPaths {
  return prefix ? paths(prefix, CAMEL, '/value') : REST_PATHS;
}

function fromRest(input: RestPropertyDefinitionInput, urn: string | undefined): DefinitionDraft {
  return {
    ...(urn !== undefined ? { urn } : {}),
    ...(input.qualifiedName !== undefined ? { qualifiedName: input.qualifiedName } : {}),
    ...(input.displayName !== undefined ? { displayName: input.displayName } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    valueType: input.valueType,
    ...(input.typeQualifier ? { allowedTypes: input.typeQualifier.allowedTypes } : {}),
    ...(input.allowedValues
      ? {
          allowedValues: input.allowedValues.map((a) => ({
            value: fromPropertyValue(a.value),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    ...(input.cardinality ? { cardinality: input.cardinality } : {}),
    entityTypes: input.entityTypes,
    ...(input.immutable !== undefined ? { immutable: input.immutable } : {}),
    ...(input.version !== undefined ? { version: input.version } : {}),
  };
}

/** Checks the canonical input (the aspect's JSON) against its schema and reads it into a draft (undefined when the shape is wrong). */
export function readRestDefinition(
  input: unknown,
  violations: Violation[],
  options: { urn?: string; prefix?: string } = {},
): DefinitionDraft | undefined {
  const found = checkSchema(schemas.restDefinitionSchema, input, options.prefix ?? '');
  violations.push(...found);
  return found.length ? undefined : fromRest(input as RestPropertyDefinitionInput, options.urn);
}

/** Parses the YAML file of the command line: a list of definitions (a single mapping counts as a list of one). */
export function parseYamlDefinitions(text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (cause) {
    // The yaml package's message is "<reason> at line L, column C:" followed by a code frame; keep the first line.
    const full = cause instanceof Error ? cause.message : String(cause);
    const message = (full.split('\n')[0] ?? full).replace(/:\s*$/, '');
    throw new CatalogError('INVALID_INPUT', `the YAML file cannot be read: ${message}`, { cause, details: [{ path: '/', message }] });
  }
  if (parsed === null || parsed === undefined) return [];
  return Array.isArray(parsed) ? parsed : [parsed];
}

// --- from the stored definition to each shape -----------------------------------------------------

const shortEntityType = (urn: string): string => (urn.startsWith(ENTITY_TYPE_URN_PREFIX) ? urn.slice(ENTITY_TYPE_URN_PREFIX.length) : urn);

export function toGraphqlInput(definition: StructuredPropertyDefinition): CreateStructuredPropertyInput {
  const d = definition;
  return {
    qualifiedName: d.qualifiedName,
    ...(d.displayName !== undefined ? { displayName: d.displayName } : {}),
    ...(d.description !== undefined ? { description: d.description } : {}),
    immutable: d.immutable,
    // Stored definitions hold full data-type and entity-type URNs, which the input types name.
    valueType: d.valueType as ValueTypeInput,
    ...(d.typeQualifier ? { typeQualifier: { allowedTypes: [...d.typeQualifier.allowedTypes] } } : {}),
    ...(d.allowedValues
      ? {
          allowedValues: d.allowedValues.map((a) => ({
            ...('double' in a.value ? { numberValue: a.value.double } : { stringValue: a.value.string }),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    cardinality: d.cardinality,
    entityTypes: [...d.entityTypes] as EntityTypeInput[],
    ...(d.version !== undefined ? { version: d.version } : {}),
  };
}

export function toRestInput(definition: StructuredPropertyDefinition): RestPropertyDefinitionInput {
  const { created: _created, lastModified: _lastModified, ...rest } = definition;
  return JSON.parse(JSON.stringify(rest)) as RestPropertyDefinitionInput;
}

export function toYamlEntry(definition: StructuredPropertyDefinition): YamlPropertyEntry {
  const d = definition;
  return {
    id: d.qualifiedName,
    qualified_name: d.qualifiedName,
    type: valueTypeNameOf(d.valueType) ?? d.valueType,
    cardinality: d.cardinality,
    ...(d.version !== undefined ? { version: d.version } : {}),
    ...(d.displayName !== undefined ? { display_name: d.displayName } : {}),
    entity_types: d.entityTypes.map(shortEntityType),
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.allowedValues
      ? {
          allowed_values: d.allowedValues.map((a) => ({
            value: fromPropertyValue(a.value),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    ...(d.immutable ? { immutable: true } : {}),
    ...(d.typeQualifier ? { type_qualifier: { allowed_types: d.typeQualifier.allowedTypes.map(shortEntityType) } } : {}),
  };
}

/** The command-line read-back form (docs/cli.md): full URNs, allowed values as strings. */
export function toReadBack(urn: string, definition: StructuredPropertyDefinition): PropertyReadBack {
  const d = definition;
  return {
    urn,
    qualified_name: d.qualifiedName,
    type: d.valueType,
    ...(d.description !== undefined ? { description: d.description } : {}),
    ...(d.displayName !== undefined ? { display_name: d.displayName } : {}),
    entity_types: [...d.entityTypes],
    cardinality: d.cardinality,
    ...(d.allowedValues
      ? {
          allowed_values: d.allowedValues.map((a) => ({
            value: String(fromPropertyValue(a.value)),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    ...(d.version !== undefined ? { version: d.version } : {}),
    ...(d.immutable ? { immutable: true } : {}),
    ...(d.typeQualifier ? { type_qualifier: { allowed_types: [...d.typeQualifier.allowedTypes] } } : {}),
  };
}

/** The stored aspect value as JSON. */
export function definitionToJson(definition: StructuredPropertyDefinition): JsonObject {
  return JSON.parse(JSON.stringify(definition)) as JsonObject;
}

export function definitionFromJson(value: JsonValue | undefined): StructuredPropertyDefinition | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return value as unknown as StructuredPropertyDefinition;
}
