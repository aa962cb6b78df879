import type { Actor } from '../access/actor';
import type { CatalogContext } from '../context';
import { CatalogError } from '../../errors';
import { NO_DEFINITION_KEY } from './definition-key';
import type { DefinitionCache, DefinitionInfo } from './lookup';
import { softDeletedMessage } from './messages';
import { STRUCTURED_PROPERTY_ENTITY, type FilterFieldSource, type ResolvedPropertyField } from './types';
import { knownUrnProblem } from '../urn';

/** A property without a definition: a key no value is ever written under, so nothing matches. */
function absentFilterField(urn: string): ResolvedPropertyField {
  return { propertyUrn: urn, definitionKey: NO_DEFINITION_KEY, valueKind: 'string', valueType: 'string' };
}

function filterFieldOf(info: DefinitionInfo): ResolvedPropertyField {
  return {
    propertyUrn: info.urn,
    definitionKey: info.key,
    valueKind: info.valueType === 'number' ? 'number' : 'string',
    valueType: info.valueType,
  };
}

/**
 * What a search filter or facet `structuredProperties.<qualifiedName>` means: unknown and soft-deleted
 * properties are INVALID_INPUT naming the property.
 */
export async function resolveFilterField(
  ctx: CatalogContext,
  cache: DefinitionCache,
  actor: Actor,
  qualifiedName: string,
): Promise<ResolvedPropertyField> {
  await ctx.authenticate(actor);
  const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
  const path = `structuredProperties.${qualifiedName}`;
  const info = knownUrnProblem(urn) ? undefined : await cache.one(urn);
  if (!info) {
    const message = `unknown structured property "${qualifiedName}"`;
    throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
  }
  if (info.removed) {
    const message = softDeletedMessage(urn, 'filtering on it');
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path, message }] });
  }
  return filterFieldOf(info);
}

/** The properties domain's read function for search: what `structuredProperties.<qualifiedName>` means, from the readers' cache. */
export function filterFieldSource(ctx: CatalogContext, cache: DefinitionCache): FilterFieldSource {
  return {
    /**
     * What a search filter or facet `structuredProperties.<qualifiedName>` means, as the search service
     * sees it: a property without a definition (hard-deleted, or never created) resolves to a field that
     * no value matches; a soft-deleted one is INVALID_INPUT naming it; a name that cannot be a property
     * URN is INVALID_INPUT too.
     */
    async resolve(actor: Actor, qualifiedName: string): Promise<ResolvedPropertyField> {
      await ctx.authenticate(actor);
      const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
      const path = `structuredProperties.${qualifiedName}`;
      const problem = knownUrnProblem(urn);
      if (problem !== undefined) {
        const message = `"${qualifiedName}" cannot name a structured property: ${problem}`;
        throw new CatalogError('INVALID_INPUT', `${path}: ${message}`, { details: [{ path, message }] });
      }
      const info = await cache.one(urn);
      if (!info) return absentFilterField(urn);
      if (info.removed) {
        const message = softDeletedMessage(urn, 'filtering on it');
        throw new CatalogError('INVALID_INPUT', message, { details: [{ path, message }] });
      }
      return filterFieldOf(info);
    },

    /**
     * `resolveSearchField` from the definitions cached for readers, without reading or asking for the
     * change token: undefined when the property is not cached or soft-deleted (the full resolution then
     * says why). Valid as of the cache's `currentToken`.
     */
    cached(qualifiedName: string): ResolvedPropertyField | undefined {
      const urn = `urn:li:${STRUCTURED_PROPERTY_ENTITY}:${qualifiedName}`;
      const info = cache.peek(urn);
      if (info === null) return absentFilterField(urn);
      return info && !info.removed ? filterFieldOf(info) : undefined;
    },
    cachedToken: () => cache.currentToken,
  };
}
