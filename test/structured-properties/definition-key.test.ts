import { afterEach, describe, expect, it } from 'vitest';
import { definitionKey, definitionKeyOf, incarnationOf } from '../../src/index';
import { ADMIN, codeOf, openCatalog, READER, type TestCatalog } from './helpers';

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
});
