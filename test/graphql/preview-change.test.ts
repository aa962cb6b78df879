import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, codesOf, createAdapter, createHarness, dataOf, type Harness } from './support';

const TIER = 'urn:li:structuredProperty:gql.tier';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,gql.t${i},PROD)`;
const PREVIEW = `query preview($input: PreviewStructuredPropertyChangeInput!) {
  previewStructuredPropertyChange(input: $input) {
    urn outcome breaking reasons affected
    sample { urn values { ... on StringValue { stringValue } ... on NumberValue { numberValue } } }
  }
}`;
const stored = {
  qualifiedName: 'gql.tier',
  valueType: 'urn:li:dataType:datahub.string',
  entityTypes: ['urn:li:entityType:datahub.dataset'],
  cardinality: 'MULTIPLE' as const,
  allowedValues: ['gold', 'silver', 'bronze'].map((t) => ({ value: { string: t } })),
};

describe.each(ADAPTERS)('GraphQL previewStructuredPropertyChange (%s)', (kind) => {
  let h: Harness;
  beforeEach(async () => {
    h = createHarness(createAdapter(kind));
    await h.catalog.properties.upsert(ADMIN, { ...stored, urn: TIER });
    const tiers = [['gold'], ['gold', 'silver'], ['bronze'], ['silver', 'bronze'], ['gold']];
    for (const [i, values] of tiers.entries())
      await h.catalog.properties.upsertValues(ADMIN, dataset(i), {
        properties: [{ propertyUrn: TIER, values: values.map((string) => ({ string })) }],
      });
  });
  afterEach(() => h.close());

  it('answers what catalog.properties.previewChange answers, from the create input spelling', async () => {
    const input = {
      urn: TIER,
      valueType: 'string',
      entityTypes: ['dataset'],
      cardinality: 'SINGLE',
      allowedValues: [{ stringValue: 'silver' }, { stringValue: 'bronze', description: 'third' }],
    };
    const answer = dataOf<{ previewStructuredPropertyChange: Record<string, unknown> }>(
      await h.run(PREVIEW, { input }),
    ).previewStructuredPropertyChange;
    const library = await h.catalog.properties.previewChange(ADMIN, {
      ...stored,
      urn: TIER,
      cardinality: 'SINGLE',
      allowedValues: stored.allowedValues.slice(1),
    });
    expect(answer).toEqual({
      ...library,
      sample: library.sample.map((s) => ({ urn: s.urn, values: s.values.map((v) => ({ stringValue: 'string' in v ? v.string : '' })) })),
    });
    // gold on 0, 1 and 4; several values on 1 and 3.
    expect(answer).toMatchObject({ outcome: 'refused', breaking: true, affected: 4 });
    expect((answer.sample as Array<{ urn: string }>).map((s) => s.urn)).toEqual([dataset(0), dataset(1), dataset(3), dataset(4)]);
  });

  it('refuses bad input with paths, and an actor who may not manage properties', async () => {
    const bad = await h.run(PREVIEW, { input: { urn: TIER, valueType: 'colour', entityTypes: ['spaceship'], allowedValues: [{}] } });
    expect(codesOf(bad)).toEqual(['INVALID_INPUT']);
    const pathsOf = (result: typeof bad) => (result.errors![0]!.extensions.details as Array<{ path: string }>).map((v) => v.path);
    // As the upsert: the shape first (an allowed value with neither a string nor a number), then the meaning.
    expect(pathsOf(bad)).toEqual(['/allowedValues/0/value']);
    const meaning = await h.run(PREVIEW, { input: { urn: TIER, valueType: 'colour', entityTypes: ['spaceship'] } });
    expect(codesOf(meaning)).toEqual(['INVALID_INPUT']);
    expect(pathsOf(meaning).sort()).toEqual(['/entityTypes/0', '/valueType']);
    const forbidden = await h.run(PREVIEW, { input: { urn: TIER, valueType: 'string', entityTypes: ['dataset'] } }, ANA);
    expect(codesOf(forbidden)).toEqual(['FORBIDDEN']);
  });
});
