import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';
import { createFetchHandler } from '../../../src/http/index';
import { adaptersWithPostgres } from '../../support/postgres';

const ADMIN = 'urn:li:corpuser:admin';
const ANA = 'urn:li:corpuser:ana';
const BOB = 'urn:li:corpuser:bob';
const FIN = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.ledger,PROD)';
const FIN_2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.budget,PROD)';
const MKT = 'urn:li:dataset:(urn:li:dataPlatform:hive,marketing.campaigns,PROD)';
const DOMAIN = 'urn:li:structuredProperty:finance.domain';
const COST = 'urn:li:structuredProperty:finance.costCenter';
const PII = 'urn:li:structuredProperty:pii.level';
const column = (dataset: string, path: string) => `urn:li:schemaField:(${dataset},${path})`;
const s = (value: string) => ({ string: value });

const adapters = await adaptersWithPostgres('test/core/access/metadata-policies.test.ts');
const open: Catalog[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function errorOf(
  promise: Promise<unknown>,
): Promise<{ code?: string; message: string; details?: Array<{ path: string; message: string }> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
}

/** A finance steward: EDIT_ENTITY_PROPERTIES for finance.* properties on datasets whose domain value is finance. */
async function setUp(adapter: StorageAdapter): Promise<{ catalog: Catalog; policyUrn: string }> {
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, onError: () => undefined });
  open.push(catalog);
  for (const qualifiedName of ['finance.domain', 'finance.costCenter', 'pii.level'])
    await catalog.properties.create(ADMIN, { qualifiedName, valueType: 'string', entityTypes: ['dataset', 'schemaField'] });
  await catalog.entities.upsertMany(
    ADMIN,
    [FIN, FIN_2, MKT].map((urn) => ({ urn, aspects: { datasetProperties: { name: urn.split(',')[1]! } } })),
  );
  await catalog.properties.upsertValues(ADMIN, FIN, { properties: [{ propertyUrn: DOMAIN, values: [s('finance')] }] });
  await catalog.properties.upsertValues(ADMIN, FIN_2, { properties: [{ propertyUrn: DOMAIN, values: [s('finance')] }] });
  await catalog.properties.upsertValues(ADMIN, MKT, { properties: [{ propertyUrn: DOMAIN, values: [s('marketing')] }] });
  const policy = await catalog.policies.create(ADMIN, {
    name: 'finance stewards',
    type: 'METADATA',
    privileges: ['EDIT_ENTITY_PROPERTIES'],
    actors: { users: [ANA] },
    resources: {
      type: 'dataset',
      filter: { criteria: [{ field: 'structuredProperties.finance.domain', condition: 'EQUALS', values: ['finance'] }] },
      properties: ['finance.*'],
    },
  });
  return { catalog, policyUrn: policy.urn };
}

/** Sets one property, keeping the others (the library's upsertValues replaces the aspect). */
async function setOne(catalog: Catalog, actor: string, urn: string, propertyUrn: string, value: string): Promise<unknown> {
  const kept = (await catalog.properties.getValues(ADMIN, urn)).filter((a) => a.propertyUrn !== propertyUrn);
  return catalog.properties.upsertValues(actor, urn, { properties: [...kept, { propertyUrn, values: [s(value)] }] });
}

async function valuesOf(catalog: Catalog, urn: string): Promise<unknown> {
  return (await catalog.properties.getValues(ADMIN, urn)).map((a) => [a.propertyUrn, a.values]);
}

