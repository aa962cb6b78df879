import type { JsonObject } from '../../adapter/types';
import { VALUE_TYPE_NAMES } from './platform-types';
import type { ParsedUrn } from '../urn';
import type { EntityRegistry } from './registry';

/**
 * Key aspects: the members an entity's URN is made of, as DataHub names them (`datasetKey`,
 * `structuredPropertyKey`, ...). They are not stored: they are derived from the URN of an entity that
 * exists, so that clients that test existence by reading the key aspect work.
 */

interface KeySpec {
  aspect: string;
  derive(urn: ParsedUrn): JsonObject | undefined;
}

/** Tuple members by position (`undefined` when the URN does not have that many). */
function tuple(urn: ParsedUrn, names: readonly string[]): JsonObject | undefined {
  if (urn.parts.length !== names.length) return undefined;
  return Object.fromEntries(names.map((name, i) => [name, urn.parts[i]!]));
}

const single =
  (member: string) =>
  (urn: ParsedUrn): JsonObject => ({ [member]: urn.key });

const KEY_SPECS: Readonly<Record<string, KeySpec>> = {
  dataset: {
    aspect: 'datasetKey',
    derive: (urn) => tuple(urn, ['platform', 'name', 'origin']),
  },
  dataFlow: { aspect: 'dataFlowKey', derive: (urn) => tuple(urn, ['orchestrator', 'flowId', 'cluster']) },
  dataJob: { aspect: 'dataJobKey', derive: (urn) => tuple(urn, ['flow', 'jobId']) },
  chart: { aspect: 'chartKey', derive: (urn) => tuple(urn, ['dashboardTool', 'chartId']) },
  dashboard: { aspect: 'dashboardKey', derive: (urn) => tuple(urn, ['dashboardTool', 'dashboardId']) },
  container: { aspect: 'containerKey', derive: single('guid') },
  schemaField: { aspect: 'schemaFieldKey', derive: (urn) => tuple(urn, ['parent', 'fieldPath']) },
  glossaryTerm: { aspect: 'glossaryTermKey', derive: single('name') },
  corpuser: { aspect: 'corpUserKey', derive: single('username') },
  corpGroup: { aspect: 'corpGroupKey', derive: single('name') },
  dataPlatform: { aspect: 'dataPlatformKey', derive: single('platformName') },
  structuredProperty: { aspect: 'structuredPropertyKey', derive: single('id') },
};

/** The key aspect's name of an entity type, undefined for types without one here (tokens, policies, host types). */
export function keyAspectName(entityType: string): string | undefined {
  return KEY_SPECS[entityType]?.aspect;
}

/** The key aspect's value of a URN (undefined when the type has none or the URN does not fit its members). */
export function keyAspectOf(urn: ParsedUrn): { name: string; value: JsonObject } | undefined {
  const spec = KEY_SPECS[urn.entityType];
  if (!spec) return undefined;
  const value = spec.derive(urn);
  return value ? { name: spec.aspect, value } : undefined;
}

/** Whether an aspect name is the key aspect of some entity type. */
export function isKeyAspectName(name: string): boolean {
  return KEY_ASPECT_NAMES.has(name);
}

const KEY_ASPECT_NAMES: ReadonlySet<string> = new Set(Object.values(KEY_SPECS).map((spec) => spec.aspect));

/**
 * Entity types and data types are entities of the platform that are not stored here: the URN
 * `urn:li:entityType:datahub.<name>` exists when the type is registered, `urn:li:dataType:datahub.<t>`
 * for each value type of structured properties. Their key aspects (`entityTypeKey`, `dataTypeKey`),
 * or undefined for any other URN.
 */
export function builtInKeyAspect(registry: EntityRegistry, urn: ParsedUrn): { name: string; value: JsonObject } | undefined {
  const id = urn.key;
  if (!id.startsWith('datahub.')) return undefined;
  const name = id.slice('datahub.'.length);
  if (urn.entityType === 'entityType' && registry.hasEntityType(name)) return { name: 'entityTypeKey', value: { id } };
  if (urn.entityType === 'dataType' && (VALUE_TYPE_NAMES as readonly string[]).includes(name))
    return { name: 'dataTypeKey', value: { id } };
  return undefined;
}
