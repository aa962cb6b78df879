/**
 * Optional part of the adapter contract: the property-value index. Three questions about which
 * entities' search documents carry values of one structured property (under which definition keys),
 * asked by the clean-up of hard-deleted and superseded values, by the impact preview of a definition
 * change and by the facet list of the aggregation. An adapter that answers them from its own indexes
 * brings this part and declares `capabilities.propertyValues`; without it the domain answers them
 * itself by scanning the stored `structuredProperties` aspects (slower, the same answers).
 *
 * - Not found: an unknown property or key answers no URNs and a count of 0. Never an error.
 * - Atomic: every answer is read from one committed state.
 * - Order: URNs ascending by code units.
 */
import type { SearchFilter } from './search-index';

/** The property-value index part. */
export interface PropertyValueIndex {
  /**
   * URNs (ascending, after `afterUrn`) of entities whose search document carries values of the property
   * under any definition key other than `keepDefinitionKey` (all keys when it is undefined). Soft-deleted
   * entities are included. Used by the background clean-up of hard-deleted and superseded values.
   */
  findEntitiesWithPropertyValues(request: {
    propertyUrn: string;
    keepDefinitionKey?: string;
    afterUrn?: string;
    limit: number;
  }): Promise<string[]>;
  /** Number of entities whose search document carries values of the property (any key, removed or not). */
  countEntitiesWithPropertyValues(propertyUrn: string, definitionKey?: string): Promise<number>;
  /**
   * Entities whose search document carries more than one value of the property under exactly this
   * definition key (soft-deleted entities included): `total` counts them all, `urns` lists at most
   * `limit` of them (ascending, after `afterUrn`; `total` ignores `afterUrn`). An unknown property or
   * key answers `{ total: 0, urns: [] }`. With `filter`, only those whose document also matches it
   * (as a search filter over every entity type, soft-deleted ones included) are counted and listed.
   * Used to preview a change of a property to a single value, alone and together with other rules.
   */
  findEntitiesWithSeveralPropertyValues(request: SeveralValuesRequest): Promise<SeveralValuesResponse>;
}

export interface SeveralValuesRequest {
  propertyUrn: string;
  definitionKey: string;
  afterUrn?: string;
  limit: number;
  /**
   * Only entities whose search document also matches this filter (an OR of AND groups, as in
   * `SearchScope.filter`); undefined or empty restricts nothing.
   */
  filter?: SearchFilter;
}

export interface SeveralValuesResponse {
  total: number;
  urns: string[];
}