describe.each(Object.keys(adapters))('metadata policies on %s', (kind) => {
  const adapter = () => adapters[kind]!();

  it('a finance steward sets a finance property on a finance dataset, and is refused a pii property and a marketing dataset', async () => {
    const { catalog } = await setUp(adapter());
    await setOne(catalog, ANA, FIN, COST, 'cc-1');
    expect(await valuesOf(catalog, FIN)).toEqual([
      [DOMAIN, [s('finance')]],
      [COST, [s('cc-1')]],
    ]);

    const pii = await errorOf(setOne(catalog, ANA, FIN, PII, 'high'));
    expect(pii.code).toBe('FORBIDDEN');
    expect(pii.message).toContain(PII);
    expect(pii.message).toContain(FIN);
    expect(pii.message).toContain('EDIT_ENTITY_PROPERTIES');

    const marketing = await errorOf(setOne(catalog, ANA, MKT, COST, 'cc-2'));
    expect(marketing.code).toBe('FORBIDDEN');
    expect(marketing.message).toContain(MKT);
    expect(await valuesOf(catalog, MKT)).toEqual([[DOMAIN, [s('marketing')]]]);

    // Removing a property is a change of it too; a user no policy names holds nothing.
    expect((await errorOf(catalog.properties.removeValues(ANA, MKT, [DOMAIN]))).code).toBe('FORBIDDEN');
    expect((await errorOf(setOne(catalog, BOB, FIN, COST, 'x'))).code).toBe('FORBIDDEN');
    // A whole-aspect write that would drop a pii value is a removal of it: refused.
    await catalog.properties.upsertValues(ADMIN, FIN_2, {
      properties: [
        { propertyUrn: DOMAIN, values: [s('finance')] },
        { propertyUrn: PII, values: [s('low')] },
      ],
    });
    const dropped = await errorOf(
      catalog.properties.upsertValues(ANA, FIN_2, { properties: [{ propertyUrn: DOMAIN, values: [s('finance')] }] }),
    );
    expect(dropped.message).toContain(PII);
    // Other aspects are not granted by the policy.
    expect((await errorOf(catalog.entities.upsertAspect(ANA, FIN, 'datasetProperties', { name: 'renamed' }))).code).toBe('FORBIDDEN');
  });

  it('a mixed batch is refused whole, with nothing written, over REST v3, GraphQL, Rest.li and proposals', async () => {
    const { catalog } = await setUp(adapter());
    const handler = createFetchHandler(catalog, { trustActorHeader: true });
    const call = async (path: string, body: unknown, actor = ANA) => {
      const response = await handler(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          headers: { 'X-Service-Actor': actor, 'Content-Type': 'application/json', 'X-RestLi-Protocol-Version': '2.0.0' },
          body: JSON.stringify(body),
        }),
      );
      return { status: response.status, json: (await response.json().catch(() => null)) as Record<string, unknown> | null };
    };
    const aspect = (propertyUrn: string, value: string) => ({
      value: {
        properties: [
          { propertyUrn: DOMAIN, values: [s('finance')] },
          { propertyUrn, values: [s(value)] },
        ],
      },
    });
    const before = [await valuesOf(catalog, FIN), await valuesOf(catalog, FIN_2), await valuesOf(catalog, MKT)];

    const mixed = await call('/openapi/v3/entity/dataset', [
      { urn: FIN, structuredProperties: aspect(COST, 'cc-9') },
      { urn: FIN_2, structuredProperties: aspect(PII, 'high') },
    ]);
    expect(mixed.status).toBe(403);
    expect(JSON.stringify(mixed.json)).toContain(PII);
    const ok = await call('/openapi/v3/entity/dataset', [{ urn: FIN, structuredProperties: aspect(COST, 'cc-9') }]);
    expect(ok.status).toBe(200);
    expect(await valuesOf(catalog, FIN)).toContainEqual([COST, [s('cc-9')]]);
    expect(await valuesOf(catalog, FIN_2)).toEqual(before[1]);

    const graphql = await call('/api/graphql', {
      query:
        'mutation($i: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $i) { properties { structuredProperty { urn } } } }',
      variables: {
        i: { assetUrn: MKT, structuredPropertyInputParams: [{ structuredPropertyUrn: COST, values: [{ stringValue: 'cc-3' }] }] },
      },
    });
    expect(graphql.status).toBe(200);
    expect((graphql.json?.errors as Array<{ extensions: { code: string } }>)[0]!.extensions.code).toBe('FORBIDDEN');

    const mcp = (urn: string, propertyUrn: string) => ({
      entityType: 'dataset',
      entityUrn: urn,
      changeType: 'UPSERT',
      aspectName: 'structuredProperties',
      aspect: { value: JSON.stringify(aspect(propertyUrn, 'v').value), contentType: 'application/json' },
    });
    const restli = await call('/gms/aspects?action=ingestProposalBatch', { proposals: [mcp(FIN_2, COST), mcp(MKT, COST)] });
    expect(restli.status).toBe(403);
    expect(await valuesOf(catalog, FIN_2)).toEqual(before[1]);
    expect(await valuesOf(catalog, MKT)).toEqual(before[2]);
    // The library route behind ingestProposal and `metacatalog ingest`.
    const proposals = await errorOf(catalog.entities.applyProposals(ANA, [mcp(FIN_2, COST), mcp(FIN, PII)]));
    expect(proposals.code).toBe('FORBIDDEN');
    expect(await valuesOf(catalog, FIN_2)).toEqual(before[1]);
    await catalog.entities.applyProposals(ANA, [mcp(FIN_2, COST)]);
    expect(await valuesOf(catalog, FIN_2)).toContainEqual([COST, [s('v')]]);
  });

  // upsertMany (and `metacatalog ingest`) commits 2,000 entities at a time: the refused item is in the second unit of work.
  it('a batch written in several units of work is checked whole before the first commits', async () => {
    const { catalog } = await setUp(adapter());
    const many = Array.from({ length: 2001 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,finance.t${i},PROD)`);
    const values = (cost: string) => ({
      structuredProperties: {
        properties: [{ propertyUrn: DOMAIN, values: [s('finance')] }, ...(cost ? [{ propertyUrn: COST, values: [s(cost)] }] : [])],
      },
    });
    await catalog.entities.upsertMany(
      ADMIN,
      many.map((urn) => ({ urn, aspects: values('') })),
    );
    const refused = await errorOf(
      catalog.entities.upsertMany(
        ANA,
        [...many, MKT].map((urn) => ({ urn, aspects: values('c') })),
      ),
    );
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain(MKT);
    expect(await valuesOf(catalog, many[0]!)).toEqual([[DOMAIN, [s('finance')]]]);
    await catalog.entities.upsertMany(
      ANA,
      many.map((urn) => ({ urn, aspects: values('c') })),
    );
    expect(await valuesOf(catalog, many[0]!)).toContainEqual([COST, [s('c')]]);
  });

  it('the CSV import (editValues) and applyToMatches refuse before writing anything, counting the refused entities', async () => {
    const { catalog } = await setUp(adapter());
    const refused = await errorOf(
      catalog.properties.editValues(
        ANA,
        [
          { urn: FIN, set: [{ propertyUrn: COST, values: [s('a')] }] },
          { urn: MKT, set: [{ propertyUrn: COST, values: [s('b')] }] },
        ],
        { chunkEntities: 1 },
      ),
    );
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain(MKT);
    expect(await valuesOf(catalog, FIN)).toEqual([[DOMAIN, [s('finance')]]]);
    const summary = await catalog.properties.editValues(ANA, [{ urn: FIN, set: [{ propertyUrn: COST, values: [s('a')] }] }]);
    expect(summary.changed).toBe(1);

    const preview = await catalog.properties.applyToMatches(
      ANA,
      { types: ['dataset'], query: '*', set: [{ propertyUrn: COST, values: [s('z')] }] },
      {
        dryRun: true,
      },
    );
    const forbidden = preview.violations.filter((v) => v.privilege === 'EDIT_ENTITY_PROPERTIES');
    expect(forbidden).toEqual([expect.objectContaining({ count: 1, urn: MKT, propertyUrn: COST })]);
    const run = await errorOf(
      catalog.properties.applyToMatches(ANA, { types: ['dataset'], query: '*', set: [{ propertyUrn: COST, values: [s('z')] }] }),
    );
    expect(run.code).toBe('FORBIDDEN');
    expect(await catalog.listJobs()).toEqual([]);
    // Narrowed to what the steward may edit, it runs.
    const finance = { orFilters: [{ and: [{ field: 'structuredProperties.finance.domain', values: ['finance'] }] }] };
    const allowed = await catalog.properties.applyToMatches(
      ANA,
      { ...finance, set: [{ propertyUrn: COST, values: [s('z')] }] },
      { dryRun: true },
    );
    expect(allowed.violations).toEqual([]);
  });

  it('a column (schemaField) is covered by its dataset policies: a non-admin sets a column property', async () => {
    const { catalog } = await setUp(adapter());
    await catalog.properties.upsertValues(ANA, column(FIN, 'amount'), { properties: [{ propertyUrn: COST, values: [s('col')] }] });
    expect(await valuesOf(catalog, column(FIN, 'amount'))).toEqual([[COST, [s('col')]]]);
    const refused = await errorOf(
      catalog.properties.upsertValues(ANA, column(MKT, 'clicks'), { properties: [{ propertyUrn: COST, values: [s('col')] }] }),
    );
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain(column(MKT, 'clicks'));
  });

  it('timeseries rows appended by catalog.timeseries are checked against EDIT_ENTITY per entity', async () => {
    const { catalog } = await setUp(adapter());
    await catalog.policies.create(ADMIN, {
      name: 'finance operations',
      type: 'METADATA',
      privileges: ['EDIT_ENTITY'],
      actors: { users: [BOB] },
      resources: { filter: { criteria: [{ field: 'structuredProperties.finance.domain', condition: 'EQUALS', values: ['finance'] }] } },
    });
    const row = { timestampMillis: 1_700_000_000_000, rowCount: 3 };
    await catalog.timeseries.append(BOB, FIN, 'datasetProfile', row);
    expect((await errorOf(catalog.timeseries.append(BOB, MKT, 'datasetProfile', row))).code).toBe('FORBIDDEN');
    const many = await errorOf(
      catalog.timeseries.appendMany(BOB, 'datasetProfile', [
        { urn: FIN, value: row },
        { urn: MKT, value: row },
      ]),
    );
    expect(many.code).toBe('FORBIDDEN');
    expect(many.details).toEqual([{ path: '/1/urn', message: expect.stringContaining(MKT) }]);
  });

  it('explain names the granting policy, or says in words why not; getGrantedPrivileges answers per resource', async () => {
    const { catalog, policyUrn } = await setUp(adapter());
    const yes = await catalog.access.explain(ANA, { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: FIN, propertyUrn: COST });
    expect(yes).toEqual({ allowed: true, grantedBy: [policyUrn], reason: expect.stringContaining(policyUrn) });
    const property = await catalog.access.explain(ANA, { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: FIN, propertyUrn: 'pii.level' });
    expect(property).toMatchObject({ allowed: false, grantedBy: [], reason: expect.stringContaining('finance.*') });
    const dataset = await catalog.access.explain(ANA, { privilege: 'EDIT_ENTITY_PROPERTIES', resourceUrn: MKT });
    expect(dataset).toMatchObject({ allowed: false, reason: expect.stringContaining('do not cover') });
    expect(await catalog.access.explain(ADMIN, { privilege: 'EDIT_ENTITY' })).toMatchObject({ allowed: true, grantedBy: ['superUsers'] });
    expect(await catalog.access.explain(BOB, { privilege: 'EDIT_ENTITY' })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('no active policy'),
    });
    expect((await errorOf(catalog.access.explain(BOB, { privilege: 'EDIT_ENTITY', actorUrn: ANA }))).code).toBe('FORBIDDEN');
    expect(await catalog.access.grantedPrivileges(ADMIN, { actorUrn: ANA, resourceSpec: { resourceUrn: FIN } })).toEqual({
      privileges: ['EDIT_ENTITY_PROPERTIES'],
    });
    expect(await catalog.access.grantedPrivileges(ADMIN, { actorUrn: ANA, resourceSpec: { resourceUrn: MKT } })).toEqual({
      privileges: [],
    });
  });

  it('refuses bad resources with a path, and keeps a policy without resources as granting everywhere', async () => {
    const { catalog } = await setUp(adapter());
    const bad = await errorOf(
      catalog.policies.create(ADMIN, {
        name: 'bad',
        type: 'METADATA',
        privileges: ['MANAGE_POLICIES'],
        actors: { users: [BOB] },
        resources: { type: 'nope', filter: { criteria: [{ field: 'DOMAIN', condition: 'EQUALS', values: ['x'] }] } },
      }),
    );
    expect(bad.code).toBe('INVALID_INPUT');
    expect(bad.details!.map((d) => d.path).sort()).toEqual(['/privileges/0', '/resources/filter/criteria/0/field', '/resources/type']);
    await catalog.policies.create(ADMIN, {
      name: 'everywhere',
      type: 'METADATA',
      privileges: ['EDIT_ENTITY_PROPERTIES'],
      actors: { users: [BOB] },
    });
    await catalog.properties.upsertValues(BOB, MKT, { properties: [{ propertyUrn: PII, values: [s('low')] }] });
    expect(await valuesOf(catalog, MKT)).toContainEqual([PII, [s('low')]]);
  });
});
