import type { JsonValue } from '../adapter/types';
import type { EntityView } from '../core/entities';
import { isJsonObject } from './entity-refs';

/** A stored value: `{ string }` or `{ double }`. */
export type StoredPropertyValue = { string: string } | { double: number };

/** GraphQL `PropertyValue`: `StringValue { stringValue }` or `NumberValue { numberValue }`. */
export type GraphQLPropertyValue = { stringValue: string } | { numberValue: number };

/** One property's values on one entity, as the `structuredProperties` aspect keeps them. */
export interface StoredAssignment {
  propertyUrn: string;
  values: StoredPropertyValue[];
}

/** The parent of `StructuredPropertiesEntry` fields. */
export interface PropertyEntry extends StoredAssignment {
  associatedUrn: string;
}

export function toGraphQLValue(value: StoredPropertyValue): GraphQLPropertyValue {
  return 'string' in value ? { stringValue: value.string } : { numberValue: value.double };
}

export function propertyValueTypeName(value: GraphQLPropertyValue): 'StringValue' | 'NumberValue' {
  return 'stringValue' in value ? 'StringValue' : 'NumberValue';
}

function storedValue(value: JsonValue): StoredPropertyValue | undefined {
  if (!isJsonObject(value)) return undefined;
  if (typeof value.string === 'string') return { string: value.string };
  if (typeof value.double === 'number') return { double: value.double };
  return undefined;
}

/** The assignments of an entity's `structuredProperties` aspect (as read: values readers may not see are gone already). */
export function assignmentsOfView(view: EntityView): StoredAssignment[] {
  const properties = view.aspects.structuredProperties?.value.properties;
  if (!Array.isArray(properties)) return [];
  return properties.filter(isJsonObject).map((p) => ({
    propertyUrn: String(p.propertyUrn),
    values: (Array.isArray(p.values) ? p.values : []).map(storedValue).filter((v): v is StoredPropertyValue => v !== undefined),
  }));
}

/** GraphQL `StructuredProperties` of one entity. */
export function toStructuredProperties(associatedUrn: string, assignments: readonly StoredAssignment[]): { properties: PropertyEntry[] } {
  return { properties: assignments.map((a) => ({ propertyUrn: a.propertyUrn, values: a.values, associatedUrn })) };
}
