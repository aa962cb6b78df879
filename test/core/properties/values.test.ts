import { afterEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/index';
import { upsertStructuredPropertiesFromGraphql } from '../../../src/graphql/property-input';
import { ADMIN, CHART, codeOf, DATASET, DATASET_2, EDITOR, errorOf, FLOW, openCatalog, READER, type TestCatalog } from './helpers';

const RETENTION = 'urn:li:structuredProperty:retention';
const TIER = 'urn:li:structuredProperty:tier';
const TAGS = 'urn:li:structuredProperty:tags';
const REVIEWED = 'urn:li:structuredProperty:reviewed';
const OWNER = 'urn:li:structuredProperty:owner';
const NOTES = 'urn:li:structuredProperty:notes';
const FROZEN = 'urn:li:structuredProperty:frozen';

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

let now = 1_700_000_000_000;
async function setup(): Promise<Catalog> {
  now = 1_700_000_000_000;
  t = openCatalog({ clock: () => now });
  const { catalog } = t;
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'retention',
    valueType: 'number',
    entityTypes: ['dataset', 'dataFlow'],
    allowedValues: [{ value: { double: 30 } }, { value: { double: 90 } }],
  });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'tier',
    valueType: 'string',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { string: 'foo' } }, { value: { string: 'bar' } }],
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'tags', valueType: 'string', cardinality: 'MULTIPLE', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'reviewed', valueType: 'date', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'owner',
    valueType: 'urn',
    entityTypes: ['dataset'],
    typeQualifier: { allowedTypes: ['corpuser'] },
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'notes', valueType: 'rich_text', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'frozen', valueType: 'string', entityTypes: ['dataset'], immutable: true });
  return catalog;
}

const s = (value: string) => ({ string: value });
const d = (value: number) => ({ double: value });
const strip = (list: Array<{ propertyUrn: string; values: unknown[] }>) => list.map(({ propertyUrn, values }) => ({ propertyUrn, values }));

