import { afterEach, describe, expect, it } from 'vitest';
import {
  parseYamlDefinitions,
  type Catalog,
  type CreatePropertyDefinitionInput,
  type CreateStructuredPropertyInput,
  type RestPropertyDefinitionInput,
  type YamlPropertyEntry,
} from '../../../src/index';
import { createStructuredPropertyFromGraphql, updateStructuredPropertyFromGraphql } from '../../../src/graphql/property-input';
import { upsertYamlDefinitions } from '../../../src/http/property-yaml';
import { ADMIN, codeOf, EDITOR, errorOf, openCatalog, READER, RETENTION_YAML, type TestCatalog } from './helpers';

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const DS = 'urn:li:entityType:datahub.dataset';
const FLOW = 'urn:li:entityType:datahub.dataFlow';

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
function open(options?: Parameters<typeof openCatalog>[0]): TestCatalog {
  t = openCatalog(options);
  return t;
}

/**
 * The inputs below are in the spellings the transports take: GraphQL inputs go through the GraphQL
 * layer's decoder, YAML text through the command line's, then to the canonical `catalog.properties`.
 */
async function upsertYamlText(catalog: Catalog, actor: string, text: string) {
  return upsertYamlDefinitions(catalog, actor, parseYamlDefinitions(text));
}

const graphqlRetention: CreateStructuredPropertyInput = {
  id: 'retentionTime',
  qualifiedName: 'retentionTime',
  displayName: 'Retention Time',
  description: 'Retention Time is used to figure out how long to retain records in a dataset',
  valueType: 'urn:li:dataType:datahub.number',
  allowedValues: [
    { numberValue: 30, description: '30 days' },
    { numberValue: 90, description: 'monthly reporting' },
    { numberValue: 365, description: 'non-sensitive' },
  ],
  cardinality: 'SINGLE',
  entityTypes: [DS, FLOW],
};

