import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, BOB, codesOf, createAdapter, createHarness, dataOf, type Harness } from './support';

const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';
const FLOW = 'urn:li:dataFlow:(airflow,daily_sales,PROD)';
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const OWNER_TEAM = 'urn:li:structuredProperty:ownerTeam';

const CREATE = `mutation create($input: CreateStructuredPropertyInput!) {
  createStructuredProperty(input: $input) {
    urn type
    status { removed }
    definition {
      qualifiedName displayName description cardinality immutable version
      valueType { urn type info { type qualifiedName } }
      entityTypes { urn type info { type qualifiedName } }
      typeQualifier { allowedTypes { urn info { type } } }
      allowedValues { value { ... on StringValue { stringValue } ... on NumberValue { numberValue } } description }
      created { time actor { urn username } }
    }
  }
}`;
const UPDATE = `mutation update($input: UpdateStructuredPropertyInput!) {
  updateStructuredProperty(input: $input) { urn definition { displayName description cardinality version allowedValues { value { ... on NumberValue { numberValue } } } entityTypes { urn } } }
}`;
const DELETE = 'mutation del($input: DeleteStructuredPropertyInput!) { deleteStructuredProperty(input: $input) }';
const GET =
  'query get($urn: String!) { structuredProperty(urn: $urn) { urn status { removed } definition { qualifiedName displayName } } }';
const VALUES = `structuredProperties { properties {
  associatedUrn
  structuredProperty { urn definition { qualifiedName valueType { urn } } }
  values { ... on StringValue { stringValue } ... on NumberValue { numberValue } }
} }`;
const UPSERT = `mutation upsert($input: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $input) { properties {
  associatedUrn structuredProperty { urn } values { ... on StringValue { stringValue } ... on NumberValue { numberValue } }
} } }`;
const REMOVE = `mutation remove($input: RemoveStructuredPropertiesInput!) { removeStructuredProperties(input: $input) { properties { structuredProperty { urn } } } }`;
const READ = `query read($urn: String!) { entity(urn: $urn) { urn type ${VALUES} } }`;

const retentionInput = {
  id: 'io.acryl.privacy.retentionTime',
  qualifiedName: 'io.acryl.privacy.retentionTime',
  displayName: 'Retention Time',
  description: 'How long the data is kept',
  valueType: 'urn:li:dataType:datahub.number',
  allowedValues: [
    { numberValue: 30, description: '30 days' },
    { numberValue: 90, description: '90 days' },
  ],
  cardinality: 'MULTIPLE',
  entityTypes: ['urn:li:entityType:datahub.dataset', 'dataFlow'],
};

type Entries = Array<{ structuredProperty: { urn: string }; values: Array<{ stringValue?: string; numberValue?: number }> }>;

