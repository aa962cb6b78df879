import type { EntityView } from '../core/entities';
import { entityTypeOf } from '../core/urn';

/**
 * An entity as a resolver passes it on: its URN and type, and its aspects when they were read already
 * (`view`; null when the entity does not exist). Fields that need aspects load them through the
 * request's batch loader.
 */
export interface EntityRef {
  urn: string;
  entityType: string;
  view?: EntityView | null;
}

export function refOf(urn: string): EntityRef {
  return { urn, entityType: entityTypeOf(urn) };
}

export function refOfView(view: EntityView): EntityRef {
  return { urn: view.urn, entityType: view.entityType, view };
}

/** GraphQL object types of the built-in entity types (DataHub's names). */
const OBJECT_TYPES: Readonly<Record<string, string>> = {
  dataset: 'Dataset',
  dataFlow: 'DataFlow',
  dataJob: 'DataJob',
  chart: 'Chart',
  dashboard: 'Dashboard',
  container: 'Container',
  schemaField: 'SchemaFieldEntity',
  glossaryTerm: 'GlossaryTerm',
  corpuser: 'CorpUser',
  corpGroup: 'CorpGroup',
  dataPlatform: 'DataPlatform',
  structuredProperty: 'StructuredPropertyEntity',
};

export const ENTITY_OBJECT_TYPES: readonly string[] = [...Object.values(OBJECT_TYPES), 'GenericEntity'];

/** The object type of an entity: built-in, the host's mapping, or GenericEntity. */
export function objectTypeOf(entityType: string, hostTypes: Readonly<Record<string, string>> | undefined): string {
  return hostTypes?.[entityType] ?? OBJECT_TYPES[entityType] ?? 'GenericEntity';
}
