import type { JsonPatchOperation } from '../entities/json-patch';
import type { WriteItem } from '../entities/write-pipeline';
import { escapeToken } from './patch';
import { VALUES_ASPECT, type PropertyValue } from './types';

/**
 * One entity's edit of its structured properties, as stewardship tools send it: properties to set
 * (their values replaced whole) and properties to remove. Properties not named keep their values.
 */
export interface PropertyValueEdit {
  set?: ReadonlyArray<{ propertyUrn: string; values: readonly PropertyValue[] }>;
  remove?: readonly string[];
}

/**
 * The edit as a values patch: it applies to what the entity holds when the unit of work reads it, so a
 * concurrent change of another property is kept, and it is checked by the values' own rules
 * (definitions, cardinality, allowed values, immutable values, soft-deleted properties).
 */
function editOperations(edit: PropertyValueEdit): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  for (const propertyUrn of edit.remove ?? []) operations.push({ op: 'remove', path: `/properties/${escapeToken(propertyUrn)}` });
  for (const { propertyUrn, values } of edit.set ?? []) {
    const path = `/properties/${escapeToken(propertyUrn)}`;
    // Remove then add: a set replaces the values whether or not the entity carried the property.
    operations.push({ op: 'remove', path }, { op: 'add', path, value: { propertyUrn, values: values.map((v) => ({ ...v })) } });
  }
  return operations;
}

/** The edit of one entity as an item of the one write path; violations are reported under `path`. */
export function editWriteItem(urn: string, edit: PropertyValueEdit, path: string): WriteItem {
  return { op: 'patch', urn, aspect: VALUES_ASPECT, operations: editOperations(edit), path, patchPath: `${path}/patch`, valuePath: path };
}
