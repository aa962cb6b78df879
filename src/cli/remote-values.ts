import { EntityRegistry } from '../core/entities';
import { CatalogError, isCatalogError, type EditValuesSummary, type PropertyValuesEdit, type Violation } from '../index';
import type { CliBackend, EntityScope, ValuesPage } from './backend';
import type { GmsClient } from './http-client';

/** Edits per request: the check pass (dry runs) and the write pass each send the file in requests of this many. */
const EDITS_PER_REQUEST = 500;
const EDIT_ROUTE = '/openapi/v3/structuredProperties/values/batch';
const PROPERTY_FIELD = 'structuredProperties.';

const SCROLL_VALUES = `query scrollValues($input: ScrollAcrossEntitiesInput!) {
  scrollAcrossEntities(input: $input) {
    nextScrollId total
    searchResults { entity { urn structuredProperties { properties {
      structuredProperty { urn }
      values { ... on StringValue { stringValue } ... on NumberValue { numberValue } }
    } } } }
  }
}`;
const AGGREGATE = `query propertiesWithValues($input: AggregateAcrossEntitiesInput!) {
  aggregateAcrossEntities(input: $input) { facets { field } }
}`;

interface ScrollAnswer {
  nextScrollId: string | null;
  total: number;
  searchResults: Array<{
    entity: {
      urn: string;
      structuredProperties: {
        properties: Array<{
          structuredProperty: { urn: string };
          values: Array<{ stringValue?: string; numberValue?: number } | null>;
        }> | null;
      } | null;
    };
  }>;
}

/** GraphQL takes entity types by their `EntityType` names (`DATASET`); the command line also takes entity names (`dataset`). */
const registry = new EntityRegistry();
function graphqlScope(scope: EntityScope): EntityScope {
  if (!scope.types) return scope;
  return { ...scope, types: scope.types.map((t) => (registry.hasEntityType(t) ? registry.graphqlTypeOf(t) : t)) as EntityScope['types'] };
}

/** GraphQL's `PropertyValue` union as the values themselves. */
function valuesOf(values: ReadonlyArray<{ stringValue?: string; numberValue?: number } | null>): Array<string | number> {
  const out: Array<string | number> = [];
  for (const v of values) {
    if (typeof v?.numberValue === 'number') out.push(v.numberValue);
    else if (typeof v?.stringValue === 'string') out.push(v.stringValue);
  }
  return out;
}

/** The value-editing part of the remote backend: GraphQL search and aggregation, the values batch route. */
export function remoteValues(client: GmsClient): Pick<CliBackend, 'propertiesWithValues' | 'scrollValues' | 'editValues'> {
  const send = async (edits: readonly PropertyValuesEdit[], dryRun: boolean): Promise<EditValuesSummary> =>
    (await client.rest('POST', EDIT_ROUTE, { body: { edits, dryRun } })) as EditValuesSummary;
  return {
    async propertiesWithValues(scope) {
      const data = await client.graphql(AGGREGATE, { input: { ...graphqlScope(scope), searchFlags: { maxAggValues: 1 } } });
      const { facets } = data.aggregateAcrossEntities as { facets: Array<{ field: string }> };
      return facets.filter((f) => f.field.startsWith(PROPERTY_FIELD)).map((f) => f.field.slice(PROPERTY_FIELD.length));
    },
    async scrollValues(scope, page): Promise<ValuesPage> {
      const input = { ...graphqlScope(scope), count: page.count, ...(page.scrollId ? { scrollId: page.scrollId } : {}) };
      const answer = (await client.graphql(SCROLL_VALUES, { input })).scrollAcrossEntities as ScrollAnswer;
      return {
        entities: answer.searchResults.map(({ entity }) => ({
          urn: entity.urn,
          properties: (entity.structuredProperties?.properties ?? []).map((p) => ({
            propertyUrn: p.structuredProperty.urn,
            values: valuesOf(p.values),
          })),
        })),
        total: answer.total,
        ...(answer.nextScrollId ? { nextScrollId: answer.nextScrollId } : {}),
      };
    },
    async editValues(edits, { dryRun, onChunk }) {
      // First every request checks its part of the file (a dry run): nothing is written unless the whole file is good.
      const violations: Violation[] = [];
      const checked: EditValuesSummary = { dryRun, entities: 0, changed: 0, unchanged: 0, set: 0, removed: 0 };
      const add = (to: EditValuesSummary, part: EditValuesSummary): void => {
        for (const key of ['entities', 'changed', 'unchanged', 'set', 'removed'] as const) to[key] += part[key];
      };
      for (let start = 0; start < edits.length; start += EDITS_PER_REQUEST) {
        try {
          add(checked, await send(edits.slice(start, start + EDITS_PER_REQUEST), true));
        } catch (error) {
          if (!isCatalogError(error) || error.code !== 'INVALID_INPUT' || !error.details.length) throw error;
          for (const { path, message } of error.details) {
            const shifted = /^\/edits\/(\d+)(.*)$/.exec(path);
            violations.push({ path: shifted ? `/${start + Number(shifted[1])}${shifted[2]}` : path, message });
          }
        }
      }
      if (violations.length) throw new CatalogError('INVALID_INPUT', 'invalid structured property value edits', { details: violations });
      if (dryRun) return checked;
      const written: EditValuesSummary = { dryRun, entities: 0, changed: 0, unchanged: 0, set: 0, removed: 0 };
      for (let start = 0; start < edits.length; start += EDITS_PER_REQUEST) {
        const part = edits.slice(start, start + EDITS_PER_REQUEST);
        try {
          add(written, await send(part, false));
        } catch (error) {
          if (!isCatalogError(error) || start === 0) throw error;
          throw new CatalogError(error.code, `${error.message} (the ${start} entities before were written)`, {
            details: error.details,
            cause: error,
          });
        }
        onChunk?.(start + part.length, edits.length);
      }
      return written;
    },
  };
}
