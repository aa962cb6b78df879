import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog } from '../../../src/index';
import { definitionKey, definitionKeyOf, incarnationOf } from '../../../src/core/properties/definition-key';
import { ADMIN, codeOf, DATASET, DATASET_2, openCatalog, READER, type TestCatalog } from './helpers';

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('definition keys', () => {
  it('are incarnation and version; nothing without a definition', () => {
    expect(definitionKey('inc-1', '20240614080000')).toBe('inc-1:20240614080000');
    expect(definitionKey('inc-1', undefined)).toBe('inc-1:');
    expect(definitionKeyOf(undefined)).toBeUndefined();
    const aspect = { value: { qualifiedName: 'x', version: '20240614080000' }, systemMetadata: { incarnation: 'inc-2' } };
    expect(incarnationOf(aspect)).toBe('inc-2');
    expect(definitionKeyOf(aspect)).toBe('inc-2:20240614080000');
  });

  it('resolve a filter field to the current key; refuse unknown and soft-deleted properties', async () => {
    t = openCatalog();
    const { catalog } = t;
    const created = await catalog.properties.create(ADMIN, { qualifiedName: 'io.score', valueType: 'number', entityTypes: ['dataset'] });
    const resolved = await catalog.properties.resolveFilterField(READER, 'io.score');
    expect(resolved).toEqual({ propertyUrn: created.urn, definitionKey: created.definitionKey, valueKind: 'number', valueType: 'number' });
    const bumped = await catalog.properties.update(ADMIN, { urn: created.urn, description: 'now versioned', version: '20250101000000' });
    expect(bumped.definitionKey).toBe(`${created.definitionKey}20250101000000`);
    expect((await catalog.properties.resolveFilterField(READER, 'io.score')).definitionKey).toBe(bumped.definitionKey);
    expect(await codeOf(catalog.properties.resolveFilterField(READER, 'io.unknown'))).toBe('INVALID_INPUT');
    await catalog.properties.softDelete(ADMIN, created.urn);
    expect(await codeOf(catalog.properties.resolveFilterField(READER, 'io.score'))).toBe('INVALID_INPUT');
    // A version bump queues the removal of the values it superseded.
    expect((await catalog.listJobs()).map((j) => j.type)).toEqual(['structuredProperty.removeStaleValues']);
  });

  it('reach a second process on the same file at once: cached definitions give way to its changes', async () => {
    t = openCatalog();
    const { catalog } = t;
    const other = createCatalog({ adapter: createSqliteAdapter({ filename: t.file }), superUsers: [ADMIN], jobs: { background: false } });
    try {
      const created = await catalog.properties.create(ADMIN, { qualifiedName: 'io.shared', valueType: 'string', entityTypes: ['dataset'] });
      const filter = { types: ['DATASET' as const], orFilters: [{ and: [{ field: 'structuredProperties.io.shared', values: ['x'] }] }] };
      // Both catalogs read (and cache) the definition.
      expect((await catalog.search.scroll(READER, filter)).total).toBe(0);
      expect((await other.properties.resolveFilterField(READER, 'io.shared')).definitionKey).toBe(created.definitionKey);
      // The other one changes it: a version bump, then a soft delete. This one sees each change at once.
      const bumped = await other.properties.update(ADMIN, { urn: created.urn, version: '20260101000000', description: 'v2' });
      expect((await catalog.properties.resolveFilterField(READER, 'io.shared')).definitionKey).toBe(bumped.definitionKey);
      await other.properties.softDelete(ADMIN, created.urn);
      expect(await codeOf(catalog.search.scroll(READER, filter))).toBe('INVALID_INPUT');
      await other.properties.restore(ADMIN, created.urn);
      expect((await catalog.search.scroll(READER, filter)).total).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('a search alone notices a new version made by another process: superseded values stop matching, new ones match', async () => {
    t = openCatalog();
    const { catalog } = t;
    const other = createCatalog({ adapter: createSqliteAdapter({ filename: t.file }), superUsers: [ADMIN], jobs: { background: false } });
    try {
      const created = await catalog.properties.create(ADMIN, { qualifiedName: 'io.stage', valueType: 'string', entityTypes: ['dataset'] });
      await catalog.properties.upsertValues(ADMIN, DATASET, { properties: [{ propertyUrn: created.urn, values: [{ string: 'live' }] }] });
      const filter = { types: ['DATASET' as const], orFilters: [{ and: [{ field: 'structuredProperties.io.stage', values: ['live'] }] }] };
      const urns = async () => (await catalog.search.scroll(READER, filter)).searchResults.map((r) => r.entity.urn);
      // Twice: the second search resolves the filter from the cached definition.
      expect(await urns()).toEqual([DATASET]);
      expect(await urns()).toEqual([DATASET]);
      // The other process versions the property and writes a value under the new version. Nothing in
      // this process reads the definition before the search: the search itself must see the change.
      await other.properties.update(ADMIN, { urn: created.urn, version: '20260101000000', description: 'v2' });
      await other.properties.upsertValues(ADMIN, DATASET_2, { properties: [{ propertyUrn: created.urn, values: [{ string: 'live' }] }] });
      expect(await urns()).toEqual([DATASET_2]);
      expect(await urns()).toEqual([DATASET_2]);
    } finally {
      await other.close();
    }
  });
});