describe('definition input shapes', () => {
  it('stores the GraphQL create input as the REST aspect shape with full URNs and defaults', async () => {
    const { catalog } = open();
    const view = await createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention);
    expect(view.urn).toBe('urn:li:structuredProperty:retentionTime');
    expect(view.removed).toBe(false);
    const { created, lastModified, ...definition } = view.definition;
    expect(definition).toEqual({
      qualifiedName: 'retentionTime',
      displayName: 'Retention Time',
      description: 'Retention Time is used to figure out how long to retain records in a dataset',
      valueType: 'urn:li:dataType:datahub.number',
      allowedValues: [
        { value: { double: 30 }, description: '30 days' },
        { value: { double: 90 }, description: 'monthly reporting' },
        { value: { double: 365 }, description: 'non-sensitive' },
      ],
      cardinality: 'SINGLE',
      entityTypes: [DS, FLOW],
      immutable: false,
    });
    expect(created?.actor).toBe(ADMIN);
    expect(lastModified).toEqual(created);
    const aspect = await catalog.entities.getAspect(READER, view.urn, 'propertyDefinition');
    expect(aspect?.value).toEqual(view.definition);
  });

  it('accepts the REST aspect JSON and the YAML entry, and reads back in the command-line form', async () => {
    const { catalog } = open();
    const rest: RestPropertyDefinitionInput = {
      qualifiedName: 'io.acryl.privacy.retentionTime02',
      displayName: 'Retention Time 02',
      valueType: 'urn:li:dataType:datahub.string',
      allowedValues: [
        { value: { string: 'foo2' }, description: 'test foo2 value' },
        { value: { string: 'bar2' }, description: 'test bar2 value' },
      ],
      cardinality: 'SINGLE',
      entityTypes: [DS],
    };
    const restUrn = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime02';
    const viaRoute = await catalog.entities.upsertAspect(ADMIN, restUrn, 'propertyDefinition', rest as never);
    expect(viaRoute.aspects.propertyDefinition?.value.allowedValues).toEqual(rest.allowedValues!);

    const [result] = await upsertYamlText(catalog, ADMIN, RETENTION_YAML);
    expect(result?.outcome).toBe('created');
    expect(await catalog.properties.getReadBack(READER, RETENTION)).toEqual({
      urn: RETENTION,
      qualified_name: 'io.acryl.privacy.retentionTime',
      type: 'urn:li:dataType:datahub.number',
      description: 'Retention Time is used to figure out how long to retain records in a dataset',
      display_name: 'Retention Time',
      entity_types: [DS, FLOW],
      cardinality: 'MULTIPLE',
      allowed_values: [
        { value: '30', description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
        { value: '90', description: 'Use this for datasets that drive monthly reporting but contain pii' },
        { value: '365', description: 'Use this for non-sensitive data that can be retained for longer' },
      ],
    });
    expect(await catalog.properties.getReadBack(READER, restUrn)).toEqual({
      urn: restUrn,
      qualified_name: 'io.acryl.privacy.retentionTime02',
      type: 'urn:li:dataType:datahub.string',
      display_name: 'Retention Time 02',
      entity_types: [DS],
      cardinality: 'SINGLE',
      allowed_values: [
        { value: 'foo2', description: 'test foo2 value' },
        { value: 'bar2', description: 'test bar2 value' },
      ],
    });
    expect(await catalog.properties.getReadBack(READER, 'urn:li:structuredProperty:absent')).toBeUndefined();
  });

  it('refuses fields a shape does not have, with their paths, for each shape', async () => {
    const { catalog } = open();
    const graphql = await errorOf(createStructuredPropertyFromGraphql(catalog, ADMIN, { ...graphqlRetention, colour: 'red' } as never));
    expect(graphql.code).toBe('INVALID_INPUT');
    expect(graphql.details.map((d) => d.path)).toEqual(['/colour']);
    const rest = await errorOf(
      catalog.properties.create(ADMIN, {
        valueType: 'string',
        entityTypes: ['dataset'],
        qualifiedName: 'a',
        allowedValues: [{ value: { string: 'x', double: 1 } }],
      } as never),
    );
    expect(rest.details.map((d) => d.path)).toEqual(['/allowedValues/0/value']);
    const yaml = await errorOf(upsertYamlText(catalog, ADMIN, '- id: a\n  type: string\n  entity_types: [dataset]\n  displayName: A\n'));
    expect(yaml.details.map((d) => d.path)).toEqual(['/0/displayName']);
    const both = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        ...graphqlRetention,
        allowedValues: [{ numberValue: 1, stringValue: 'x' }, {}],
      }),
    );
    expect(both.details.map((d) => d.path)).toEqual(['/allowedValues/0', '/allowedValues/1']);
    expect((await catalog.properties.list(READER)).properties).toEqual([]);
  });

  it("takes YAML types in capitals, as files written for DataHub's CLI have them (datahub-project/datahub metadata-ingestion/examples/structured_properties)", async () => {
    const { catalog } = open();
    const [first, second] = await upsertYamlText(
      catalog,
      ADMIN,
      '- id: io.acryl.caps.s\n  type: STRING\n  entity_types: [dataset]\n- id: io.acryl.caps.d\n  type: DATE\n  entity_types: [dataset]\n',
    );
    expect([first?.property.definition.valueType, second?.property.definition.valueType]).toEqual([
      'urn:li:dataType:datahub.string',
      'urn:li:dataType:datahub.date',
    ]);
    expect((await errorOf(upsertYamlText(catalog, ADMIN, '- id: io.acryl.caps.x\n  type: STRNG\n  entity_types: [dataset]\n'))).code).toBe(
      'INVALID_INPUT',
    );
  });

  it('names the line and column of a YAML syntax error, in one line', async () => {
    const { catalog } = open();
    const broken = await errorOf(upsertYamlText(catalog, ADMIN, '- id: a\n  type: string\n  description: "unterminated\n'));
    expect(broken.code).toBe('INVALID_INPUT');
    expect(broken.message).toMatch(/^the YAML file cannot be read: .* at line \d+, column \d+$/);
    expect(broken.message).not.toContain('\n');
  });

  it('converts losslessly: stored → each shape → stored, and each shape → stored → the same shape', async () => {
    const { catalog } = open();
    const { toGraphqlInput, toRestInput, toYamlEntry } = await import('../../../src/index');
    const yamlEntry: YamlPropertyEntry = {
      id: 'io.example.owner',
      qualified_name: 'io.example.owner',
      type: 'urn',
      cardinality: 'MULTIPLE',
      version: '20240614080000',
      display_name: 'Owner',
      entity_types: ['dataset', 'dataFlow'],
      description: 'Who owns it',
      allowed_values: [{ value: 'urn:li:corpuser:alice', description: 'Alice' }, { value: 'urn:li:corpGroup:data' }],
      immutable: true,
      type_qualifier: { allowed_types: ['corpuser', 'corpGroup'] },
    };
    const [created] = await upsertYamlDefinitions(catalog, ADMIN, [yamlEntry]);
    const stored = created!.property.definition;
    const { created: _c, lastModified: _m, ...content } = stored;
    expect(toYamlEntry(stored)).toEqual(yamlEntry);

    const graphql = toGraphqlInput(stored);
    expect(graphql.valueType).toBe('urn:li:dataType:datahub.urn');
    const rest = toRestInput(stored);
    expect(rest).toEqual(content);
    await catalog.properties.hardDelete(ADMIN, created!.property.urn);
    const viaGraphql = await createStructuredPropertyFromGraphql(catalog, ADMIN, graphql);
    const { created: _c2, lastModified: _m2, ...fromGraphql } = viaGraphql.definition;
    expect(fromGraphql).toEqual(content);
    expect(toGraphqlInput(viaGraphql.definition)).toEqual(graphql);
    await catalog.properties.hardDelete(ADMIN, viaGraphql.urn);
    const viaRest = await catalog.properties.create(ADMIN, rest as CreatePropertyDefinitionInput);
    const { created: _c3, lastModified: _m3, ...fromRest } = viaRest.definition;
    expect(fromRest).toEqual(content);
    expect(toRestInput(viaRest.definition)).toEqual(rest);
  });
});

