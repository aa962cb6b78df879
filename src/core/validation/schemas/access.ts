import type { JsonObject } from '../../../adapter/types';
import { PRIVILEGES } from '../../access/privileges';
import { ACCESS_TOKEN_DURATIONS, ACCESS_TOKEN_TYPES } from '../../tokens/model';

/**
 * JSON schemas of the inputs of the token and policy APIs. Optional fields accept `null` because
 * GraphQL clients send it for "not given". Semantic checks (URNs, self filters) follow in the services.
 */
/** Blank names (only white space) are refused by `checkNotBlank`, with a readable message. */
const name: JsonObject = { type: 'string', minLength: 1, maxLength: 1024 };
const description: JsonObject = { type: ['string', 'null'], maxLength: 65536 };

export const createAccessTokenSchema: JsonObject = {
  type: 'object',
  properties: {
    type: { enum: [...ACCESS_TOKEN_TYPES] },
    actorUrn: { type: 'string' },
    duration: { enum: [...ACCESS_TOKEN_DURATIONS] },
    name,
    description,
    privileges: { type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems: 64, uniqueItems: true },
  },
  required: ['type', 'actorUrn', 'duration', 'name'],
  additionalProperties: false,
};

/** The filters are checked by `checkFacetFilters`, which gives paths per filter. */
export const listInputSchema = (maxCount: number): JsonObject => ({
  type: 'object',
  properties: {
    start: { type: ['integer', 'null'], minimum: 0 },
    count: { type: ['integer', 'null'], minimum: 0, maximum: maxCount },
    filters: {},
  },
  additionalProperties: false,
});

const stringList: JsonObject = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 2048 }, maxItems: 1000 };

/** A policy's resources, as the platform's DataHubPolicyInfo spells them, plus `properties`. */
const policyResources: JsonObject = {
  type: ['object', 'null'],
  properties: {
    type: { type: ['string', 'null'], minLength: 1 },
    resources: { ...stringList, type: ['array', 'null'] },
    allResources: { type: ['boolean', 'null'] },
    filter: {
      type: ['object', 'null'],
      properties: {
        criteria: {
          type: 'array',
          maxItems: 64,
          items: {
            type: 'object',
            properties: {
              field: { type: 'string', minLength: 1, maxLength: 1024 },
              condition: { enum: ['EQUALS', 'STARTS_WITH', 'NOT_EQUALS', null] },
              values: { ...stringList, minItems: 1 },
            },
            required: ['field', 'values'],
            additionalProperties: false,
          },
        },
      },
      required: ['criteria'],
      additionalProperties: false,
    },
    properties: { ...stringList, type: ['array', 'null'] },
  },
  additionalProperties: false,
};

const policyFields: Record<string, JsonObject> = {
  type: { enum: ['PLATFORM', 'METADATA'] },
  resources: policyResources,
  name,
  description,
  state: { enum: ['ACTIVE', 'INACTIVE'] },
  privileges: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...PRIVILEGES] } },
  actors: {
    type: 'object',
    properties: {
      users: { type: ['array', 'null'], items: { type: 'string' } },
      allUsers: { type: ['boolean', 'null'] },
    },
    additionalProperties: false,
  },
};

export const createPolicySchema: JsonObject = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' }, ...policyFields },
  required: ['name', 'privileges', 'actors'],
  additionalProperties: false,
};

export const updatePolicySchema: JsonObject = {
  type: 'object',
  properties: policyFields,
  additionalProperties: false,
};

/** A violation for a non-empty name that is only white space (the schema catches the empty one). */
export function checkNotBlank(value: unknown, path: string, violations: Array<{ path: string; message: string }>): void {
  if (typeof value === 'string' && value.length > 0 && value.trim() === '') violations.push({ path, message: 'must not be blank' });
}
