import { afterEach, describe, expect, it } from 'vitest';
import type { Catalog, PropertyPatchOperation } from '../../../src/index';
import { ADMIN, codeOf, DATASET, EDITOR, errorOf, openCatalog, READER, type TestCatalog } from './helpers';

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
const RETENTION_02 = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime02';
const SLASHED = 'urn:li:structuredProperty:team/tier~x';
const KEYS = { properties: ['propertyUrn'] };

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function setup(): Promise<Catalog> {
  t = openCatalog();
  const { catalog } = t;
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.acryl.privacy.retentionTime',
    valueType: 'number',
    cardinality: 'MULTIPLE',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { double: 30 } }, { value: { double: 60 } }, { value: { double: 365 } }],
  });
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'io.acryl.privacy.retentionTime02',
    valueType: 'string',
    entityTypes: ['dataset'],
    allowedValues: [{ value: { string: 'foo2' } }, { value: { string: 'bar2' } }],
  });
  await catalog.properties.create(ADMIN, { qualifiedName: 'team/tier~x', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.properties.upsertValues(EDITOR, DATASET, {
    properties: [
      { propertyUrn: RETENTION, values: [{ double: 60 }] },
      { propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] },
    ],
  });
  return catalog;
}

const plain = (list: Array<{ propertyUrn: string; values: unknown[] }>) => list.map(({ propertyUrn, values }) => ({ propertyUrn, values }));
const patch = (catalog: Catalog, ops: PropertyPatchOperation[]) =>
  catalog.properties.patchValues(EDITOR, DATASET, { patch: ops, arrayPrimaryKeys: KEYS });