describe('identity: id, qualified name and URN', () => {
  it('takes the qualified name, else the id, and refuses the two when they differ', async () => {
    const { catalog } = open();
    const base = { valueType: 'string', entityTypes: ['dataset'] } as const;
    expect((await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, id: 'only.id' })).urn).toBe(
      'urn:li:structuredProperty:only.id',
    );
    expect((await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, qualifiedName: 'only.name' })).urn).toBe(
      'urn:li:structuredProperty:only.name',
    );
    expect(
      (await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, id: 'same', qualifiedName: 'same' })).definition.qualifiedName,
    ).toBe('same');
    const mismatch = await errorOf(createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, id: 'one', qualifiedName: 'two' }));
    expect(mismatch.code).toBe('INVALID_INPUT');
    expect(mismatch.details.map((d) => d.path)).toEqual(['/id']);
    const neither = await errorOf(createStructuredPropertyFromGraphql(catalog, ADMIN, base));
    expect(neither.details.map((d) => d.path)).toEqual(['/qualifiedName']);
    const spaces = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, id: 'has space', qualifiedName: 'has space' }),
    );
    expect(spaces.details.map((d) => d.path)).toEqual(['/id', '/qualifiedName']);
  });

  it('matches the REST path URN and the YAML urn against the qualified name', async () => {
    const { catalog } = open();
    const body = { qualifiedName: 'io.a', valueType: 'string', entityTypes: ['dataset'] };
    const wrong = await errorOf(catalog.entities.upsertAspect(ADMIN, 'urn:li:structuredProperty:io.b', 'propertyDefinition', body));
    expect(wrong.code).toBe('INVALID_INPUT');
    expect(wrong.details.map((d) => d.path)).toEqual(['/qualifiedName']);
    const { qualifiedName: _q, ...withoutName } = body;
    const derived = await catalog.properties.upsert(ADMIN, { ...withoutName, urn: 'urn:li:structuredProperty:io.c' });
    expect(derived.property.definition.qualifiedName).toBe('io.c');
    const yaml = await errorOf(
      upsertYamlText(catalog, ADMIN, '- urn: urn:li:structuredProperty:io.d\n  type: string\n  entity_types: [dataset]\n'),
    );
    expect(yaml.details.map((d) => d.path)).toEqual(['/0/qualified_name']);
    const yamlMismatch = await errorOf(
      upsertYamlText(
        catalog,
        ADMIN,
        '- urn: urn:li:structuredProperty:io.d\n  qualified_name: io.e\n  type: string\n  entity_types: [dataset]\n',
      ),
    );
    expect(yamlMismatch.details.map((d) => d.path)).toEqual(['/0/qualified_name']);
  });

  it('refuses to create an existing URN, active or soft-deleted, with CONFLICT', async () => {
    const { catalog } = open();
    await createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention);
    expect(await codeOf(createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention))).toBe('CONFLICT');
    await catalog.properties.softDelete(ADMIN, 'urn:li:structuredProperty:retentionTime');
    expect(await codeOf(createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention))).toBe('CONFLICT');
  });
});

