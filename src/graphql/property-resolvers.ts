import type { Catalog } from '../catalog';
import { CatalogError } from '../core/errors';
import { refOf, type EntityRef } from './entity-refs';
import { viewOf } from './entity-resolvers';
import { propertyValueTypeName, toGraphQLValue, type GraphQLPropertyValue, type PropertyEntry, type StoredPropertyValue } from './property-shapes';
import type { RequestState } from './request-state';
import type { ResolverFunction } from './resolver-types';

const DATA_TYPE_PREFIX = 'urn:li:dataType:datahub.';
const ENTITY_TYPE_PREFIX = 'urn:li:entityType:datahub.';

/** The stored `propertyDefinition` aspect, as far as GraphQL shows it. */
export interface DefinitionShape {
  qualifiedName: string;
  displayName?: string;
  description?: string;
  valueType: string;
  typeQualifier?: { allowedTypes: string[] };
  allowedValues?: Array<{ value: StoredPropertyValue; description?: string }>;
  cardinality: 'SINGLE' | 'MULTIPLE';
  entityTypes: string[];
  immutable?: boolean;
  version?: string;
  created?: { time: number; actor: string };
  lastModified?: { time: number; actor: string };
}

/** The parent of `StructuredPropertyEntity` fields: a reference, with the definition when it was read already. */
export interface PropertyRef extends EntityRef {
  definition?: DefinitionShape;
  removed?: boolean;
}

const STD_DATA_TYPES: Readonly<Record<string, { type: string; displayName: string }>> = {
  string: { type: 'STRING', displayName: 'String' },
  rich_text: { type: 'RICH_TEXT', displayName: 'Rich text' },
  number: { type: 'NUMBER', displayName: 'Number' },
  date: { type: 'DATE', displayName: 'Date' },
  urn: { type: 'URN', displayName: 'URN' },
};

async function definitionOf(ref: PropertyRef, state: RequestState): Promise<DefinitionShape> {
  if (ref.definition) return ref.definition;
  const value = (await viewOf(ref, state))?.aspects.propertyDefinition?.value;
  if (!value) throw new CatalogError('NOT_FOUND', `structured property ${ref.urn} does not exist`);
  return value as unknown as DefinitionShape;
}

/** Structured property definitions and values: the result types (the operations follow with `catalog.properties`). */
export function propertyResolvers(catalog: Catalog, stateOf: (context: unknown) => RequestState): Record<string, Record<string, ResolverFunction>> {
  const entityTypeEntity = (urn: string) => ({ urn });
  return {
    StructuredPropertyEntity: {
      type: () => 'STRUCTURED_PROPERTY',
      definition: (ref: PropertyRef, _args: unknown, context: unknown) => definitionOf(ref, stateOf(context)),
      status: async (ref: PropertyRef, _args: unknown, context: unknown) => {
        if (ref.removed !== undefined) return { removed: ref.removed };
        const status = (await viewOf(ref, stateOf(context)))?.aspects.status?.value;
        return { removed: status?.removed === true };
      },
    },
    StructuredPropertyDefinition: {
      valueType: (definition: DefinitionShape) => ({ urn: definition.valueType }),
      entityTypes: (definition: DefinitionShape) => definition.entityTypes.map(entityTypeEntity),
      typeQualifier: (definition: DefinitionShape) =>
        definition.typeQualifier ? { allowedTypes: definition.typeQualifier.allowedTypes.map(entityTypeEntity) } : null,
      allowedValues: (definition: DefinitionShape) =>
        definition.allowedValues?.map((allowed) => ({ value: toGraphQLValue(allowed.value), description: allowed.description ?? null })) ?? null,
      immutable: (definition: DefinitionShape) => definition.immutable === true,
      created: (definition: DefinitionShape) => definition.created ?? null,
      lastModified: (definition: DefinitionShape) => definition.lastModified ?? null,
    },
    DataTypeEntity: {
      type: () => 'DATA_TYPE',
      info: ({ urn }: { urn: string }) => {
        const name = urn.startsWith(DATA_TYPE_PREFIX) ? urn.slice(DATA_TYPE_PREFIX.length) : urn;
        const std = STD_DATA_TYPES[name];
        return { type: std?.type ?? 'OTHER', qualifiedName: `datahub.${name}`, displayName: std?.displayName ?? name, description: null };
      },
    },
    EntityTypeEntity: {
      type: () => 'ENTITY_TYPE',
      info: ({ urn }: { urn: string }) => {
        const name = urn.startsWith(ENTITY_TYPE_PREFIX) ? urn.slice(ENTITY_TYPE_PREFIX.length) : urn;
        return { type: catalog.registry.entityType(name).graphqlType, qualifiedName: `datahub.${name}`, displayName: name, description: null };
      },
    },
    PropertyValue: {
      __resolveType: (value: GraphQLPropertyValue) => propertyValueTypeName(value),
    },
    StructuredPropertiesEntry: {
      structuredProperty: (entry: PropertyEntry): PropertyRef => refOf(entry.propertyUrn),
      values: (entry: PropertyEntry) => entry.values.map(toGraphQLValue),
      valueEntities: async (entry: PropertyEntry, _args: unknown, context: unknown) => {
        const state = stateOf(context);
        const definition = await definitionOf(refOf(entry.propertyUrn), state);
        if (definition.valueType !== `${DATA_TYPE_PREFIX}urn`) return null;
        const urns = entry.values.flatMap((v) => ('string' in v ? [v.string] : []));
        const views = await state.entities.loadMany(urns);
        return views.map((view) => (view ? { urn: view.urn, entityType: view.entityType, view } : null));
      },
    },
  };
}
