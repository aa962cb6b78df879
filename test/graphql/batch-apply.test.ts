import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, ANA, BOB, codesOf, createAdapter, createHarness, dataOf, type Harness } from './support';

const TIER = 'urn:li:structuredProperty:io.test.tier';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`;

const APPLY = `mutation Apply($input: BatchApplyStructuredPropertiesInput!) {
  batchApplyStructuredProperties(input: $input) {
    matched jobId
    sample { urn before { properties { structuredProperty { urn } values { ... on StringValue { stringValue } } } } after { properties { structuredProperty { urn } values { ... on StringValue { stringValue } } } } }
    violations { message propertyUrn urn entityType count }
  }
}`;
const STATUS = `query Status($jobId: String!) { structuredPropertyApplyStatus(jobId: $jobId) { jobId state done total failed skipped startedBy } }`;
const CANCEL = `mutation Cancel($jobId: String!) { cancelStructuredPropertyApply(jobId: $jobId) { jobId cancelled state message } }`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each(ADAPTERS)('batchApplyStructuredProperties (%s)', (kind) => {
  async function setup(): Promise<Harness> {
    h = createHarness(createAdapter(kind));
    await h.catalog.properties.create(ADMIN, {
      qualifiedName: 'io.test.tier',
      valueType: 'string',
      entityTypes: ['dataset'],
      allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
    });
    await h.catalog.entities.upsertMany(
      ADMIN,
      [0, 1, 2].map((i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
    );
    return h;
  }

  it('a dry run answers matched, sample and violations like the library, and writes nothing', async () => {
    const { run, catalog } = await setup();
    const input = {
      types: ['DATASET'],
      query: '*',
      set: [{ structuredPropertyUrn: 'io.test.tier', values: [{ stringValue: 'bronze' }] }],
      dryRun: true,
    };
    const answer = dataOf<{ batchApplyStructuredProperties: Record<string, unknown> }>(
      await run(APPLY, { input }, ANA),
    ).batchApplyStructuredProperties;
    const library = await catalog.properties.applyToMatches(
      ANA,
      { types: ['DATASET'], query: '*', set: [{ propertyUrn: TIER, values: [{ string: 'bronze' }] }] },
      { dryRun: true },
    );
    expect(answer.matched).toBe(3);
    expect(answer.jobId).toBeNull();
    expect(answer.violations).toEqual(
      library.violations.map((v) => ({
        message: v.message,
        propertyUrn: v.propertyUrn ?? null,
        urn: v.urn ?? null,
        entityType: v.entityType ?? null,
        count: v.count ?? null,
      })),
    );
    expect(answer.sample).toHaveLength(3);
    expect((answer.sample as Array<{ after: { properties: unknown[] } }>)[0]!.after.properties).toEqual([
      { structuredProperty: { urn: TIER }, values: [{ stringValue: 'bronze' }] },
    ]);
    expect(await catalog.properties.getValues(ADMIN, dataset(0))).toEqual([]);
    expect(codesOf(await run(APPLY, { input: { ...input, dryRun: false } }, ANA))).toEqual(['INVALID_INPUT']);
  });

  it('a real run queues a job whose status the query answers; cancelling a finished job says so; FORBIDDEN without the privilege', async () => {
    const { run, catalog } = await setup();
    const input = { types: ['DATASET'], set: [{ structuredPropertyUrn: TIER, values: [{ stringValue: 'gold' }] }], chunkSize: 2 };
    expect(codesOf(await run(APPLY, { input }, BOB))).toEqual(['FORBIDDEN']);
    const started = dataOf<{ batchApplyStructuredProperties: { jobId: string; matched: number; sample: unknown[] } }>(
      await run(APPLY, { input }, ANA),
    ).batchApplyStructuredProperties;
    expect(started).toMatchObject({ matched: 3, sample: [], violations: [] });
    const { jobId } = started;
    expect(dataOf(await run(STATUS, { jobId }, ANA))).toEqual({
      structuredPropertyApplyStatus: { jobId, state: 'PENDING', done: 0, total: 3, failed: 0, skipped: 0, startedBy: ANA },
    });
    expect(codesOf(await run(STATUS, { jobId }, BOB))).toEqual(['FORBIDDEN']);
    await catalog.settle();
    expect(dataOf(await run(STATUS, { jobId }, ANA))).toMatchObject({
      structuredPropertyApplyStatus: { state: 'DONE', done: 3, total: 3 },
    });
    expect(dataOf(await run(CANCEL, { jobId }, ANA))).toMatchObject({
      cancelStructuredPropertyApply: { jobId, cancelled: false, state: 'DONE' },
    });
    expect((await catalog.properties.getValues(ADMIN, dataset(2)))[0]).toMatchObject({ propertyUrn: TIER, values: [{ string: 'gold' }] });
  });
});