describe('value types, entity types, allowed values, cardinality, version', () => {
  const base = { qualifiedName: 'p', entityTypes: ['dataset'] } as const;

  it('accepts short and full value-type names and stores the full URN; refuses unknown ones', async () => {
    const { catalog } = open();
    for (const [i, valueType] of (['string', 'datahub.rich_text', 'urn:li:dataType:datahub.number', 'date', 'urn'] as const).entries()) {
      const view = await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, qualifiedName: `p${i}`, valueType });
      expect(view.definition.valueType).toMatch(/^urn:li:dataType:datahub\.(string|rich_text|number|date|urn)$/);
    }
    const bad = await errorOf(createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, valueType: 'integer' as never }));
    expect(bad.code).toBe('INVALID_INPUT');
    expect(bad.details.map((d) => d.path)).toEqual(['/valueType']);
  });

  it('accepts entity types as short names or datahub URNs; refuses urn:li:entityType:dataset listing the valid names', async () => {
    const { catalog } = open();
    const view = await createStructuredPropertyFromGraphql(catalog, ADMIN, {
      qualifiedName: 'p',
      valueType: 'string',
      entityTypes: ['dataset', 'dataFlow', 'urn:li:entityType:datahub.chart'],
    });
    expect(view.definition.entityTypes).toEqual([DS, FLOW, 'urn:li:entityType:datahub.chart']);
    const bad = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        qualifiedName: 'q',
        valueType: 'string',
        entityTypes: ['urn:li:entityType:dataset', 'table'] as never,
      }),
    );
    expect(bad.details.map((d) => d.path)).toEqual(['/entityTypes/0', '/entityTypes/1']);
    // The refusal lists the valid names.
    for (const name of [
      'dataset',
      'dataFlow',
      'dataJob',
      'chart',
      'dashboard',
      'container',
      'schemaField',
      'glossaryTerm',
      'corpuser',
      'corpGroup',
    ]) {
      expect(bad.details[0]!.message).toContain(name);
    }
    const none = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: 'r', valueType: 'string', entityTypes: [] }),
    );
    expect(none.details.map((d) => d.path)).toEqual(['/entityTypes']);
    const twice = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: 's', valueType: 'string', entityTypes: ['dataset', DS] }),
    );
    expect(twice.details.map((d) => d.path)).toEqual(['/entityTypes/1']);
  });

  it('restricts URN values with typeQualifier.allowedTypes (URN properties only)', async () => {
    const { catalog } = open();
    const view = await createStructuredPropertyFromGraphql(catalog, ADMIN, {
      ...base,
      valueType: 'urn',
      typeQualifier: { allowedTypes: ['corpuser', 'urn:li:entityType:datahub.corpGroup'] },
    });
    expect(view.definition.typeQualifier).toEqual({
      allowedTypes: ['urn:li:entityType:datahub.corpuser', 'urn:li:entityType:datahub.corpGroup'],
    });
    const onString = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        ...base,
        qualifiedName: 'q',
        valueType: 'string',
        typeQualifier: { allowedTypes: ['corpuser'] },
      }),
    );
    expect(onString.details.map((d) => d.path)).toEqual(['/typeQualifier/allowedTypes']);
  });

  it('types allowed values to the value type and refuses duplicates', async () => {
    const { catalog } = open();
    const number = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        ...base,
        valueType: 'number',
        allowedValues: [{ stringValue: 'thirty' }, { numberValue: 30 }, { numberValue: 30 }],
      }),
    );
    expect(number.details.map((d) => d.path)).toEqual(['/allowedValues/0', '/allowedValues/2']);
    const string = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, valueType: 'string', allowedValues: [{ numberValue: 1 }] }),
    );
    expect(string.details.map((d) => d.path)).toEqual(['/allowedValues/0']);
    const date = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        ...base,
        valueType: 'date',
        allowedValues: [{ stringValue: '2024-02-30' }, { stringValue: '2024-02-29' }, { stringValue: '24-1-1' }],
      }),
    );
    expect(date.details.map((d) => d.path)).toEqual(['/allowedValues/0', '/allowedValues/2']);
    const urn = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        ...base,
        valueType: 'urn',
        typeQualifier: { allowedTypes: ['corpuser'] },
        allowedValues: [{ stringValue: 'not a urn' }, { stringValue: 'urn:li:corpGroup:data' }, { stringValue: 'urn:li:corpuser:alice' }],
      }),
    );
    expect(urn.details.map((d) => d.path)).toEqual(['/allowedValues/0', '/allowedValues/1']);
    const restPaths = await errorOf(
      catalog.properties.create(ADMIN, {
        qualifiedName: 'p',
        valueType: 'number',
        entityTypes: ['dataset'],
        allowedValues: [{ value: { string: '1' } }],
      }),
    );
    expect(restPaths.details.map((d) => d.path)).toEqual(['/allowedValues/0/value']);
  });

  it('defaults to SINGLE, not immutable; takes immutable and a 14-digit version', async () => {
    const { catalog } = open();
    const plain = await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, valueType: 'string' });
    expect(plain.definition.cardinality).toBe('SINGLE');
    expect(plain.definition.immutable).toBe(false);
    expect(plain.definition.version).toBeUndefined();
    const versioned = await createStructuredPropertyFromGraphql(catalog, ADMIN, {
      ...base,
      qualifiedName: 'v',
      valueType: 'string',
      immutable: true,
      version: '20240614080000',
    });
    expect(versioned.definition.version).toBe('20240614080000');
    expect(versioned.definition.immutable).toBe(true);
    for (const version of ['2024', '2024061408000a', '202406140800000']) {
      const bad = await errorOf(
        createStructuredPropertyFromGraphql(catalog, ADMIN, { ...base, qualifiedName: 'w', valueType: 'string', version }),
      );
      expect(bad.details.map((d) => d.path)).toEqual(['/version']);
    }
  });

  it('lists every violation of a definition in one error and writes nothing', async () => {
    const { catalog } = open();
    const error = await errorOf(
      createStructuredPropertyFromGraphql(catalog, ADMIN, {
        id: 'a b',
        valueType: 'decimal' as never,
        entityTypes: ['urn:li:entityType:dataset'] as never,
        version: '1',
        allowedValues: [{ numberValue: 1 }],
      }),
    );
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details.map((d) => d.path).sort()).toEqual(['/entityTypes/0', '/id', '/valueType', '/version']);
    expect((await catalog.properties.list(ADMIN, { includeRemoved: true })).properties).toEqual([]);
  });
});

