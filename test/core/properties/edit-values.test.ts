import { describe, expect, it } from 'vitest';
import { freshAdapters } from '../../support/adapters';
import { createCatalog, type Catalog, type CatalogError, type PropertyValuesEdit } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const READER = 'urn:li:corpuser:reader';
const EDITOR = 'urn:li:corpuser:editor';
const TIER = 'urn:li:structuredProperty:edit.tier';
const DAYS = 'urn:li:structuredProperty:edit.days';
const TAGS = 'urn:li:structuredProperty:edit.tags';
const FIXED = 'urn:li:structuredProperty:edit.fixed';
const OLD = 'urn:li:structuredProperty:edit.old';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,edit.t${i},PROD)`;
const CHART = 'urn:li:chart:(looker,edit.c1)';
const ADAPTERS = freshAdapters();

async function open(kind: string): Promise<Catalog> {
  const catalog = createCatalog({
    adapter: ADAPTERS[kind as keyof typeof ADAPTERS](),
    superUsers: [ADMIN],
    policies: [{ name: 'editors', actors: [EDITOR], privileges: ['EDIT_ENTITY_PROPERTIES'] }],
    jobs: { background: false },
  });
  const define = (qualifiedName: string, extra: Record<string, unknown>) =>
    catalog.properties.create(ADMIN, { qualifiedName, valueType: 'string', entityTypes: ['dataset'], ...extra });
  await define('edit.tier', { allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }] });
  await define('edit.days', { valueType: 'number' });
  await define('edit.tags', { cardinality: 'MULTIPLE' });
  await define('edit.fixed', { immutable: true });
  await define('edit.old', {});
  await catalog.entities.upsertMany(
    ADMIN,
    [0, 1, 2, 3, 4].map((i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
  );
  await catalog.entities.upsertMany(ADMIN, [{ urn: CHART, aspects: { chartInfo: { title: 'c1' } } }]);
  await catalog.properties.upsertValues(ADMIN, dataset(0), {
    properties: [
      { propertyUrn: TIER, values: [{ string: 'gold' }] },
      { propertyUrn: FIXED, values: [{ string: 'once' }] },
      { propertyUrn: OLD, values: [{ string: 'kept' }] },
    ],
  });
  await catalog.properties.softDelete(ADMIN, OLD);
  return catalog;
}

const values = async (catalog: Catalog, urn: string) =>
  Object.fromEntries((await catalog.properties.getValues(ADMIN, urn)).map((a) => [a.propertyUrn, a.values]));

describe.each(Object.keys(ADAPTERS))('catalog.properties.editValues (%s)', (kind) => {
  it('sets and removes values on many entities, counting what changed; an empty edit and an equal value change nothing', async () => {
    const catalog = await open(kind);
    const edits: PropertyValuesEdit[] = [
      { urn: dataset(0), set: [{ propertyUrn: TIER, values: [{ string: 'silver' }] }], remove: [TAGS] },
      {
        urn: dataset(1),
        set: [
          { propertyUrn: DAYS, values: [{ double: 90 }] },
          { propertyUrn: TAGS, values: [{ string: 'a' }, { string: 'b' }] },
        ],
      },
      { urn: dataset(2) },
      { urn: dataset(3), set: [{ propertyUrn: DAYS, values: [{ double: 1.5 }] }] },
    ];
    const progress: Array<{ done: number; total: number }> = [];
    const summary = await catalog.properties.editValues(EDITOR, edits, { chunkEntities: 2, onChunk: (p) => progress.push(p) });
    expect(summary).toEqual({ dryRun: false, entities: 4, changed: 3, unchanged: 1, set: 4, removed: 0 });
    expect(progress).toEqual([
      { done: 2, total: 4 },
      { done: 4, total: 4 },
    ]);
    expect(await values(catalog, dataset(0))).toEqual({ [TIER]: [{ string: 'silver' }], [FIXED]: [{ string: 'once' }] });
    expect(await values(catalog, dataset(1))).toEqual({ [DAYS]: [{ double: 90 }], [TAGS]: [{ string: 'a' }, { string: 'b' }] });

    const again = await catalog.properties.editValues(EDITOR, [
      { urn: dataset(1), set: [{ propertyUrn: DAYS, values: [{ double: 90 }] }], remove: [TAGS] },
      { urn: dataset(3), remove: [DAYS] },
    ]);
    expect(again).toMatchObject({ changed: 2, set: 0, removed: 2 });
    expect(await values(catalog, dataset(1))).toEqual({ [DAYS]: [{ double: 90 }] });
    expect(await values(catalog, dataset(3))).toEqual({});
    // The soft-deleted property's hidden value is kept (it comes back on restore).
    await catalog.properties.restore(ADMIN, OLD);
    expect(await values(catalog, dataset(0))).toMatchObject({ [OLD]: [{ string: 'kept' }] });
    await catalog.close();
  });

  it('checks every edit first, lists every violation with its path, and writes nothing', async () => {
    const catalog = await open(kind);
    const edits: PropertyValuesEdit[] = [
      { urn: dataset(1), set: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }], remove: [OLD] },
      { urn: dataset(2), set: [{ propertyUrn: TIER, values: [{ string: 'bronze' }] }] },
      {
        urn: dataset(3),
        set: [
          { propertyUrn: DAYS, values: [{ string: 'ninety' }] },
          { propertyUrn: TIER, values: [{ string: 'gold' }, { string: 'silver' }] },
        ],
      },
      { urn: dataset(0), set: [{ propertyUrn: FIXED, values: [{ string: 'twice' }] }] },
      { urn: dataset(9), set: [{ propertyUrn: TAGS, values: [{ string: 'x' }] }] },
      { urn: CHART, set: [{ propertyUrn: TAGS, values: [{ string: 'x' }] }] },
      { urn: dataset(2), set: [{ propertyUrn: TAGS, values: [{ string: 'x' }] }] },
      { urn: 'not a urn' },
      { urn: dataset(4), remove: ['urn:li:structuredProperty:edit.none'] },
    ];
    const error = (await catalog.properties.editValues(EDITOR, edits).catch((e: unknown) => e)) as CatalogError;
    expect(error.code).toBe('INVALID_INPUT');
    const byPath = Object.fromEntries(error.details.map((d) => [d.path, d.message]));
    expect(Object.keys(byPath)).toEqual([
      '/0/remove/0',
      '/1/set/0/values/0',
      '/2/set/0/values/0',
      '/2/set/1/values',
      '/3/set/0/values',
      '/4/urn',
      '/5/set/0/propertyUrn',
      '/6/urn',
      '/7/urn',
      '/8/remove/0',
    ]);
    expect(byPath['/0/remove/0']).toContain('soft-deleted');
    expect(byPath['/1/set/0/values/0']).toContain('should be one of');
    expect(byPath['/2/set/0/values/0']).toContain('should be a number');
    expect(byPath['/2/set/1/values']).toContain('cardinality SINGLE');
    expect(byPath['/3/set/0/values']).toContain('is immutable');
    expect(byPath['/4/urn']).toContain('does not exist');
    expect(byPath['/5/set/0/propertyUrn']).toContain('cannot be set on chart entities');
    expect(byPath['/6/urn']).toContain('is edited at /1 already');
    expect(byPath['/8/remove/0']).toContain('does not exist');
    expect(error.message).toContain('invalid structured property value edits');
    expect(await values(catalog, dataset(1))).toEqual({});
    await catalog.close();
  });

  it('a dry run checks under a real read and counts, writing nothing', async () => {
    const catalog = await open(kind);
    const summary = await catalog.properties.editValues(
      EDITOR,
      [
        {
          urn: dataset(0),
          set: [
            { propertyUrn: TIER, values: [{ string: 'gold' }] },
            { propertyUrn: TAGS, values: [{ string: 'x' }] },
          ],
        },
        { urn: dataset(1), remove: [TIER] },
      ],
      { dryRun: true },
    );
    expect(summary).toEqual({ dryRun: true, entities: 2, changed: 1, unchanged: 1, set: 1, removed: 0 });
    expect(await values(catalog, dataset(0))).toEqual({ [TIER]: [{ string: 'gold' }], [FIXED]: [{ string: 'once' }] });
    const refused = (await catalog.properties
      .editValues(EDITOR, [{ urn: dataset(0), remove: [FIXED] }], { dryRun: true })
      .catch((e: unknown) => e)) as CatalogError;
    expect(refused.details).toEqual([{ path: '/0/remove/0', message: expect.stringContaining('immutable') }]);
    await catalog.close();
  });

  it('needs EDIT_ENTITY_PROPERTIES, even for a dry run', async () => {
    const catalog = await open(kind);
    for (const dryRun of [false, true]) {
      const error = (await catalog.properties
        .editValues(READER, [{ urn: dataset(1), set: [{ propertyUrn: TAGS, values: [{ string: 'x' }] }] }], { dryRun })
        .catch((e: unknown) => e)) as CatalogError;
      expect(error.code).toBe('FORBIDDEN');
      expect(error.message).toContain('EDIT_ENTITY_PROPERTIES');
    }
    expect(await values(catalog, dataset(1))).toEqual({});
    await catalog.close();
  });
});
