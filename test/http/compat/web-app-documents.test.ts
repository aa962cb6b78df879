import { parse, validate } from 'graphql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGraphQLSchema } from '../../../src/graphql/index';
import { ADAPTERS, ADMIN, openHarness, type CompatHarness } from './harness';

/*
 * Documents of DataHub's web app (datahub-project/datahub, datahub-web-react/src/graphql/).
 *
 * - The operations are copied from structuredProperties.graphql (commit da266cb).
 * - structuredPropertyFields and structuredPropertiesFields are the fragments of fragments.graphql
 *   (commit 0155080), with the fields the later web app selects on a property added as DataHub's schema
 *   names them (datahub-graphql-core/src/main/resources/properties.graphql): `exists`,
 *   `definition.filterStatus` and `settings { ... }`.
 * - facetFields and searchResults are the fragments of search.graphql (commit 1ac0f0e), with the facet's
 *   own `entity` (search.graphql of the GraphQL schema) selected too.
 *
 * Inline fragments on types this catalog does not model (Tag, Domain, GlossaryNode, DataPlatformInstance,
 * ML types, ...) and their fields are left out of entityDisplayNameFields and facetFields; `insights` of a
 * search result likewise. Everything else is as the web app sends it.
 */
const FRAGMENTS = `
fragment entityDisplayNameFields on Entity {
    urn
    type
    ... on CorpUser {
        username
    }
}

fragment structuredPropertyFields on StructuredPropertyEntity {
    urn
    type
    exists
    definition {
        displayName
        qualifiedName
        description
        cardinality
        filterStatus
        valueType {
            info {
                type
                displayName
            }
        }
        entityTypes {
            info {
                type
            }
        }
        cardinality
        typeQualifier {
            allowedTypes {
                urn
                type
                info {
                    type
                    displayName
                }
            }
        }
        allowedValues {
            value {
                ... on StringValue {
                    stringValue
                }
                ... on NumberValue {
                    numberValue
                }
            }
            description
        }
    }
    settings {
        isHidden
        showInSearchFilters
        showAsAssetBadge
        showInAssetSummary
        showInColumnsTable
    }
}

fragment structuredPropertiesFields on StructuredPropertiesEntry {
    structuredProperty {
        ...structuredPropertyFields
    }
    values {
        ... on StringValue {
            stringValue
        }
        ... on NumberValue {
            numberValue
        }
    }
    valueEntities {
        urn
        type
        ...entityDisplayNameFields
    }
}

fragment facetFields on FacetMetadata {
    field
    displayName
    entity {
        urn
        type
        ... on StructuredPropertyEntity {
            ...structuredPropertyFields
        }
    }
    aggregations {
        value
        count
        entity {
            urn
            type
            ... on CorpUser {
                username
            }
        }
    }
}

fragment searchResults on SearchResults {
    start
    count
    total
    searchResults {
        entity {
            urn
            type
        }
        matchedFields {
            name
            value
        }
    }
    facets {
        ...facetFields
    }
}
`;

const OPERATIONS = `
query getStructuredProperty($urn: String!) {
    entity(urn: $urn) {
        urn
        type
        ... on StructuredPropertyEntity {
            urn
            type
            definition {
                qualifiedName
                displayName
                description
                cardinality
                entityTypes {
                    urn
                    type
                    info {
                        type
                    }
                }
                valueType {
                    urn
                    type
                    info {
                        type
                        qualifiedName
                        displayName
                        description
                    }
                }
                allowedValues {
                    value {
                        ... on StringValue {
                            stringValue
                        }
                        ... on NumberValue {
                            numberValue
                        }
                    }
                    description
                }
                typeQualifier {
                    allowedTypes {
                        urn
                        type
                        info {
                            type
                        }
                    }
                }
            }
        }
    }
}

query searchStructuredProperties($query: String!, $start: Int!, $count: Int!) {
    searchAcrossEntities(input: { query: $query, types: [STRUCTURED_PROPERTY], start: $start, count: $count }) {
        start
        count
        total
        searchResults {
            entity {
                ... on StructuredPropertyEntity {
                    urn
                    type
                    definition {
                        qualifiedName
                        displayName
                        description
                        cardinality
                    }
                }
            }
        }
    }
}

mutation upsertStructuredProperties($input: UpsertStructuredPropertiesInput!) {
    upsertStructuredProperties(input: $input) {
        properties {
            ...structuredPropertiesFields
        }
    }
}

mutation removeStructuredProperties($input: RemoveStructuredPropertiesInput!) {
    removeStructuredProperties(input: $input) {
        properties {
            ...structuredPropertiesFields
        }
    }
}

mutation createStructuredProperty($input: CreateStructuredPropertyInput!) {
    createStructuredProperty(input: $input) {
        ...structuredPropertyFields
    }
}

mutation updateStructuredProperty($input: UpdateStructuredPropertyInput!) {
    updateStructuredProperty(input: $input) {
        ...structuredPropertyFields
    }
}

mutation deleteStructuredProperty($input: DeleteStructuredPropertyInput!) {
    deleteStructuredProperty(input: $input)
}

query getSearchResultsForMultiple($input: SearchAcrossEntitiesInput!) {
    searchAcrossEntities(input: $input) {
        ...searchResults
    }
}
`;