describe('updates and breaking changes', () => {
  it('replaces texts, appends allowed values, entity types and allowed types, and goes SINGLE → MULTIPLE', async () => {
    let now = 1_700_000_000_000;
    const { catalog } = open({ clock: () => now });
    await createStructuredPropertyFromGraphql(catalog, ADMIN, { ...graphqlRetention });
    await createStructuredPropertyFromGraphql(catalog, ADMIN, {
      qualifiedName: 'owner',
      valueType: 'urn',
      entityTypes: ['dataset'],
      typeQualifier: { allowedTypes: ['corpuser'] },
    });
    now += 1000;
    const updated = await updateStructuredPropertyFromGraphql(catalog, ADMIN, {
      urn: 'urn:li:structuredProperty:retentionTime',
      displayName: 'Retention',
      description: null,
      newAllowedValues: [
        { numberValue: 730, description: 'two years' },
        { numberValue: 30, description: '30 days!' },
      ],
      setCardinalityAsMultiple: true,
      newEntityTypes: ['dataJob', 'dataset'],
    });
    expect(updated.definition.displayName).toBe('Retention');
    expect(updated.definition.description).toBe(graphqlRetention.description);
    expect(updated.definition.allowedValues?.map((a) => [a.value, a.description])).toEqual([
      [{ double: 30 }, '30 days!'],
      [{ double: 90 }, 'monthly reporting'],
      [{ double: 365 }, 'non-sensitive'],
      [{ double: 730 }, 'two years'],
    ]);
    expect(updated.definition.cardinality).toBe('MULTIPLE');
    expect(updated.definition.entityTypes).toEqual([DS, FLOW, 'urn:li:entityType:datahub.dataJob']);
    expect(updated.definition.created?.time).toBe(1_700_000_000_000);
    expect(updated.definition.lastModified?.time).toBe(1_700_000_001_000);
    const owner = await updateStructuredPropertyFromGraphql(catalog, ADMIN, {
      urn: 'urn:li:structuredProperty:owner',
      typeQualifier: { newAllowedTypes: ['corpGroup'] },
    });
    expect(owner.definition.typeQualifier?.allowedTypes).toEqual([
      'urn:li:entityType:datahub.corpuser',
      'urn:li:entityType:datahub.corpGroup',
    ]);
  });

  it('refuses newly restricting allowed values or types unless a new version is given (absent → present counts as greater)', async () => {
    const { catalog } = open();
    await createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: 'free', valueType: 'string', entityTypes: ['dataset'] });
    await createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: 'who', valueType: 'urn', entityTypes: ['dataset'] });
    const restrict = await errorOf(
      updateStructuredPropertyFromGraphql(catalog, ADMIN, {
        urn: 'urn:li:structuredProperty:free',
        newAllowedValues: [{ stringValue: 'a' }],
      }),
    );
    expect(restrict.code).toBe('CONFLICT');
    expect(restrict.details.map((d) => d.path)).toEqual(['/newAllowedValues']);
    const types = await errorOf(
      updateStructuredPropertyFromGraphql(catalog, ADMIN, {
        urn: 'urn:li:structuredProperty:who',
        typeQualifier: { newAllowedTypes: ['corpuser'] },
      }),
    );
    expect(types.details.map((d) => d.path)).toEqual(['/typeQualifier/newAllowedTypes']);
    const ok = await updateStructuredPropertyFromGraphql(catalog, ADMIN, {
      urn: 'urn:li:structuredProperty:free',
      newAllowedValues: [{ stringValue: 'a' }],
      version: '20240101000000',
    });
    expect(ok.definition.version).toBe('20240101000000');
    expect(ok.definition.allowedValues).toEqual([{ value: { string: 'a' } }]);
  });

  it('refuses MULTIPLE → SINGLE, a value-type change and removing allowed values without a greater version', async () => {
    const { catalog } = open();
    await upsertYamlText(catalog, ADMIN, RETENTION_YAML);
    const single = RETENTION_YAML.replace('cardinality: MULTIPLE', 'cardinality: SINGLE');
    const refused = await errorOf(upsertYamlText(catalog, ADMIN, single));
    expect(refused.code).toBe('CONFLICT');
    expect(refused.details.map((d) => d.path)).toEqual(['/0/cardinality']);
    const typeChange = RETENTION_YAML.replace('type: number', 'type: string');
    const typeRefused = await errorOf(upsertYamlText(catalog, ADMIN, typeChange));
    expect([typeRefused.code, typeRefused.details.map((d) => d.path)]).toEqual(['CONFLICT', ['/0/type', '/0/allowed_values']]);
    const fewer = RETENTION_YAML.replace(/ {4}- value: 365\n.*\n/, '');
    expect((await errorOf(upsertYamlText(catalog, ADMIN, fewer))).details.map((d) => d.path)).toEqual(['/0/allowed_values']);

    const [bumped] = await upsertYamlText(catalog, ADMIN, `${single.trimEnd()}\n  version: "20240614080000"\n`);
    expect(bumped?.outcome).toBe('updated');
    expect(bumped?.property.definition.cardinality).toBe('SINGLE');
    expect(bumped?.property.definition.version).toBe('20240614080000');
    // Going back needs a version greater still; the same version or an older one is refused.
    const multipleAgain = `${RETENTION_YAML.trimEnd()}\n  version: "20240614080000"\n`;
    expect((await upsertYamlText(catalog, ADMIN, multipleAgain))[0]?.outcome).toBe('updated');
    const singleSame = `${single.trimEnd()}\n  version: "20240614080000"\n`;
    expect((await errorOf(upsertYamlText(catalog, ADMIN, singleSame))).details.map((d) => d.path)).toEqual(['/0/cardinality']);
    const older = `${single.trimEnd()}\n  version: 20230101000000\n`;
    const olderRefused = await errorOf(upsertYamlText(catalog, ADMIN, older));
    expect([olderRefused.code, olderRefused.details.map((d) => d.path)]).toEqual(['CONFLICT', ['/0/version', '/0/cardinality']]);
    const typeWithVersion = `${typeChange.replace(/ {2}allowed_values:[\s\S]*$/, '').trimEnd()}\n  version: "20250101000000"\n`;
    const [changed] = await upsertYamlText(catalog, ADMIN, typeWithVersion);
    expect(changed?.property.definition.valueType).toBe('urn:li:dataType:datahub.string');
  });

  it('never changes the qualified name, version or not', async () => {
    const { catalog } = open();
    await createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: 'io.a', valueType: 'string', entityTypes: ['dataset'] });
    const body = { qualifiedName: 'io.b', valueType: 'string', entityTypes: ['dataset'], version: '20990101000000' };
    expect(await codeOf(catalog.entities.upsertAspect(ADMIN, 'urn:li:structuredProperty:io.a', 'propertyDefinition', body))).toBe(
      'INVALID_INPUT',
    );
    expect((await catalog.properties.get(READER, 'urn:li:structuredProperty:io.a'))?.definition.qualifiedName).toBe('io.a');
  });

  it('reports created, updated and unchanged for a YAML upsert', async () => {
    const { catalog } = open();
    expect((await upsertYamlText(catalog, ADMIN, RETENTION_YAML)).map((r) => r.outcome)).toEqual(['created']);
    expect((await upsertYamlText(catalog, ADMIN, RETENTION_YAML)).map((r) => r.outcome)).toEqual(['unchanged']);
    const changed = RETENTION_YAML.replace('display_name: Retention Time', 'display_name: Retention');
    expect((await upsertYamlText(catalog, ADMIN, changed)).map((r) => r.outcome)).toEqual(['updated']);
  });

  it('refuses updating a missing property (NOT_FOUND) and a soft-deleted one, naming it', async () => {
    const { catalog } = open();
    expect(
      await codeOf(updateStructuredPropertyFromGraphql(catalog, ADMIN, { urn: 'urn:li:structuredProperty:absent', displayName: 'x' })),
    ).toBe('NOT_FOUND');
    await createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention);
    const urn = 'urn:li:structuredProperty:retentionTime';
    await catalog.properties.softDelete(ADMIN, urn);
    const refused = await errorOf(updateStructuredPropertyFromGraphql(catalog, ADMIN, { urn, displayName: 'x' }));
    expect(refused.code).toBe('INVALID_INPUT');
    expect(refused.message).toContain(urn);
    const viaRest = await errorOf(
      catalog.properties.upsert(ADMIN, { qualifiedName: 'retentionTime', valueType: 'number', entityTypes: ['dataset'] }),
    );
    expect(viaRest.message).toContain(urn);
  });

  it('needs MANAGE_STRUCTURED_PROPERTIES to write definitions and only an actor to read them', async () => {
    const { catalog } = open();
    expect(await codeOf(createStructuredPropertyFromGraphql(catalog, EDITOR, graphqlRetention))).toBe('FORBIDDEN');
    await createStructuredPropertyFromGraphql(catalog, ADMIN, graphqlRetention);
    const urn = 'urn:li:structuredProperty:retentionTime';
    expect(await codeOf(updateStructuredPropertyFromGraphql(catalog, READER, { urn, displayName: 'x' }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.softDelete(EDITOR, urn))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.hardDelete(EDITOR, urn))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.entities.delete(EDITOR, urn))).toBe('FORBIDDEN');
    expect(await codeOf(upsertYamlText(catalog, READER, RETENTION_YAML))).toBe('FORBIDDEN');
    expect((await catalog.properties.get(READER, urn))?.urn).toBe(urn);
    expect(await codeOf(catalog.properties.get('', urn))).toBe('UNAUTHENTICATED');
  });

  it('lists definitions in URN order, pages, and leaves soft-deleted ones out unless asked', async () => {
    const { catalog } = open();
    for (const name of ['c', 'a', 'b', 'd'])
      await createStructuredPropertyFromGraphql(catalog, ADMIN, { qualifiedName: name, valueType: 'string', entityTypes: ['dataset'] });
    await catalog.properties.softDelete(ADMIN, 'urn:li:structuredProperty:b');
    const page1 = await catalog.properties.list(READER, { limit: 2 });
    expect(page1.properties.map((p) => p.definition.qualifiedName)).toEqual(['a', 'c']);
    const page2 = await catalog.properties.list(READER, { limit: 2, afterUrn: page1.nextAfterUrn });
    expect(page2.properties.map((p) => p.definition.qualifiedName)).toEqual(['d']);
    const all = await catalog.properties.list(READER, { includeRemoved: true });
    expect(all.properties.map((p) => [p.definition.qualifiedName, p.removed])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
      ['d', false],
    ]);
  });
});
