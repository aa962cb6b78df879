import { randomUUID } from 'node:crypto';
import type { JsonObject, StoredAspect } from '../../adapter/types';

/**
 * The definition key names the definition that values were written under: the incarnation of the
 * property entity (random, new when the URN is created again after a hard delete) and its version.
 * A reader or a search filter only honours values whose key equals the current definition's key,
 * which hides values of a superseded version or of a hard-deleted definition at once, before their
 * background clean-up has run.
 */

/** Where the incarnation id lives in the `propertyDefinition` aspect's system metadata. */
const INCARNATION_METADATA = 'incarnation';

export function newIncarnation(): string {
  return randomUUID();
}

/**
 * The key a search uses for a property that has no definition (hard-deleted or never created): every
 * real key holds a colon and a value without a key is indexed under '', so no value matches it.
 */
export const NO_DEFINITION_KEY = 'none';

/** `${incarnation}:${version ?? ''}`. */
export function definitionKey(incarnation: string, version: string | undefined): string {
  return `${incarnation}:${version ?? ''}`;
}

/** The incarnation stored beside a definition aspect ('' when absent, which matches no value). */
export function incarnationOf(aspect: Pick<StoredAspect, 'systemMetadata'> | undefined): string {
  const value = aspect?.systemMetadata?.[INCARNATION_METADATA];
  return typeof value === 'string' ? value : '';
}

/**
 * The definition key of a stored `propertyDefinition` aspect, or undefined when there is none (the
 * property does not exist or was hard-deleted: no value matches).
 */
export function definitionKeyOf(aspect: Pick<StoredAspect, 'value' | 'systemMetadata'> | undefined): string | undefined {
  if (!aspect) return undefined;
  const version = aspect.value.version;
  return definitionKey(incarnationOf(aspect), typeof version === 'string' ? version : undefined);
}

/** True when a key was written under the given incarnation (any version). */
export function keyBelongsTo(key: string, incarnation: string): boolean {
  return incarnation !== '' && key.startsWith(`${incarnation}:`);
}

export function incarnationMetadata(incarnation: string): JsonObject {
  return { [INCARNATION_METADATA]: incarnation };
}
