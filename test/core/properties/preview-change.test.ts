import { describe, expect, it, vi } from 'vitest';
import { adaptersWithPostgres } from '../../support/postgres';
import { previewYamlDefinitions } from '../../../src/http/property-yaml';
import { createCatalog, type Catalog, type CatalogError, type DefinitionChangePreview, type PropertyValue } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const EDITOR = 'urn:li:corpuser:editor';
const TIER = 'urn:li:structuredProperty:preview.tier';
const OWNER = 'urn:li:structuredProperty:preview.owner';
const SIZE = 'urn:li:structuredProperty:preview.size';
const DATASET_TYPE = 'urn:li:entityType:datahub.dataset';
const FLOW_TYPE = 'urn:li:entityType:datahub.dataFlow';
const STRING = 'urn:li:dataType:datahub.string';
const ADAPTERS = await adaptersWithPostgres('test/core/properties/preview-change.test.ts');

// The brute force reads 300 entities one at a time: seconds on PostgreSQL, more on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,preview.t${i},PROD)`;
const flow = (i: number) => `urn:li:dataFlow:(airflow,preview_f${i},prod)`;
const TIERS = ['gold', 'silver', 'bronze', 'tin'];

/** The tier property as stored: MULTIPLE strings from TIERS on datasets and flows, version 1. */
const tierDefinition = {
  urn: TIER,
  qualifiedName: 'preview.tier',
  valueType: STRING,
  entityTypes: [DATASET_TYPE, FLOW_TYPE],
  cardinality: 'MULTIPLE' as const,
  allowedValues: TIERS.map((t) => ({ value: { string: t } })),
  version: '20240101000000',
};
const ownerDefinition = {
  urn: OWNER,
  qualifiedName: 'preview.owner',
  valueType: STRING,
  entityTypes: [DATASET_TYPE],
  cardinality: 'MULTIPLE' as const,
};
const sizeDefinition = {
  urn: SIZE,
  qualifiedName: 'preview.size',
  valueType: 'urn:li:dataType:datahub.number',
  entityTypes: [DATASET_TYPE],
  cardinality: 'SINGLE' as const,
};

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function pick<T>(next: () => number, from: readonly T[], count: number): T[] {
  const pool = [...from];
  const out: T[] = [];
  while (out.length < count && pool.length) out.push(pool.splice(Math.floor(next() * pool.length), 1)[0]!);
  return out;
}

async function open(kind: string): Promise<{ catalog: Catalog; urns: string[] }> {
  const catalog = createCatalog({
    adapter: ADAPTERS[kind]!(),
    superUsers: [ADMIN],
    policies: [{ actors: [EDITOR], privileges: ['EDIT_ENTITY_PROPERTIES', 'EDIT_ENTITY'] }],
    jobs: { background: false },
  });
  for (const definition of [tierDefinition, ownerDefinition, sizeDefinition]) await catalog.properties.upsert(ADMIN, definition);
  const next = random(kind.length * 7919 + 28);
  const urns = [...Array.from({ length: 240 }, (_, i) => dataset(i)), ...Array.from({ length: 60 }, (_, i) => flow(i))];
  const items = urns.map((urn) => {
    const properties: Array<{ propertyUrn: string; values: PropertyValue[] }> = [];
    if (next() < 0.6)
      properties.push({ propertyUrn: TIER, values: pick(next, TIERS, 1 + Math.floor(next() * 3)).map((t) => ({ string: t })) });
    if (urn.startsWith('urn:li:dataset') && next() < 0.4) {
      const owners = pick(
        next,
        ['urn:li:corpuser:ann', 'urn:li:corpuser:bob', 'ann', 'team-x', 'urn:li:corpGroup:data'],
        1 + Math.floor(next() * 2),
      );
      properties.push({ propertyUrn: OWNER, values: owners.map((o) => ({ string: o })) });
    }
    if (urn.startsWith('urn:li:dataset') && next() < 0.3)
      properties.push({ propertyUrn: SIZE, values: [{ double: Math.floor(next() * 5) }] });
    const removed = next() < 0.08;
    return {
      urn,
      aspects: {
        ...(properties.length ? { structuredProperties: { properties } } : {}),
        ...(removed ? { status: { removed: true } } : {}),
        ...(!properties.length && !removed ? { status: { removed: false } } : {}),
      },
    };
  });
  await catalog.entities.upsertMany(ADMIN, items);
  return { catalog, urns };
}

/**
 * Every entity's values of each property, read one entity at a time: the brute force the preview must
 * agree with (property URN → entity URN → values).
 */
async function valuesOfAll(catalog: Catalog, urns: readonly string[]): Promise<Map<string, Map<string, PropertyValue[]>>> {
  const out = new Map([TIER, OWNER, SIZE].map((p) => [p, new Map<string, PropertyValue[]>()]));
  for (const urn of urns) {
    for (const assignment of await catalog.properties.getValues(ADMIN, urn))
      if (assignment.values.length) out.get(assignment.propertyUrn)?.set(urn, assignment.values);
  }
  return out;
}

