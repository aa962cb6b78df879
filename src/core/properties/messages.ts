import { CatalogError, type Violation } from '../../errors';
import { STRUCTURED_PROPERTY_ENTITY } from './types';
import { entityTypeOf, knownUrnProblem } from '../urn';

/** Why a text is not a `urn:li:structuredProperty:<id>` URN (undefined when it is one). */
export function propertyUrnProblem(urn: unknown): string | undefined {
  // Property URNs repeat on every entity of a bulk write: a well-formed one is checked once.
  const problem = knownUrnProblem(urn);
  if (problem) return problem;
  return entityTypeOf(urn as string) === STRUCTURED_PROPERTY_ENTITY ? undefined : `"${String(urn)}" is not a structured property URN`;
}

/** INVALID_INPUT unless the text is a structured property URN. */
export function requirePropertyUrn(urn: unknown, path = '/urn'): string {
  const message = propertyUrnProblem(urn);
  if (message) throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
  return urn as string;
}

/** The refusal of anything but reading, restoring and hard-deleting a soft-deleted property; names the property. */
export function softDeletedMessage(urn: string, action: string): string {
  return `structured property ${urn} is soft-deleted: ${action} is refused until it is restored`;
}

/**
 * CONFLICT listing every way a definition change collides with the stored definition (a breaking
 * change without a greater version, a version older than the stored one).
 */
export function throwIfConflicts(conflicts: readonly Violation[], summary: string): void {
  if (conflicts.length === 0) return;
  const listed = conflicts.map((c) => `${c.path}: ${c.message}`).join('; ');
  throw new CatalogError('CONFLICT', `${summary}: ${listed}`, { details: conflicts });
}