describe('upsert and remove', () => {
  it('upsert replaces all of the entity’s properties; remove deletes the named ones; both return what is left', async () => {
    const catalog = await setup();
    const first = await catalog.properties.upsertValues(EDITOR, DATASET, {
      properties: [
        { propertyUrn: RETENTION, values: [d(30)] },
        { propertyUrn: TAGS, values: [s('a'), s('b')] },
      ],
    });
    expect(strip(first)).toEqual([
      { propertyUrn: RETENTION, values: [d(30)] },
      { propertyUrn: TAGS, values: [s('a'), s('b')] },
    ]);
    const second = await catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: TIER, values: [s('bar')] }] });
    expect(strip(second)).toEqual([{ propertyUrn: TIER, values: [s('bar')] }]);
    await catalog.properties.upsertValues(EDITOR, DATASET, {
      properties: [
        { propertyUrn: TIER, values: [s('bar')] },
        { propertyUrn: RETENTION, values: [d(90)] },
        { propertyUrn: NOTES, values: [s('**bold** text')] },
      ],
    });
    const left = await catalog.properties.removeValues(EDITOR, DATASET, [RETENTION, NOTES, 'urn:li:structuredProperty:never-set']);
    expect(strip(left)).toEqual([{ propertyUrn: TIER, values: [s('bar')] }]);
    expect(strip(await catalog.properties.getValues(READER, DATASET))).toEqual([{ propertyUrn: TIER, values: [s('bar')] }]);
    const entity = await catalog.entities.get(READER, DATASET);
    expect(strip(entity?.aspects.structuredProperties?.value.properties as never)).toEqual([{ propertyUrn: TIER, values: [s('bar')] }]);
    expect(await catalog.properties.removeValues(EDITOR, DATASET_2, [TIER])).toEqual([]);
    expect(await catalog.entities.get(READER, DATASET_2)).toBeUndefined();
  });

  it('takes the GraphQL input shape with stringValue / numberValue', async () => {
    const catalog = await setup();
    const left = await upsertStructuredPropertiesFromGraphql(catalog, EDITOR, DATASET, [
      { structuredPropertyUrn: RETENTION, values: [{ numberValue: 90 }] },
      { structuredPropertyUrn: TAGS, values: [{ stringValue: 'x' }, { stringValue: 'y' }] },
    ]);
    expect(strip(left)).toEqual([
      { propertyUrn: RETENTION, values: [d(90)] },
      { propertyUrn: TAGS, values: [s('x'), s('y')] },
    ]);
    const bad = await errorOf(
      upsertStructuredPropertiesFromGraphql(catalog, EDITOR, DATASET, [
        { structuredPropertyUrn: RETENTION, values: [{ numberValue: 90 }, {}] },
        { structuredPropertyUrn: TIER, values: [{ numberValue: 1 }] },
        { structuredPropertyUrn: 'urn:li:structuredProperty:unknown', values: [{ stringValue: 'x', numberValue: 1 }] },
      ]),
    );
    // A malformed element is reported and its property is still checked; the other elements are checked in full.
    expect(bad.details.map((x) => x.path)).toEqual([
      '/structuredPropertyInputParams/0/values/1',
      '/structuredPropertyInputParams/2/values/0',
      '/structuredPropertyInputParams/1/values/0',
      '/structuredPropertyInputParams/2/structuredPropertyUrn',
    ]);
  });

  it('stamps created / lastModified per assignment and keeps them for values that did not change', async () => {
    const catalog = await setup();
    await catalog.properties.upsertValues(ADMIN, DATASET, {
      properties: [
        { propertyUrn: RETENTION, values: [d(30)] },
        { propertyUrn: TIER, values: [s('foo')] },
      ],
    });
    now += 5000;
    const after = await catalog.properties.upsertValues(EDITOR, DATASET, {
      properties: [
        { propertyUrn: RETENTION, values: [d(30)] },
        { propertyUrn: TIER, values: [s('bar')] },
      ],
    });
    const [retention, tier] = after;
    expect(retention?.created).toEqual({ time: 1_700_000_000_000, actor: ADMIN });
    expect(retention?.lastModified).toEqual({ time: 1_700_000_000_000, actor: ADMIN });
    expect(tier?.created).toEqual({ time: 1_700_000_000_000, actor: ADMIN });
    expect(tier?.lastModified).toEqual({ time: 1_700_000_005_000, actor: EDITOR });
  });

  it('remembers the definition key (incarnation and version) each property’s values were written under', async () => {
    const catalog = await setup();
    const def = await catalog.properties.get(READER, RETENTION);
    await catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: RETENTION, values: [d(30)] }] });
    const adapterView = (
      catalog as unknown as {
        entities: { readVisible(urns: string[]): Promise<Array<{ aspects: Record<string, { systemMetadata?: unknown }> }>> };
      }
    ).entities;
    const [stored] = await adapterView.readVisible([DATASET]);
    // Beside the keys, who set each property and when (the value itself reads back as written).
    expect(stored?.aspects.structuredProperties?.systemMetadata).toEqual({
      propertyKeys: { [RETENTION]: def?.definitionKey },
      propertyStamps: { [RETENTION]: { created: { time: now, actor: EDITOR }, lastModified: { time: now, actor: EDITOR } } },
    });
    expect(def?.definitionKey).toMatch(/^[0-9a-f-]{36}:$/);
  });
});

