import type { PropertyAssignment, PropertyValue, StructuredPropertyView } from '../core/properties';
import { STRUCTURED_PROPERTY_ENTITY } from '../core/properties';
import type { EntityRef } from './entity-refs';

/** GraphQL `PropertyValue`: `StringValue { stringValue }` or `NumberValue { numberValue }`. */
export type GraphQLPropertyValue = { stringValue: string } | { numberValue: number };

/** The parent of `StructuredPropertiesEntry` fields: one assignment and the entity it is on. */
export interface PropertyEntry extends PropertyAssignment {
  associatedUrn: string;
}

/** The parent of `StructuredPropertyEntity` fields: a reference, with the definition when it was read already. */
export interface PropertyRef extends EntityRef {
  property?: StructuredPropertyView;
}

export function toGraphQLValue(value: PropertyValue): GraphQLPropertyValue {
  return 'string' in value ? { stringValue: value.string } : { numberValue: value.double };
}

export function propertyValueTypeName(value: GraphQLPropertyValue): 'StringValue' | 'NumberValue' {
  return 'stringValue' in value ? 'StringValue' : 'NumberValue';
}

/** GraphQL `StructuredProperties` of one entity. */
export function toStructuredProperties(associatedUrn: string, assignments: readonly PropertyAssignment[]): { properties: PropertyEntry[] } {
  return { properties: assignments.map((a) => ({ ...a, associatedUrn })) };
}

export function propertyRefOf(property: StructuredPropertyView): PropertyRef {
  return { urn: property.urn, entityType: STRUCTURED_PROPERTY_ENTITY, property };
}