const DOCUMENT = `${OPERATIONS}\n${FRAGMENTS}`;
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';
const OWNER = 'urn:li:corpuser:alice';

describe.each(ADAPTERS)('DataHub web app documents (%s)', (kind) => {
  let h: CompatHarness;
  beforeEach(async () => {
    h = await openHarness(kind);
  });
  afterEach(() => h.close());

  const run = async (operationName: string, variables: Record<string, unknown>) => {
    const answer = await h.graphql(DOCUMENT, variables, operationName);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    // The envelope's extensions member, as DataHub's server answers it.
    expect(answer.extensions).toEqual({});
    return answer.data;
  };

  it('every document validates against the schema', () => {
    expect(validate(createGraphQLSchema(h.catalog), parse(DOCUMENT))).toEqual([]);
  });

  it('creates a property with settings as the web app sends them, reads them back, updates them, and refuses a hidden property that is shown', async () => {
    // The input the web app's create drawer sends (settings included).
    const created = await run('createStructuredProperty', {
      input: {
        qualifiedName: 'io.acryl.privacy.retention',
        displayName: 'Retention',
        description: 'How long the data is kept',
        valueType: 'urn:li:dataType:datahub.string',
        cardinality: 'SINGLE',
        entityTypes: ['urn:li:entityType:datahub.dataset'],
        allowedValues: [{ stringValue: '30d', description: 'a month' }, { stringValue: '1y' }],
        settings: {
          isHidden: false,
          showInSearchFilters: true,
          showAsAssetBadge: false,
          showInAssetSummary: true,
          showInColumnsTable: false,
        },
      },
    });
    const property = created.createStructuredProperty;
    expect(property).toMatchObject({
      urn: 'urn:li:structuredProperty:io.acryl.privacy.retention',
      type: 'STRUCTURED_PROPERTY',
      exists: true,
      definition: { qualifiedName: 'io.acryl.privacy.retention', filterStatus: 'ENABLED', valueType: { info: { type: 'STRING' } } },
      settings: {
        isHidden: false,
        showInSearchFilters: true,
        showAsAssetBadge: false,
        showInAssetSummary: true,
        showInColumnsTable: false,
      },
    });
    const updated = await run('updateStructuredProperty', { input: { urn: property.urn, settings: { showAsAssetBadge: true } } });
    expect(updated.updateStructuredProperty.settings).toEqual({
      isHidden: false,
      showInSearchFilters: true,
      showAsAssetBadge: true,
      showInAssetSummary: true,
      showInColumnsTable: false,
    });

    // DataHub's rules: a hidden property is shown nowhere; one property at most is a badge.
    const hidden = await h.graphql(DOCUMENT, { input: { urn: property.urn, settings: { isHidden: true } } }, 'updateStructuredProperty');
    expect(hidden.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
    expect(hidden.errors?.[0]?.message).not.toMatch(/datahub/i);
    const second = await h.graphql(
      DOCUMENT,
      { input: { qualifiedName: 'io.acryl.badge', valueType: 'string', entityTypes: ['dataset'], settings: { showAsAssetBadge: true } } },
      'createStructuredProperty',
    );
    expect(second.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
    const fine = await run('updateStructuredProperty', {
      input: {
        urn: property.urn,
        settings: { isHidden: true, showInSearchFilters: false, showAsAssetBadge: false, showInAssetSummary: false },
      },
    });
    expect(fine.updateStructuredProperty.settings.isHidden).toBe(true);
    // The flags are true/false search fields of the property (the web app filters its list on them).
    const hiddenOnes = await h.catalog.search.scroll(ADMIN, {
      types: ['STRUCTURED_PROPERTY'],
      orFilters: [{ and: [{ field: 'isHidden', values: ['true'] }] }],
    });
    expect(hiddenOnes.searchResults.map((r) => r.entity.urn)).toEqual([property.urn]);

    const read = await run('getStructuredProperty', { urn: property.urn });
    expect(read.entity.definition.allowedValues).toEqual([
      { value: { stringValue: '30d' }, description: 'a month' },
      { value: { stringValue: '1y' }, description: null },
    ]);
    const listed = await run('searchStructuredProperties', { query: '*', start: 0, count: 10 });
    expect(listed.searchAcrossEntities.searchResults.map((r: { entity: { urn: string } }) => r.entity.urn)).toEqual([property.urn]);
  });

  it('assigns and removes values; facets carry their entities; a soft-deleted property is DISABLED, a hard-deleted one leaves its facet empty', async () => {
    await h.catalog.entities.upsertAspect(ADMIN, OWNER, 'corpUserInfo', { displayName: 'Alice' });
    for (const [qualifiedName, valueType] of [
      ['io.acryl.tier', 'urn:li:dataType:datahub.string'],
      ['io.acryl.steward', 'urn:li:dataType:datahub.urn'],
    ]) {
      await run('createStructuredProperty', { input: { qualifiedName, valueType, entityTypes: ['urn:li:entityType:datahub.dataset'] } });
    }
    await h.catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'orders' });
    const upserted = await run('upsertStructuredProperties', {
      input: {
        assetUrn: DATASET,
        structuredPropertyInputParams: [
          { structuredPropertyUrn: 'urn:li:structuredProperty:io.acryl.tier', values: [{ stringValue: 'gold' }] },
          { structuredPropertyUrn: 'urn:li:structuredProperty:io.acryl.steward', values: [{ stringValue: OWNER }] },
        ],
      },
    });
    const steward = upserted.upsertStructuredProperties.properties.find((p: { structuredProperty: { urn: string } }) =>
      p.structuredProperty.urn.endsWith('steward'),
    );
    expect(steward.valueEntities).toEqual([{ urn: OWNER, type: 'CORP_USER', username: 'alice' }]);
    expect(steward.structuredProperty.exists).toBe(true);

    // The default facets: the entity type and every property with values.
    const search = () =>
      run('getSearchResultsForMultiple', { input: { types: ['DATASET'], query: '*', start: 0, count: 10 } }).then(
        (d) => d.searchAcrossEntities,
      );
    const page = await search();
    expect(page.searchResults.map((r: { entity: { urn: string } }) => r.entity.urn)).toEqual([DATASET]);
    const facetsByField = Object.fromEntries(page.facets.map((f: { field: string }) => [f.field, f]));
    const tier = facetsByField['structuredProperties.io.acryl.tier'];
    expect(tier.entity).toMatchObject({
      urn: 'urn:li:structuredProperty:io.acryl.tier',
      type: 'STRUCTURED_PROPERTY',
      exists: true,
      definition: { filterStatus: 'ENABLED' },
    });
    expect(tier.aggregations).toEqual([{ value: 'gold', count: 1, entity: null }]);
    // A value that is an entity URN brings its entity.
    expect(facetsByField['structuredProperties.io.acryl.steward'].aggregations).toEqual([
      { value: OWNER, count: 1, entity: { urn: OWNER, type: 'CORP_USER', username: 'alice' } },
    ]);

    // Soft-deleted: reads say DISABLED (a filter or facet on it is refused).
    await h.catalog.properties.softDelete(ADMIN, 'urn:li:structuredProperty:io.acryl.tier');
    const disabled = await h.graphql(
      'query { structuredProperty(urn: "urn:li:structuredProperty:io.acryl.tier") { exists definition { filterStatus } } }',
    );
    expect(disabled.data.structuredProperty).toEqual({ exists: true, definition: { filterStatus: 'DISABLED' } });
    // Hard-deleted (the web app's delete sends only the urn): the facet comes back empty, with no entity.
    await run('deleteStructuredProperty', { input: { urn: 'urn:li:structuredProperty:io.acryl.tier' } });
    expect((await search()).facets.map((f: { field: string }) => f.field)).toEqual([
      '_entityType',
      'structuredProperties.io.acryl.steward',
    ]);
    const asked = await h.graphql(
      'query { aggregateAcrossEntities(input: { query: "*", facets: ["structuredProperties.io.acryl.tier"] }) { facets { field entity { urn } aggregations { value } } } }',
    );
    expect(asked.data.aggregateAcrossEntities.facets).toEqual([
      { field: 'structuredProperties.io.acryl.tier', entity: null, aggregations: [] },
    ]);

    const removed = await run('removeStructuredProperties', {
      input: { assetUrn: DATASET, structuredPropertyUrns: ['urn:li:structuredProperty:io.acryl.steward'] },
    });
    expect(removed.removeStructuredProperties.properties).toEqual([]);
  });
});