describe.each(ADAPTERS)('GraphQL structured properties (%s)', (kind) => {
  let h: Harness;
  let now: number;
  beforeEach(() => {
    now = Date.UTC(2026, 2, 1);
    h = createHarness(createAdapter(kind), { clock: () => now });
  });
  afterEach(() => h.close());

  const createRetention = async () => dataOf(await h.run(CREATE, { input: retentionInput }));
  const createOwnerTeam = async () =>
    dataOf(
      await h.run(CREATE, {
        input: {
          id: 'ownerTeam',
          valueType: 'string',
          entityTypes: ['dataset'],
          allowedValues: [{ stringValue: 'sales' }, { stringValue: 'finance' }],
        },
      }),
    );

  it('createStructuredProperty returns the entity with its full definition', async () => {
    const data = await createRetention();
    expect(data).toEqual({
      createStructuredProperty: {
        urn: RETENTION,
        type: 'STRUCTURED_PROPERTY',
        status: { removed: false },
        definition: {
          qualifiedName: 'io.acryl.privacy.retentionTime',
          displayName: 'Retention Time',
          description: 'How long the data is kept',
          cardinality: 'MULTIPLE',
          immutable: false,
          version: null,
          valueType: {
            urn: 'urn:li:dataType:datahub.number',
            type: 'DATA_TYPE',
            info: { type: 'NUMBER', qualifiedName: 'datahub.number' },
          },
          entityTypes: [
            { urn: 'urn:li:entityType:datahub.dataset', type: 'ENTITY_TYPE', info: { type: 'DATASET', qualifiedName: 'datahub.dataset' } },
            {
              urn: 'urn:li:entityType:datahub.dataFlow',
              type: 'ENTITY_TYPE',
              info: { type: 'DATA_FLOW', qualifiedName: 'datahub.dataFlow' },
            },
          ],
          typeQualifier: null,
          allowedValues: [
            { value: { numberValue: 30 }, description: '30 days' },
            { value: { numberValue: 90 }, description: '90 days' },
          ],
          created: { time: now, actor: { urn: ADMIN, username: 'admin' } },
        },
      },
    });
  });

  it('a URN-typed property shows its type qualifier; values resolve to their entities', async () => {
    await h.catalog.entities.upsertAspect(ADMIN, ANA, 'corpUserInfo', { displayName: 'Ana' });
    const created = dataOf<{ createStructuredProperty: { definition: { typeQualifier: unknown } } }>(
      await h.run(CREATE, {
        input: {
          id: 'steward',
          valueType: 'urn',
          typeQualifier: { allowedTypes: ['corpuser'] },
          cardinality: 'MULTIPLE',
          entityTypes: ['dataset'],
        },
      }),
    );
    expect(created.createStructuredProperty.definition.typeQualifier).toEqual({
      allowedTypes: [{ urn: 'urn:li:entityType:datahub.corpuser', info: { type: 'CORP_USER' } }],
    });
    dataOf(
      await h.run(
        UPSERT,
        {
          input: {
            assetUrn: ORDERS,
            structuredPropertyInputParams: [
              { structuredPropertyUrn: 'urn:li:structuredProperty:steward', values: [{ stringValue: ANA }, { stringValue: BOB }] },
            ],
          },
        },
        ANA,
      ),
    );
    const read = dataOf(
      await h.run(
        `{ dataset(urn: "${ORDERS}") { structuredProperties { properties { valueEntities { __typename urn ... on CorpUser { username } } } } } }`,
      ),
    );
    // Bob has no aspects: no entity.
    expect(read).toEqual({
      dataset: { structuredProperties: { properties: [{ valueEntities: [{ __typename: 'CorpUser', urn: ANA, username: 'ana' }, null] }] } },
    });
  });

  it('createStructuredProperty refusals: privilege, existing URN, invalid input with every violation, no actor', async () => {
    expect(codesOf(await h.run(CREATE, { input: retentionInput }, ANA))).toEqual(['FORBIDDEN']);
    await createRetention();
    expect(codesOf(await h.run(CREATE, { input: retentionInput }))).toEqual(['CONFLICT']);
    const invalid = await h.run(CREATE, {
      input: { id: 'a.b', qualifiedName: 'a.c', valueType: 'colour', entityTypes: ['urn:li:entityType:dataset'], version: '2024' },
    });
    expect(codesOf(invalid)).toEqual(['INVALID_INPUT']);
    const paths = (invalid.errors?.[0]?.extensions.details as Array<{ path: string }>).map((d) => d.path);
    expect(paths.length).toBeGreaterThanOrEqual(3);
    expect(paths).toEqual(expect.arrayContaining(['/valueType', '/version']));
    expect(codesOf(await h.run(CREATE, { input: retentionInput }, null))).toEqual(['UNAUTHENTICATED']);
  });

  it('updateStructuredProperty changes texts, appends lists, and refuses a breaking change without a newer version', async () => {
    await createOwnerTeam();
    await createRetention();
    const updated = dataOf(
      await h.run(UPDATE, {
        input: {
          urn: RETENTION,
          displayName: 'Retention',
          newAllowedValues: [{ numberValue: 365, description: 'a year' }],
          newEntityTypes: ['dataJob'],
        },
      }),
    );
    expect(updated).toEqual({
      updateStructuredProperty: {
        urn: RETENTION,
        definition: {
          displayName: 'Retention',
          description: 'How long the data is kept',
          cardinality: 'MULTIPLE',
          version: null,
          allowedValues: [{ value: { numberValue: 30 } }, { value: { numberValue: 90 } }, { value: { numberValue: 365 } }],
          entityTypes: [
            { urn: 'urn:li:entityType:datahub.dataset' },
            { urn: 'urn:li:entityType:datahub.dataFlow' },
            { urn: 'urn:li:entityType:datahub.dataJob' },
          ],
        },
      },
    });
    // ownerTeam is SINGLE: becoming MULTIPLE is not breaking.
    const multiple = dataOf<{ updateStructuredProperty: { definition: { cardinality: string } } }>(
      await h.run(UPDATE, { input: { urn: OWNER_TEAM, setCardinalityAsMultiple: true } }),
    );
    expect(multiple.updateStructuredProperty.definition.cardinality).toBe('MULTIPLE');

    // Restricting values where there were none is breaking.
    dataOf(await h.run(CREATE, { input: { id: 'tier', valueType: 'string', entityTypes: ['dataset'] } }));
    const breaking = await h.run(UPDATE, { input: { urn: 'urn:li:structuredProperty:tier', newAllowedValues: [{ stringValue: 'gold' }] } });
    expect(codesOf(breaking)).toEqual(['CONFLICT']);
    const bumped = await h.run(UPDATE, {
      input: { urn: 'urn:li:structuredProperty:tier', newAllowedValues: [{ stringValue: 'gold' }], version: '20260301000000' },
    });
    expect(
      dataOf<{ updateStructuredProperty: { definition: { version: string } } }>(bumped).updateStructuredProperty.definition.version,
    ).toBe('20260301000000');

    expect(codesOf(await h.run(UPDATE, { input: { urn: 'urn:li:structuredProperty:nothing', displayName: 'x' } }))).toEqual(['NOT_FOUND']);
    expect(codesOf(await h.run(UPDATE, { input: { urn: RETENTION, displayName: 'x' } }, ANA))).toEqual(['FORBIDDEN']);
  });

  it('structuredProperty(urn) reads a definition; null when absent', async () => {
    await createRetention();
    expect(dataOf(await h.run(GET, { urn: RETENTION }, BOB))).toEqual({
      structuredProperty: {
        urn: RETENTION,
        status: { removed: false },
        definition: { qualifiedName: 'io.acryl.privacy.retentionTime', displayName: 'Retention Time' },
      },
    });
    expect(dataOf(await h.run(GET, { urn: 'urn:li:structuredProperty:nothing' }))).toEqual({ structuredProperty: null });
    expect(codesOf(await h.run(GET, { urn: RETENTION }, null))).toEqual(['UNAUTHENTICATED']);
  });

  it('upsertStructuredProperties replaces all of an entity’s properties; entity(urn) reads them back', async () => {
    await createRetention();
    await createOwnerTeam();
    const first = dataOf<{ upsertStructuredProperties: { properties: Entries } }>(
      await h.run(
        UPSERT,
        {
          input: {
            assetUrn: ORDERS,
            structuredPropertyInputParams: [
              { structuredPropertyUrn: RETENTION, values: [{ numberValue: 30 }, { numberValue: 90 }] },
              { structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'sales' }] },
            ],
          },
        },
        ANA,
      ),
    );
    expect(first.upsertStructuredProperties.properties).toEqual([
      { associatedUrn: ORDERS, structuredProperty: { urn: RETENTION }, values: [{ numberValue: 30 }, { numberValue: 90 }] },
      { associatedUrn: ORDERS, structuredProperty: { urn: OWNER_TEAM }, values: [{ stringValue: 'sales' }] },
    ]);
    const read = dataOf(await h.run(READ, { urn: ORDERS }, BOB));
    expect(read).toEqual({
      entity: {
        urn: ORDERS,
        type: 'DATASET',
        structuredProperties: {
          properties: [
            {
              associatedUrn: ORDERS,
              structuredProperty: {
                urn: RETENTION,
                definition: { qualifiedName: 'io.acryl.privacy.retentionTime', valueType: { urn: 'urn:li:dataType:datahub.number' } },
              },
              values: [{ numberValue: 30 }, { numberValue: 90 }],
            },
            {
              associatedUrn: ORDERS,
              structuredProperty: {
                urn: OWNER_TEAM,
                definition: { qualifiedName: 'ownerTeam', valueType: { urn: 'urn:li:dataType:datahub.string' } },
              },
              values: [{ stringValue: 'sales' }],
            },
          ],
        },
      },
    });

    const replaced = dataOf<{ upsertStructuredProperties: { properties: Entries } }>(
      await h.run(
        UPSERT,
        { input: { assetUrn: FLOW, structuredPropertyInputParams: [{ structuredPropertyUrn: RETENTION, values: [{ numberValue: 90 }] }] } },
        ANA,
      ),
    );
    expect(replaced.upsertStructuredProperties.properties).toHaveLength(1);
    const again = dataOf<{ upsertStructuredProperties: { properties: Entries } }>(
      await h.run(
        UPSERT,
        {
          input: {
            assetUrn: ORDERS,
            structuredPropertyInputParams: [{ structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'finance' }] }],
          },
        },
        ANA,
      ),
    );
    expect(again.upsertStructuredProperties.properties).toEqual([
      { associatedUrn: ORDERS, structuredProperty: { urn: OWNER_TEAM }, values: [{ stringValue: 'finance' }] },
    ]);
  });

  it('upsertStructuredProperties refusals: privilege, values against the definition (every violation), unknown property', async () => {
    await createRetention();
    await createOwnerTeam();
    const input = {
      assetUrn: ORDERS,
      structuredPropertyInputParams: [{ structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'sales' }] }],
    };
    expect(codesOf(await h.run(UPSERT, { input }, BOB))).toEqual(['FORBIDDEN']);
    const invalid = await h.run(
      UPSERT,
      {
        input: {
          assetUrn: ORDERS,
          structuredPropertyInputParams: [
            { structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'marketing' }] },
            { structuredPropertyUrn: RETENTION, values: [{ stringValue: '30' }] },
            { structuredPropertyUrn: 'urn:li:structuredProperty:nothing', values: [{ stringValue: 'x' }] },
          ],
        },
      },
      ANA,
    );
    expect(codesOf(invalid)).toEqual(['INVALID_INPUT']);
    const paths = (invalid.errors?.[0]?.extensions.details as Array<{ path: string }>).map((d) => d.path);
    expect(paths.some((p) => p.startsWith('/structuredPropertyInputParams/0'))).toBe(true);
    expect(paths.some((p) => p.startsWith('/structuredPropertyInputParams/1'))).toBe(true);
    expect(paths.some((p) => p.startsWith('/structuredPropertyInputParams/2'))).toBe(true);
    expect(dataOf(await h.run(READ, { urn: ORDERS }))).toEqual({ entity: null });
    expect(codesOf(await h.run(UPSERT, { input }, null))).toEqual(['UNAUTHENTICATED']);
  });

  it('removeStructuredProperties removes the named ones and returns those left', async () => {
    await createRetention();
    await createOwnerTeam();
    dataOf(
      await h.run(
        UPSERT,
        {
          input: {
            assetUrn: ORDERS,
            structuredPropertyInputParams: [
              { structuredPropertyUrn: RETENTION, values: [{ numberValue: 30 }] },
              { structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'sales' }] },
            ],
          },
        },
        ANA,
      ),
    );
    expect(codesOf(await h.run(REMOVE, { input: { assetUrn: ORDERS, structuredPropertyUrns: [RETENTION] } }, BOB))).toEqual(['FORBIDDEN']);
    expect(dataOf(await h.run(REMOVE, { input: { assetUrn: ORDERS, structuredPropertyUrns: [RETENTION] } }, ANA))).toEqual({
      removeStructuredProperties: { properties: [{ structuredProperty: { urn: OWNER_TEAM } }] },
    });
    const left = dataOf<{ entity: { structuredProperties: { properties: Entries } } }>(await h.run(READ, { urn: ORDERS }));
    expect(left.entity.structuredProperties.properties.map((p) => p.structuredProperty.urn)).toEqual([OWNER_TEAM]);
    const invalid = await h.run(REMOVE, { input: { assetUrn: 'not a urn', structuredPropertyUrns: [RETENTION] } }, ANA);
    expect(codesOf(invalid)).toEqual(['INVALID_INPUT']);
  });

  it('deleteStructuredProperty: soft hides values and refuses writes, nothing is lost; hard removes the definition and its values', async () => {
    await createRetention();
    await createOwnerTeam();
    const assign = {
      assetUrn: ORDERS,
      structuredPropertyInputParams: [{ structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'sales' }] }],
    };
    dataOf(await h.run(UPSERT, { input: assign }, ANA));

    expect(codesOf(await h.run(DELETE, { input: { urn: OWNER_TEAM, hard: false } }, ANA))).toEqual(['FORBIDDEN']);
    expect(dataOf(await h.run(DELETE, { input: { urn: OWNER_TEAM, hard: false } }))).toEqual({ deleteStructuredProperty: true });
    expect(dataOf(await h.run(GET, { urn: OWNER_TEAM }))).toMatchObject({ structuredProperty: { status: { removed: true } } });
    const hidden = dataOf<{ entity: { structuredProperties: { properties: Entries } } }>(await h.run(READ, { urn: ORDERS }));
    expect(hidden.entity.structuredProperties.properties).toEqual([]);
    expect(codesOf(await h.run(UPSERT, { input: assign }, ANA))).toEqual(['INVALID_INPUT']);
    expect(codesOf(await h.run(UPDATE, { input: { urn: OWNER_TEAM, displayName: 'x' } }))).toEqual(['INVALID_INPUT']);

    await h.catalog.properties.restore(ADMIN, OWNER_TEAM);
    const back = dataOf<{ entity: { structuredProperties: { properties: Entries } } }>(await h.run(READ, { urn: ORDERS }));
    expect(back.entity.structuredProperties.properties.map((p) => p.values)).toEqual([[{ stringValue: 'sales' }]]);

    // `{ urn }` alone is a hard delete, as the platform's web app sends it.
    expect(dataOf(await h.run(DELETE, { input: { urn: OWNER_TEAM } }))).toEqual({ deleteStructuredProperty: true });
    expect(dataOf(await h.run(GET, { urn: OWNER_TEAM }))).toEqual({ structuredProperty: null });
    const gone = dataOf<{ entity: { structuredProperties: { properties: Entries } } }>(await h.run(READ, { urn: ORDERS }));
    expect(gone.entity.structuredProperties.properties).toEqual([]);
    await h.catalog.settle();
    const stored = await h.catalog.properties.getValues(ADMIN, ORDERS);
    expect(stored).toEqual([]);
    expect(codesOf(await h.run(DELETE, { input: { urn: OWNER_TEAM, hard: true } }))).toEqual(['NOT_FOUND']);
  });

  it('later mutations of one document read afresh what earlier ones loaded', async () => {
    await createOwnerTeam();
    const result = dataOf<{
      first: { properties: Array<{ structuredProperty: { definition: { displayName: string | null } } }> };
      last: { properties: Array<{ structuredProperty: { definition: { displayName: string | null } } }> };
    }>(
      await h.run(
        `mutation m($assign: UpsertStructuredPropertiesInput!) {
          first: upsertStructuredProperties(input: $assign) { properties { structuredProperty { definition { displayName } } } }
          rename: updateStructuredProperty(input: { urn: "${OWNER_TEAM}", displayName: "Owning team" }) { urn }
          last: upsertStructuredProperties(input: $assign) { properties { structuredProperty { definition { displayName } } } }
        }`,
        {
          assign: {
            assetUrn: ORDERS,
            structuredPropertyInputParams: [{ structuredPropertyUrn: OWNER_TEAM, values: [{ stringValue: 'sales' }] }],
          },
        },
      ),
    );
    expect(result.first.properties[0]?.structuredProperty.definition.displayName).toBeNull();
    expect(result.last.properties[0]?.structuredProperty.definition.displayName).toBe('Owning team');
  });
});