describe('JSON Patch on structured properties', () => {
  it('removes the element whose propertyUrn is the path URN (the tutorial request) and returns what is left', async () => {
    const catalog = await setup();
    const left = await patch(catalog, [{ op: 'remove', path: `/properties/${RETENTION}` }]);
    expect(plain(left)).toEqual([{ propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] }]);
  });

  it('adds a property (inserted at the end) or replaces its values when present', async () => {
    const catalog = await setup();
    await patch(catalog, [{ op: 'remove', path: `/properties/${RETENTION}` }]);
    const added = await patch(catalog, [
      { op: 'add', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION, values: [{ double: 365 }] } },
    ]);
    expect(plain(added)).toEqual([
      { propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] },
      { propertyUrn: RETENTION, values: [{ double: 365 }] },
    ]);
    const replacedByAdd = await patch(catalog, [
      { op: 'add', path: `/properties/${RETENTION_02}`, value: { values: [{ string: 'foo2' }] } },
    ]);
    expect(plain(replacedByAdd)[0]).toEqual({ propertyUrn: RETENTION_02, values: [{ string: 'foo2' }] });
    const replaced = await patch(catalog, [
      { op: 'replace', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION, values: [{ double: 30 }, { double: 60 }] } },
    ]);
    expect(plain(replaced)[1]).toEqual({ propertyUrn: RETENTION, values: [{ double: 30 }, { double: 60 }] });
    const deeper = await patch(catalog, [
      { op: 'test', path: `/properties/${RETENTION}/values/0`, value: { double: 30 } },
      { op: 'add', path: `/properties/${RETENTION}/values/-`, value: { double: 365 } },
    ]);
    expect(plain(deeper)[1]?.values).toEqual([{ double: 30 }, { double: 60 }, { double: 365 }]);
    expect(plain(await catalog.properties.getValues(READER, DATASET))).toEqual(plain(deeper));
  });

  it('unescapes ~1 and ~0 in the URN of the path (RFC 6901)', async () => {
    const catalog = await setup();
    const added = await patch(catalog, [
      { op: 'add', path: '/properties/urn:li:structuredProperty:team~1tier~0x', value: { values: [{ string: 'gold' }] } },
    ]);
    expect(plain(added)[2]).toEqual({ propertyUrn: SLASHED, values: [{ string: 'gold' }] });
    const removed = await patch(catalog, [{ op: 'remove', path: '/properties/urn:li:structuredProperty:team~1tier~0x' }]);
    expect(removed).toHaveLength(2);
  });

  it('is atomic: a failed test is CONFLICT and changes nothing', async () => {
    const catalog = await setup();
    const before = await catalog.properties.getValues(READER, DATASET);
    const error = await errorOf(
      patch(catalog, [
        { op: 'remove', path: `/properties/${RETENTION_02}` },
        { op: 'test', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION, values: [{ double: 30 }] } },
      ]),
    );
    expect(error.code).toBe('CONFLICT');
    expect(error.details.map((d) => d.path)).toEqual(['/patch/1']);
    expect(await catalog.properties.getValues(READER, DATASET)).toEqual(before);
    const passing = await patch(catalog, [
      { op: 'test', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION, values: [{ double: 60 }] } },
      { op: 'remove', path: `/properties/${RETENTION_02}` },
    ]);
    expect(plain(passing)).toEqual([{ propertyUrn: RETENTION, values: [{ double: 60 }] }]);
  });

  it('refuses, changing nothing: a missing target, an unsupported op, a bad path, a value its definition refuses', async () => {
    const catalog = await setup();
    const before = await catalog.properties.getValues(READER, DATASET);
    // Removing a whole property that is not set is a no-op (set = remove then add); a member inside one is missing.
    const missing = await errorOf(
      patch(catalog, [
        { op: 'remove', path: '/properties/urn:li:structuredProperty:io.acryl.privacy.retentionTime02' },
        { op: 'remove', path: `/properties/${SLASHED.replace('/', '~1')}/values/0` },
      ]),
    );
    expect([missing.code, missing.details.map((d) => d.path)]).toEqual(['INVALID_INPUT', ['/patch/1']]);
    const move = await errorOf(
      patch(catalog, [{ op: 'move', path: `/properties/${RETENTION}`, from: `/properties/${RETENTION_02}` } as never]),
    );
    expect(move.details.map((d) => d.path)).toEqual(['/patch/0/op']);
    const paths = await errorOf(
      patch(catalog, [
        { op: 'remove', path: '/aspects/x' },
        { op: 'remove', path: '/properties/not-a-urn' },
        { op: 'add', path: `/properties/${RETENTION}` },
      ]),
    );
    expect(paths.details.map((d) => d.path)).toEqual(['/patch/0/path', '/patch/1/path', '/patch/2/value']);
    const notAllowed = await errorOf(
      patch(catalog, [{ op: 'add', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION, values: [{ double: 45 }] } }]),
    );
    expect(notAllowed.details).toEqual([
      { path: `/properties/${RETENTION}/values/0`, message: `value 45 of ${RETENTION} should be one of [30,60,365]` },
    ]);
    const mismatch = await errorOf(
      patch(catalog, [{ op: 'add', path: `/properties/${RETENTION}`, value: { propertyUrn: RETENTION_02, values: [{ double: 30 }] } }]),
    );
    expect(mismatch.details.map((d) => d.path)).toEqual([`/properties/${RETENTION}/propertyUrn`]);
    const shape = await errorOf(patch(catalog, [{ op: 'add', path: `/properties/${RETENTION}`, value: { values: [{ int: 30 }] } }]));
    expect(shape.code).toBe('INVALID_INPUT');
    const keys = await errorOf(catalog.properties.patchValues(EDITOR, DATASET, { patch: [], arrayPrimaryKeys: { properties: ['urn'] } }));
    expect(keys.details.map((d) => d.path)).toEqual(['/arrayPrimaryKeys']);
    expect(await catalog.properties.getValues(READER, DATASET)).toEqual(before);
  });

  it('works without arrayPrimaryKeys (the same addressing) and on an entity without values yet', async () => {
    const catalog = await setup();
    const other = 'urn:li:dataset:(urn:li:dataPlatform:hive,fresh,PROD)';
    const added = await catalog.properties.patchValues(EDITOR, other, {
      patch: [{ op: 'add', path: `/properties/${RETENTION}`, value: { values: [{ double: 30 }] } }],
    });
    expect(plain(added)).toEqual([{ propertyUrn: RETENTION, values: [{ double: 30 }] }]);
    expect(
      await catalog.properties.patchValues(EDITOR, 'urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)', {
        patch: [{ op: 'remove', path: `/properties/${RETENTION}` }],
      }),
    ).toEqual([]);
    expect(
      await codeOf(
        catalog.properties.patchValues(EDITOR, 'urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)', {
          patch: [{ op: 'replace', path: `/properties/${RETENTION}`, value: { values: [{ double: 30 }] } }],
        }),
      ),
    ).toBe('INVALID_INPUT');
  });

  it('refuses patching a soft-deleted property, naming it, and keeps its hidden values', async () => {
    const catalog = await setup();
    await catalog.properties.softDelete(ADMIN, RETENTION);
    expect(plain(await catalog.properties.getValues(READER, DATASET))).toEqual([
      { propertyUrn: RETENTION_02, values: [{ string: 'bar2' }] },
    ]);
    const refused = await errorOf(patch(catalog, [{ op: 'add', path: `/properties/${RETENTION}`, value: { values: [{ double: 30 }] } }]));
    expect(refused.code).toBe('INVALID_INPUT');
    expect(refused.message).toContain(RETENTION);
    // A patch of another property leaves the hidden values in place.
    await patch(catalog, [{ op: 'remove', path: `/properties/${RETENTION_02}` }]);
    await catalog.properties.restore(ADMIN, RETENTION);
    expect(plain(await catalog.properties.getValues(READER, DATASET))).toEqual([{ propertyUrn: RETENTION, values: [{ double: 60 }] }]);
  });
});