describe('every value is checked against its definition', () => {
  it('names the allowed values in its refusal', async () => {
    const catalog = await setup();
    const error = await errorOf(
      catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: TIER, values: [s('baz')] }] }),
    );
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details).toEqual([{ path: '/properties/0/values/0', message: `value "baz" of ${TIER} should be one of ["foo","bar"]` }]);
    const numbers = await errorOf(
      catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: RETENTION, values: [d(45)] }] }),
    );
    expect(numbers.details).toEqual([{ path: '/properties/0/values/0', message: `value 45 of ${RETENTION} should be one of [30,90]` }]);
  });

  it('lists every violation of one write in one error and writes nothing', async () => {
    const catalog = await setup();
    await catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: TAGS, values: [s('kept')] }] });
    await catalog.properties.create(ADMIN, { qualifiedName: 'gone', valueType: 'string', entityTypes: ['dataset'] });
    await catalog.properties.softDelete(ADMIN, 'urn:li:structuredProperty:gone');
    const error = await errorOf(
      catalog.properties.upsertValues(EDITOR, DATASET, {
        properties: [
          { propertyUrn: 'urn:li:structuredProperty:unknown', values: [s('x')] }, // 0: no such property
          { propertyUrn: 'urn:li:structuredProperty:gone', values: [s('x')] }, // 1: soft-deleted
          { propertyUrn: RETENTION, values: [s('30')] }, // 2: a string for a number
          { propertyUrn: TIER, values: [s('foo'), s('bar')] }, // 3: SINGLE with two values
          { propertyUrn: REVIEWED, values: [s('2024-02-30')] }, // 4: not a real date
          { propertyUrn: OWNER, values: [s('urn:li:corpGroup:data')] }, // 5: URN of a type not allowed
          { propertyUrn: TAGS, values: [] }, // 6: no value
          { propertyUrn: TAGS, values: [s('again')] }, // 7: property twice
          { propertyUrn: NOTES, values: [d(1)] }, // 8: a number for rich text
        ],
      }),
    );
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details.map((x) => x.path)).toEqual([
      '/properties/0/propertyUrn',
      '/properties/1/propertyUrn',
      '/properties/2/values/0',
      '/properties/3/values',
      '/properties/4/values/0',
      '/properties/5/values/0',
      '/properties/6/values',
      '/properties/7/propertyUrn',
      '/properties/8/values/0',
    ]);
    // The soft-deleted property is named in its refusal.
    expect(error.details[1]?.message).toContain('urn:li:structuredProperty:gone');
    expect(strip(await catalog.properties.getValues(READER, DATASET))).toEqual([{ propertyUrn: TAGS, values: [s('kept')] }]);
  });

  it('accepts well-typed values of every type', async () => {
    const catalog = await setup();
    const left = await catalog.properties.upsertValues(EDITOR, DATASET, {
      properties: [
        { propertyUrn: REVIEWED, values: [s('2024-02-29')] },
        { propertyUrn: OWNER, values: [s('urn:li:corpuser:alice')] },
        { propertyUrn: RETENTION, values: [d(30)] },
        { propertyUrn: NOTES, values: [s('')] },
      ],
    });
    expect(left).toHaveLength(4);
    expect(
      await codeOf(catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: OWNER, values: [s('alice')] }] })),
    ).toBe('INVALID_INPUT');
  });

  it('refuses a property on an entity type it is not defined for, and entity types without structured properties', async () => {
    const catalog = await setup();
    expect(
      strip(await catalog.properties.upsertValues(EDITOR, FLOW, { properties: [{ propertyUrn: RETENTION, values: [d(30)] }] })),
    ).toHaveLength(1);
    const chart = await errorOf(
      catalog.properties.upsertValues(EDITOR, CHART, { properties: [{ propertyUrn: RETENTION, values: [d(30)] }] }),
    );
    expect(chart.details.map((x) => x.path)).toEqual(['/properties/0/propertyUrn']);
    expect(await codeOf(catalog.properties.upsertValues(EDITOR, 'urn:li:policy:p', { properties: [] }))).toBe('INVALID_INPUT');
    expect(await codeOf(catalog.properties.upsertValues(EDITOR, 'not a urn', { properties: [] }))).toBe('INVALID_INPUT');
  });

  it('sets immutable values once: afterwards they are neither changed nor removed', async () => {
    const catalog = await setup();
    await catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: FROZEN, values: [s('v1')] }] });
    const change = await errorOf(
      catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: FROZEN, values: [s('v2')] }] }),
    );
    expect(change.details.map((x) => x.path)).toEqual(['/properties/0/values']);
    const omitted = await errorOf(
      catalog.properties.upsertValues(EDITOR, DATASET, { properties: [{ propertyUrn: TIER, values: [s('foo')] }] }),
    );
    expect(omitted.details.map((x) => x.path)).toEqual(['/properties']);
    const removed = await errorOf(catalog.properties.removeValues(EDITOR, DATASET, [TIER, FROZEN]));
    expect(removed.details.map((x) => x.path)).toEqual(['/structuredPropertyUrns/1']);
    const patched = await errorOf(
      catalog.properties.patchValues(EDITOR, DATASET, { patch: [{ op: 'remove', path: `/properties/${FROZEN}` }] }),
    );
    expect(patched.code).toBe('INVALID_INPUT');
    const same = await catalog.properties.upsertValues(EDITOR, DATASET, {
      properties: [
        { propertyUrn: FROZEN, values: [s('v1')] },
        { propertyUrn: TIER, values: [s('foo')] },
      ],
    });
    expect(strip(same)).toEqual([
      { propertyUrn: FROZEN, values: [s('v1')] },
      { propertyUrn: TIER, values: [s('foo')] },
    ]);
  });

  it('needs EDIT_ENTITY_PROPERTIES to write values', async () => {
    const catalog = await setup();
    const body = { properties: [{ propertyUrn: TIER, values: [s('foo')] }] };
    expect(await codeOf(catalog.properties.upsertValues(READER, DATASET, body))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.removeValues(READER, DATASET, [TIER]))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.patchValues(READER, DATASET, { patch: [] }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.entities.upsertAspect(READER, DATASET, 'structuredProperties', body))).toBe('FORBIDDEN');
  });
});

