import type { Violation } from '../../errors';
import { formatValue, fromPropertyValue, type DraftPaths } from './definition-rules';
import type { AllowedValue, StructuredPropertyDefinition } from './types';

/**
 * Changes to a stored definition: whether anything changed, which version an update ends up with, and
 * which changes are breaking (they could invalidate values already written, so they need a greater
 * version).
 */

/** The same definition with its members in the stored order (so that equal definitions serialize alike). */
export function canonicalDefinition(d: StructuredPropertyDefinition): StructuredPropertyDefinition {
  return {
    qualifiedName: d.qualifiedName,
    ...(d.displayName !== undefined ? { displayName: d.displayName } : {}),
    ...(d.description !== undefined ? { description: d.description } : {}),
    valueType: d.valueType,
    ...(d.typeQualifier ? { typeQualifier: { allowedTypes: [...d.typeQualifier.allowedTypes] } } : {}),
    ...(d.allowedValues
      ? {
          allowedValues: d.allowedValues.map((a) => ({
            value: a.value,
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
        }
      : {}),
    cardinality: d.cardinality,
    entityTypes: [...d.entityTypes],
    immutable: d.immutable,
    ...(d.version !== undefined ? { version: d.version } : {}),
    ...(d.created ? { created: d.created } : {}),
    ...(d.lastModified ? { lastModified: d.lastModified } : {}),
  };
}

/** The definition without its stamps, in the canonical order, for "did anything change". */
export function definitionContent(definition: StructuredPropertyDefinition): string {
  const { created: _created, lastModified: _lastModified, ...rest } = canonicalDefinition(definition);
  return JSON.stringify(rest);
}

/**
 * Decides the version of an update: a version left out keeps the stored one; the same version is no
 * bump; a greater one (or any, when none was stored) is a bump; an older one is refused.
 */
export function resolveVersion(
  stored: string | undefined,
  given: string | undefined,
  path: string,
  violations: Violation[],
): { version: string | undefined; bumped: boolean } {
  if (given === undefined || given === stored) return { version: stored, bumped: false };
  if (stored !== undefined && given < stored) {
    violations.push({ path, message: `version ${given} is older than the stored version ${stored}; a new version must be greater` });
    return { version: stored, bumped: false };
  }
  return { version: given, bumped: true };
}

const valueKey = (v: AllowedValue): string => formatValue(fromPropertyValue(v.value));

/** Every change from `stored` to `next` that could invalidate values already written. */
export function breakingChanges(stored: StructuredPropertyDefinition, next: StructuredPropertyDefinition, paths: DraftPaths): Violation[] {
  const out: Violation[] = [];
  if (stored.valueType !== next.valueType) {
    out.push({ path: paths.valueType, message: `changing the value type from ${stored.valueType} to ${next.valueType}` });
  }
  if (stored.cardinality === 'MULTIPLE' && next.cardinality === 'SINGLE') {
    out.push({ path: paths.cardinality, message: 'changing the cardinality from MULTIPLE to SINGLE' });
  }
  if (next.allowedValues) {
    if (!stored.allowedValues) {
      out.push({ path: paths.allowedValues, message: 'restricting a property that accepted any value to a list of allowed values' });
    } else {
      const kept = new Set(next.allowedValues.map(valueKey));
      const removed = stored.allowedValues.map(valueKey).filter((k) => !kept.has(k));
      if (removed.length) out.push({ path: paths.allowedValues, message: `removing the allowed value(s) ${removed.join(', ')}` });
    }
  }
  const nextTypes = next.typeQualifier?.allowedTypes;
  const storedTypes = stored.typeQualifier?.allowedTypes;
  if (nextTypes) {
    if (!storedTypes) out.push({ path: paths.allowedTypes, message: 'restricting a URN property that accepted any entity type' });
    else {
      const removed = storedTypes.filter((t) => !nextTypes.includes(t));
      if (removed.length) out.push({ path: paths.allowedTypes, message: `removing the allowed type(s) ${removed.join(', ')}` });
    }
  }
  const removedEntityTypes = stored.entityTypes.filter((t) => !next.entityTypes.includes(t));
  if (removedEntityTypes.length)
    out.push({ path: paths.entityTypes, message: `removing the entity type(s) ${removedEntityTypes.join(', ')}` });
  return out;
}

/** Turns breaking changes into violations that say how to apply them. */
export function refuseBreakingChanges(changes: readonly Violation[], storedVersion: string | undefined, urn: string): Violation[] {
  const hint = storedVersion
    ? `give a version greater than ${storedVersion} (yyyyMMddhhmmss) to apply it`
    : 'give a version (yyyyMMddhhmmss) to apply it';
  return changes.map((c) => ({ path: c.path, message: `${c.message} is a breaking change to ${urn}; ${hint}` }));
}