const text = (v: PropertyValue) => ('string' in v ? v.string : String(v.double));

/** `affected` equals the brute-force count; every sampled entity is truly affected and shows its values. */
function expectMatches(
  preview: DefinitionChangePreview,
  held: Map<string, PropertyValue[]>,
  affected: (urn: string, values: PropertyValue[]) => boolean,
) {
  const expected = [...held].filter(([urn, values]) => affected(urn, values)).map(([urn]) => urn);
  expect(preview.affected).toBe(expected.length);
  expect(preview.sample.length).toBe(Math.min(10, expected.length));
  for (const { urn, values } of preview.sample) {
    expect(expected).toContain(urn);
    expect(values).toEqual(held.get(urn));
  }
  const sampled = preview.sample.map((s) => s.urn);
  expect(sampled).toEqual([...sampled].sort());
  return expected.length;
}

describe.each(Object.keys(ADAPTERS))('previewChange: the impact of a definition change (%s)', (kind) => {
  it('counts what each kind of breaking change would invalidate, as a brute force over every entity does, and writes nothing', async () => {
    const { catalog, urns } = await open(kind);
    const held = await valuesOfAll(catalog, urns);
    const [tiers, owners, sizes] = [held.get(TIER)!, held.get(OWNER)!, held.get(SIZE)!];
    const before = await catalog.changes.read(ADMIN, { limit: 1000 });
    const has = (values: PropertyValue[], wanted: readonly string[]) => values.some((v) => wanted.includes(text(v)));

    const removed = await catalog.properties.previewChange(ADMIN, {
      ...tierDefinition,
      allowedValues: ['silver', 'bronze'].map((t) => ({ value: { string: t } })),
    });
    expect(removed).toMatchObject({ urn: TIER, outcome: 'refused', breaking: true });
    expect(removed.reasons.join(' ')).toContain('"gold", "tin"');
    expect(expectMatches(removed, tiers, (_, values) => has(values, ['gold', 'tin']))).toBeGreaterThan(10);

    const single = await catalog.properties.previewChange(ADMIN, { ...tierDefinition, cardinality: 'SINGLE' });
    expect(single).toMatchObject({ outcome: 'refused', breaking: true });
    expect(single.reasons.join(' ')).toContain('MULTIPLE to SINGLE');
    expect(expectMatches(single, tiers, (_, values) => values.length > 1)).toBeGreaterThan(10);

    const noFlows = await catalog.properties.previewChange(ADMIN, { ...tierDefinition, entityTypes: [DATASET_TYPE] });
    expect(noFlows.reasons.join(' ')).toContain(FLOW_TYPE);
    expect(expectMatches(noFlows, tiers, (urn) => urn.startsWith('urn:li:dataFlow'))).toBeGreaterThan(10);

    // Several rules at once: an entity counts once, whichever rules it breaks.
    const all = await catalog.properties.previewChange(ADMIN, {
      ...tierDefinition,
      cardinality: 'SINGLE',
      entityTypes: [DATASET_TYPE],
      allowedValues: ['gold', 'bronze', 'tin'].map((t) => ({ value: { string: t } })),
    });
    expect(all.reasons).toHaveLength(4);
    expectMatches(all, tiers, (urn, values) => values.length > 1 || urn.startsWith('urn:li:dataFlow') || has(values, ['silver']));

    // With a greater version the change is accepted and every value of the current version is hidden.
    const bumped = await catalog.properties.previewChange(ADMIN, { ...tierDefinition, cardinality: 'SINGLE', version: '20250101000000' });
    expect(bumped).toMatchObject({ outcome: 'updated', breaking: true });
    expect(bumped.reasons.join(' ')).toContain('20240101000000 to 20250101000000');
    expectMatches(bumped, tiers, () => true);
    const older = await catalog.properties.previewChange(ADMIN, { ...tierDefinition, version: '20230101000000' });
    expect(older).toMatchObject({ outcome: 'refused', breaking: false, affected: 0 });
    expect(older.reasons.join(' ')).toContain('older than the stored version');

    // A value type: only the values the new type refuses; a number property turning to text: all of them.
    const toUrn = await catalog.properties.previewChange(ADMIN, { ...ownerDefinition, valueType: 'urn:li:dataType:datahub.urn' });
    expect(expectMatches(toUrn, owners, (_, values) => has(values, ['ann', 'team-x']))).toBeGreaterThan(0);
    const onlyUsers = await catalog.properties.previewChange(ADMIN, {
      ...ownerDefinition,
      valueType: 'urn:li:dataType:datahub.urn',
      typeQualifier: { allowedTypes: ['urn:li:entityType:datahub.corpuser'] },
    });
    expectMatches(onlyUsers, owners, (_, values) => has(values, ['ann', 'team-x', 'urn:li:corpGroup:data']));
    const listed = await catalog.properties.previewChange(ADMIN, {
      ...ownerDefinition,
      allowedValues: [{ value: { string: 'ann' } }, { value: { string: 'team-x' } }],
    });
    expect(listed.breaking).toBe(true);
    expectMatches(listed, owners, (_, values) => values.some((v) => !['ann', 'team-x'].includes(text(v))));
    const toText = await catalog.properties.previewChange(ADMIN, { ...sizeDefinition, valueType: STRING });
    expectMatches(toText, sizes, () => true);

    // Nothing breaking: accepted, nothing affected.
    const widened = await catalog.properties.previewChange(ADMIN, {
      ...tierDefinition,
      entityTypes: [DATASET_TYPE, FLOW_TYPE, 'urn:li:entityType:datahub.chart'],
      allowedValues: [...tierDefinition.allowedValues, { value: { string: 'platinum' } }],
    });
    expect(widened).toEqual({ urn: TIER, outcome: 'updated', breaking: false, reasons: [], affected: 0, sample: [] });
    expect(await catalog.properties.previewChange(ADMIN, tierDefinition)).toMatchObject({ outcome: 'unchanged', affected: 0 });
    const fresh = await catalog.properties.previewChange(ADMIN, { ...ownerDefinition, urn: undefined, qualifiedName: 'preview.fresh' });
    expect(fresh).toEqual({
      urn: 'urn:li:structuredProperty:preview.fresh',
      outcome: 'created',
      breaking: false,
      reasons: [],
      affected: 0,
      sample: [],
    });

    // Nothing was written: the change feed and the definitions are as they were.
    expect(await catalog.changes.read(ADMIN, { limit: 1000 })).toEqual(before);
    expect((await catalog.properties.get(ADMIN, TIER))?.definition).toMatchObject({ cardinality: 'MULTIPLE', version: '20240101000000' });
    expect(await catalog.properties.get(ADMIN, 'urn:li:structuredProperty:preview.fresh')).toBeUndefined();
    await catalog.close();
  });

  it('refuses bad input as the upsert does, a soft-deleted property, and an actor who may not manage properties', async () => {
    const { catalog } = await open(kind);
    const bad = { ...tierDefinition, valueType: 'urn:li:dataType:datahub.colour', entityTypes: ['spaceship'], version: '2024' };
    const refusal = (await catalog.properties.previewChange(ADMIN, bad).catch((e: unknown) => e)) as CatalogError;
    const upsertRefusal = (await catalog.properties.upsert(ADMIN, bad).catch((e: unknown) => e)) as CatalogError;
    expect(refusal.code).toBe('INVALID_INPUT');
    expect(refusal.details.map((d) => d.path).sort()).toEqual(['/entityTypes/0', '/valueType', '/version']);
    expect(refusal.details).toEqual(upsertRefusal.details);
    const wrongUrn = (await catalog.properties
      .previewChange(ADMIN, { ...tierDefinition, urn: 'urn:li:dataset:x' })
      .catch((e: unknown) => e)) as CatalogError;
    expect(wrongUrn.details.map((d) => d.path)).toContain('/urn');

    const forbidden = (await catalog.properties.previewChange(EDITOR, tierDefinition).catch((e: unknown) => e)) as CatalogError;
    expect(forbidden.code).toBe('FORBIDDEN');

    await catalog.properties.softDelete(ADMIN, OWNER);
    const soft = (await catalog.properties.previewChange(ADMIN, ownerDefinition).catch((e: unknown) => e)) as CatalogError;
    expect(soft.code).toBe('INVALID_INPUT');
    expect(soft.details[0]!.message).toContain('soft-deleted');
    await catalog.close();
  });

  it('previews the entries of the command-line file, every entry checked first', async () => {
    const { catalog, urns } = await open(kind);
    const tiers = (await valuesOfAll(catalog, urns)).get(TIER)!;
    const previews = await previewYamlDefinitions(catalog, ADMIN, [
      {
        id: 'preview.tier',
        type: 'string',
        cardinality: 'SINGLE',
        entity_types: ['dataset', 'dataFlow'],
        allowed_values: TIERS.map((value) => ({ value })),
        version: '20240101000000',
      },
      { id: 'preview.new', type: 'number', entity_types: ['dataset'] },
    ]);
    expect(previews.map((p) => p.outcome)).toEqual(['refused', 'created']);
    expectMatches(previews[0]!, tiers, (_, values) => values.length > 1);
    const refusal = (await previewYamlDefinitions(catalog, ADMIN, [
      { id: 'preview.ok', type: 'string', entity_types: ['dataset'] },
      { id: 'preview.bad', type: 'colour', entity_types: ['dataset'] },
    ]).catch((e: unknown) => e)) as CatalogError;
    expect(refusal.details.map((d) => d.path)).toEqual(['/1/type']);
    await catalog.close();
  });
});
