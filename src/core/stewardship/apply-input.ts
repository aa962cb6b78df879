import type { JsonObject } from '../../adapter/types';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';
import type { Actor } from '../access/actor';
import type { PropertyValueEdit } from '../properties/value-edits';
import type { PropertyValue } from '../properties/types';
import type { StructuredPropertyService } from '../properties/service';
import type { SearchScopeInput } from '../search/input';
import { checkSchema } from '../validation';
import type { EntityRegistry } from '../entities/registry';
import type { EntityTypeName } from '../entities/aspect-types';
import { VALUES_ASPECT } from '../properties/types';
import type { ApplyOptions, ApplyToMatchesInput } from './apply-types';

const DEFAULT_CHUNK_SIZE = 500;
const MAX_CHUNK_SIZE = 10_000;
const PROPERTY_URN_PREFIX = 'urn:li:structuredProperty:';

const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: 'null' }] });
const propertyValue: JsonObject = {
  oneOf: [
    { type: 'object', properties: { string: { type: 'string' } }, required: ['string'], additionalProperties: false },
    { type: 'object', properties: { double: { type: 'number' } }, required: ['double'], additionalProperties: false },
  ],
};
export const applyInputSchema: JsonObject = {
  type: 'object',
  properties: {
    types: nullable({ type: 'array', items: { type: 'string' } }),
    query: nullable({ type: 'string' }),
    // Checked by the search itself, with the same paths.
    orFilters: nullable({ type: 'array' }),
    set: nullable({
      type: 'array',
      items: {
        type: 'object',
        properties: { propertyUrn: { type: 'string', minLength: 1 }, values: { type: 'array', items: propertyValue } },
        required: ['propertyUrn', 'values'],
        additionalProperties: false,
      },
    }),
    remove: nullable({ type: 'array', items: { type: 'string', minLength: 1 } }),
  },
  additionalProperties: false,
};

/** The checked input: the search scope, the edit with property URNs, and the chunk size. */
export interface CheckedApply {
  scope: SearchScopeInput;
  edit: { set: ReadonlyArray<{ propertyUrn: string; values: readonly PropertyValue[] }>; remove: readonly string[] } & PropertyValueEdit;
  chunkSize: number;
}

/**
 * Checks the shape of the input and resolves each property named by its qualified name to its URN.
 * INVALID_INPUT listing every problem with its path.
 */
export async function checkApplyInput(
  registry: EntityRegistry,
  properties: StructuredPropertyService,
  actor: Actor,
  input: ApplyToMatchesInput,
  options: ApplyOptions,
): Promise<CheckedApply> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new CatalogError('INVALID_INPUT', 'applyToMatches: the input must be an object', {
      details: [{ path: '/', message: 'must be an object' }],
    });
  const violations: Violation[] = checkSchema(applyInputSchema, input);
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK_SIZE)
    violations.push({ path: '/options/chunkSize', message: `must be an integer from 1 to ${MAX_CHUNK_SIZE}` });
  throwIfViolations(violations, 'invalid applyToMatches input');
  const set = input.set ?? [];
  const remove = input.remove ?? [];
  if (set.length === 0 && remove.length === 0) violations.push({ path: '/set', message: 'set or remove must name at least one property' });
  const resolve = async (name: string): Promise<string> =>
    name.startsWith(PROPERTY_URN_PREFIX) ? name : (await properties.resolveFilterField(actor, name)).propertyUrn;
  const setOut: Array<{ propertyUrn: string; values: readonly PropertyValue[] }> = [];
  const removeOut: string[] = [];
  const seen = new Map<string, string>();
  const note = (urn: string, path: string) => {
    const earlier = seen.get(urn);
    if (earlier) violations.push({ path, message: `${urn} is named already at ${earlier}; name each property once` });
    else seen.set(urn, path);
  };
  for (const [i, entry] of set.entries()) {
    const propertyUrn = await resolveOrReport(resolve, entry.propertyUrn, `/set/${i}/propertyUrn`, violations);
    if (propertyUrn === undefined) continue;
    note(propertyUrn, `/set/${i}/propertyUrn`);
    setOut.push({ propertyUrn, values: entry.values });
  }
  for (const [i, name] of remove.entries()) {
    const propertyUrn = await resolveOrReport(resolve, name, `/remove/${i}`, violations);
    if (propertyUrn === undefined) continue;
    note(propertyUrn, `/remove/${i}`);
    removeOut.push(propertyUrn);
  }
  const types = carryingTypes(registry, input.types ?? [], violations);
  throwIfViolations(violations, 'invalid applyToMatches input');
  const scope: SearchScopeInput = {
    types,
    ...(input.query != null ? { query: input.query } : {}),
    ...(input.orFilters != null ? { orFilters: input.orFilters } : {}),
  };
  return { scope, edit: { set: setOut, remove: removeOut }, chunkSize };
}

/**
 * The entity types to search: those asked for, or every type that carries structured properties (the
 * definitions themselves do not). Each type as the search takes it (GraphQL names and entity names both).
 */
function carryingTypes(registry: EntityRegistry, asked: readonly string[], violations: Violation[]): EntityTypeName[] {
  const carries = (name: string) => registry.entityType(name).aspects.includes(VALUES_ASPECT);
  if (asked.length === 0)
    return registry.entityTypeNames().filter((name) => carries(name) && registry.entityType(name).searchable !== false) as EntityTypeName[];
  asked.forEach((type, i) => {
    const name = registry.hasEntityType(type) ? type : registry.entityNameFromGraphqlType(type);
    if (name !== undefined && !carries(name))
      violations.push({ path: `/types/${i}`, message: `${type} entities carry no structured properties` });
  });
  return [...asked] as EntityTypeName[];
}

async function resolveOrReport(
  resolve: (name: string) => Promise<string>,
  name: string,
  path: string,
  violations: Violation[],
): Promise<string | undefined> {
  try {
    return await resolve(name);
  } catch (error) {
    if (!(error instanceof CatalogError) || error.code !== 'INVALID_INPUT') throw error;
    violations.push({ path, message: `${name}: ${error.details[0]?.message ?? error.message}` });
    return undefined;
  }
}