describe('generic entity routes', () => {
  it('routes the structuredProperties aspect through the same checks, in single and bulk aspect writes', async () => {
    const catalog = await setup();
    const view = await catalog.entities.upsertAspect(EDITOR, DATASET, 'structuredProperties', {
      properties: [{ propertyUrn: TIER, values: [s('foo')] }],
    });
    expect(strip(view.aspects.structuredProperties?.value.properties as never)).toEqual([{ propertyUrn: TIER, values: [s('foo')] }]);
    expect(
      await codeOf(
        catalog.entities.upsertAspect(EDITOR, DATASET, 'structuredProperties', { properties: [{ propertyUrn: TIER, values: [s('no')] }] }),
      ),
    ).toBe('INVALID_INPUT');
    expect(
      await codeOf(
        catalog.entities.upsertMany(EDITOR, [
          { urn: DATASET_2, aspects: { structuredProperties: { properties: [{ propertyUrn: TIER, values: [s('no')] }] } } },
        ]),
      ),
    ).toBe('INVALID_INPUT');
    await catalog.entities.upsertMany(EDITOR, [
      { urn: DATASET_2, aspects: { structuredProperties: { properties: [{ propertyUrn: TIER, values: [s('foo')] }] } } },
    ]);
    expect(strip(await catalog.properties.getValues(READER, DATASET_2))).toEqual([{ propertyUrn: TIER, values: [s('foo')] }]);
  });

  it('soft-deletes and restores through the status aspect and the entity delete', async () => {
    const catalog = await setup();
    await catalog.entities.upsertAspect(ADMIN, TIER, 'status', { removed: true });
    expect((await catalog.properties.get(READER, TIER))?.removed).toBe(true);
    await catalog.entities.upsertAspect(ADMIN, TIER, 'status', { removed: false });
    expect((await catalog.properties.get(READER, TIER))?.removed).toBe(false);
    await catalog.entities.delete(ADMIN, TIER);
    expect((await catalog.properties.get(READER, TIER))?.removed).toBe(true);
    await catalog.entities.delete(ADMIN, TIER, { hard: true });
    expect(await catalog.properties.get(READER, TIER)).toBeUndefined();
    expect(await codeOf(catalog.entities.upsertAspect(ADMIN, RETENTION, 'status', { removed: 'yes' } as never))).toBe('INVALID_INPUT');
  });
});

describe('bulk values', () => {
  it('validates every item before writing any and reports item indexes', async () => {
    const catalog = await setup();
    const items = Array.from({ length: 1200 }, (_, i) => ({
      urn: `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`,
      properties: [{ propertyUrn: TAGS, values: [s(`v${i}`)] }],
    }));
    const bad = [...items, { urn: DATASET, properties: [{ propertyUrn: TIER, values: [s('nope')] }] }];
    const error = await errorOf(catalog.properties.upsertValuesMany(EDITOR, bad));
    expect(error.details.map((x) => x.path)).toEqual(['/1200/properties/0/values/0']);
    expect((await catalog.entities.list(READER, { entityType: 'dataset' })).length).toBe(0);
    const written = await catalog.properties.upsertValuesMany(EDITOR, items);
    expect(written).toHaveLength(1200);
    expect(strip(await catalog.properties.getValues(READER, items[1111]!.urn))).toEqual([{ propertyUrn: TAGS, values: [s('v1111')] }]);
  });
});
