import type { JsonObject } from '../../../adapter/types';
import { facetFilterSchema } from '../../search/filters';

/**
 * JSON schemas of the GraphQL inputs of scrollAcrossEntities, searchAcrossEntities and
 * aggregateAcrossEntities (nulls accepted where GraphQL sends them). They check structure and JSON
 * types; search-input.ts checks the meaning (entity types, fields, typed values).
 */

const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: 'null' }] });
const strings: JsonObject = { type: 'array', items: { type: 'string' } };

/** Unknown flags of the established platform (skipCache, fulltext, ...) are accepted and ignored. */
const searchFlags: JsonObject = {
  type: 'object',
  properties: {
    includeSoftDeleted: nullable({ type: 'boolean' }),
    maxAggValues: nullable({ type: 'integer', minimum: 0, maximum: 10_000 }),
  },
};

const orFilters: JsonObject = {
  type: 'array',
  items: {
    type: 'object',
    properties: { and: nullable({ type: 'array', items: facetFilterSchema }) },
    additionalProperties: false,
  },
};

const scope: Record<string, JsonObject> = {
  types: nullable(strings),
  query: nullable({ type: 'string' }),
  orFilters: nullable(orFilters),
  /** Deprecated in the established platform: one AND group. */
  filters: nullable({ type: 'array', items: facetFilterSchema }),
  searchFlags: nullable(searchFlags),
};

const count: JsonObject = nullable({ type: 'integer', minimum: 0, maximum: 10_000 });

export const scrollInputSchema: JsonObject = {
  type: 'object',
  properties: { ...scope, count, scrollId: nullable({ type: 'string' }), keepAlive: nullable({ type: 'string' }) },
  additionalProperties: false,
};

export const searchInputSchema: JsonObject = {
  type: 'object',
  properties: { ...scope, count, start: nullable({ type: 'integer', minimum: 0 }) },
  additionalProperties: false,
};

export const aggregateInputSchema: JsonObject = {
  type: 'object',
  properties: { ...scope, facets: nullable({ type: 'array', items: nullable({ type: 'string' }) }) },
  additionalProperties: false,
};
