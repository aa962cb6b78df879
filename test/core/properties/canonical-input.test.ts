import { afterEach, describe, expect, it } from 'vitest';
import { createStructuredPropertyFromGraphql, upsertStructuredPropertiesFromGraphql } from '../../../src/graphql/property-input';
import { decodeYamlDefinitions } from '../../../src/http/property-yaml';
import { ADMIN, codeOf, DATASET, EDITOR, errorOf, openCatalog, READER, type TestCatalog } from './helpers';

/**
 * `catalog.properties` takes the canonical input only (the aspect's JSON with its URN); the transports'
 * decoders hand what they found as `prior`, reported with the rules' violations after the actor is admitted.
 */

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const TIER = 'urn:li:structuredProperty:io.canonical.tier';

describe('catalog.properties takes the canonical input', () => {
  it('creates from the aspect JSON with its urn, and reports violations in its paths', async () => {
    t = openCatalog();
    const { catalog } = t;
    const view = await catalog.properties.create(ADMIN, {
      urn: TIER,
      valueType: 'string',
      entityTypes: ['dataset'],
      allowedValues: [{ value: { string: 'gold' } }],
    });
    expect(view.urn).toBe(TIER);
    expect(view.definition.qualifiedName).toBe('io.canonical.tier');
    const bad = await errorOf(
      catalog.properties.create(ADMIN, {
        qualifiedName: 'io.canonical.bad',
        valueType: 'number',
        entityTypes: ['dataset'],
        allowedValues: [{ value: { string: 'x' } }],
      }),
    );
    expect(bad.details.map((d) => d.path)).toEqual(['/allowedValues/0/value']);
  });

  it('upsertMany reports item i under /<i>, prior violations first, in one answer, and writes nothing', async () => {
    t = openCatalog();
    const { catalog } = t;
    const refused = await errorOf(
      catalog.properties.upsertMany(
        ADMIN,
        [
          { qualifiedName: 'io.canonical.ok', valueType: 'string', entityTypes: ['dataset'] },
          undefined,
          { valueType: 'colour', entityTypes: ['dataset'] },
        ],
        { prior: [[], [{ path: '/1/type', message: 'a decoder could not read this item' }]] },
      ),
    );
    expect(refused.code).toBe('INVALID_INPUT');
    expect(refused.details.map((d) => d.path)).toEqual(['/1/type', '/2/qualifiedName', '/2/valueType']);
    expect(await catalog.properties.get(ADMIN, 'urn:li:structuredProperty:io.canonical.ok')).toBeUndefined();
    const written = await catalog.properties.upsertMany(ADMIN, [
      { qualifiedName: 'io.canonical.ok', valueType: 'string', entityTypes: ['dataset'] },
      { urn: TIER, valueType: 'string', entityTypes: ['dataset'] },
    ]);
    expect(written.map((r) => [r.property.urn, r.outcome])).toEqual([
      ['urn:li:structuredProperty:io.canonical.ok', 'created'],
      [TIER, 'created'],
    ]);
  });

  it('admits the actor before it reports prior violations (FORBIDDEN, not INVALID_INPUT)', async () => {
    t = openCatalog();
    const { catalog } = t;
    const prior = [{ path: '/colour', message: 'is not an allowed field' }];
    expect(await codeOf(catalog.properties.create(READER, undefined, { prior }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.update(READER, { urn: TIER }, { prior }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.upsertValues(READER, DATASET, { properties: [] }, { prior }))).toBe('FORBIDDEN');
    expect(await codeOf(catalog.properties.create(ADMIN, undefined, { prior }))).toBe('INVALID_INPUT');
  });

  it('the transports decode, then call the canonical methods: the same definition and values either way', async () => {
    t = openCatalog();
    const { catalog } = t;
    const viaGraphql = await createStructuredPropertyFromGraphql(catalog, ADMIN, {
      id: 'io.canonical.days',
      valueType: 'number',
      entityTypes: ['dataset'],
      allowedValues: [{ numberValue: 30 }],
    });
    const { inputs, prior } = decodeYamlDefinitions([
      { id: 'io.canonical.days', type: 'number', entity_types: ['dataset'], allowed_values: [{ value: 30 }] },
    ]);
    expect(prior).toEqual([[]]);
    const [viaYaml] = await catalog.properties.upsertMany(ADMIN, inputs);
    expect(viaYaml!.outcome).toBe('unchanged');
    expect(viaYaml!.property.definition).toEqual(viaGraphql.definition);
    const values = await upsertStructuredPropertiesFromGraphql(catalog, EDITOR, DATASET, [
      { structuredPropertyUrn: viaGraphql.urn, values: [{ numberValue: 30 }] },
    ]);
    expect(values.map((a) => a.values)).toEqual([[{ double: 30 }]]);
  });
});
