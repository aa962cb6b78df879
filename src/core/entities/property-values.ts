/**
 * The property-value questions (which entities carry values of a structured property, under which
 * definition keys) asked of the adapter's own index when it declares `capabilities.propertyValues`, and
 * otherwise answered here by a scan: every stored `structuredProperties` aspect read through the
 * adapter's generic `scanEntities`, its values keyed exactly as the entity's search document keys them
 * (`propertiesForSearch`), and a filter asked of the search index over the URNs found. The same answers,
 * at the cost of a full read per question: what an adapter brings the part for.
 */
import { scanPages } from '../../adapter/scan-pages';
import type {
  PropertyValueIndex,
  SearchDocumentProperty,
  SearchFilter,
  SeveralValuesRequest,
  SeveralValuesResponse,
  StorageAdapter,
} from '../../adapter/types';
import type { EntityRegistry } from './registry';
import { propertiesForSearch } from './search-document';

const VALUES_ASPECT = 'structuredProperties';
/** Entities read per scan call. */
const PAGE = 500;
/** URNs named per search when a filter is checked over the ones found. */
const URN_CHUNK = 500;

/** The adapter's property-value index when it declares one, else the scan over the stored aspects. */
export function propertyValueIndexOf(adapter: StorageAdapter, registry: EntityRegistry): PropertyValueIndex {
  if (adapter.capabilities.propertyValues) return adapter as StorageAdapter & PropertyValueIndex;
  return createScanPropertyValues(adapter, registry);
}

function createScanPropertyValues(adapter: StorageAdapter, registry: EntityRegistry): PropertyValueIndex {
  /** Entity types that have no search document (tokens, policies...): their values are in no index either. */
  const unsearchable = (entityType: string): boolean =>
    registry.hasEntityType(entityType) && registry.entityType(entityType).searchable === false;

  /** Each entity (URN order, after `afterUrn`) with the values of `propertyUrn` its search document would carry. */
  async function* holders(propertyUrn: string, afterUrn?: string): AsyncGenerator<{ urn: string; entries: SearchDocumentProperty[] }> {
    const request = { requireAspect: VALUES_ASPECT, aspectNames: [VALUES_ASPECT], ...(afterUrn !== undefined ? { afterUrn } : {}) };
    for await (const page of scanPages(adapter, request, PAGE)) {
      for (const entity of page) {
        if (unsearchable(entity.entityType)) continue;
        const entries = propertiesForSearch(entity.aspects[VALUES_ASPECT]).filter((p) => p.propertyUrn === propertyUrn && p.values.length);
        if (entries.length) yield { urn: entity.urn, entries };
      }
    }
  }

  /** The URNs of `urns` whose search document matches `filter` (an OR of AND groups), asked of the search index. */
  async function matching(urns: readonly string[], filter: SearchFilter): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < urns.length; i += URN_CHUNK) {
      const chunk = urns.slice(i, i + URN_CHUNK);
      const named = { field: { kind: 'urn' as const }, operator: 'IN' as const, values: chunk, negated: false };
      const { hits } = await adapter.search({
        entityTypes: [],
        filter: filter.map((group) => [...group, named]),
        includeRemoved: true,
        order: 'urn',
        limit: chunk.length,
      });
      for (const hit of hits) out.add(hit.urn);
    }
    return out;
  }

  return {
    async findEntitiesWithPropertyValues({ propertyUrn, keepDefinitionKey, afterUrn, limit }) {
      const out: string[] = [];
      if (limit <= 0) return out;
      for await (const { urn, entries } of holders(propertyUrn, afterUrn)) {
        if (!entries.some((p) => p.definitionKey !== keepDefinitionKey)) continue;
        out.push(urn);
        if (out.length >= limit) break;
      }
      return out;
    },
    async countEntitiesWithPropertyValues(propertyUrn, definitionKey) {
      let count = 0;
      for await (const { entries } of holders(propertyUrn)) {
        if (definitionKey === undefined || entries.some((p) => p.definitionKey === definitionKey)) count++;
      }
      return count;
    },
    async findEntitiesWithSeveralPropertyValues(request: SeveralValuesRequest): Promise<SeveralValuesResponse> {
      let several: string[] = [];
      for await (const { urn, entries } of holders(request.propertyUrn)) {
        const values = entries.filter((p) => p.definitionKey === request.definitionKey).reduce((n, p) => n + p.values.length, 0);
        if (values > 1) several.push(urn);
      }
      if (request.filter?.length) {
        const kept = await matching(several, request.filter);
        several = several.filter((urn) => kept.has(urn));
      }
      const after = request.afterUrn;
      const urns = several.filter((urn) => after === undefined || urn > after).slice(0, Math.max(0, request.limit));
      return { total: several.length, urns };
    },
  };
}
