import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { ADMIN, call, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

/** DataHub's OpenAPI v3 entity family over a real server, on the memory and the SQLite adapter. */

const V3 = '/openapi/v3/entity';
const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,v3.${name},PROD)`;
const entityPath = (type: string, urn: string, aspect?: string) => `${V3}/${type}/${enc(urn)}${aspect ? `/${aspect}` : ''}`;
const TIER = 'urn:li:structuredProperty:io.v3.tier';
const tierDefinition = {
  qualifiedName: 'io.v3.tier',
  valueType: 'urn:li:dataType:datahub.string',
  allowedValues: [{ value: { string: 'gold' } }, { value: { string: 'silver' } }],
  cardinality: 'SINGLE',
  entityTypes: ['urn:li:entityType:datahub.dataset'],
};

describe.each(['memory', 'sqlite'] as const)('OpenAPI v3 entities (%s)', (kind) => {
  let t: TestServer;
  let admin: string;
  let editor: string;
  let reader: string;

  beforeAll(async () => {
    t = await startTestServer(kind === 'memory' ? { catalog: { adapter: createMemoryAdapter() } } : {});
    admin = t.adminToken;
    editor = await t.tokenFor(EDITOR);
    reader = await t.tokenFor(READER);
    const created = await call(t.url, 'POST', entityPath('structuredProperty', TIER, 'propertyDefinition'), {
      token: admin,
      body: { value: tierDefinition },
    });
    expect(created.status).toBe(200);
  });
  afterAll(() => t.close());

  describe('batch POST /openapi/v3/entity/{entityName}', () => {
    it('writes every entity, structured properties beside other aspects, and answers the aspects written', async () => {
      const body = [
        {
          urn: ds('a'),
          datasetProperties: { value: { name: 'a', description: 'First.' } },
          structuredProperties: { value: { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] } },
        },
        {
          urn: ds('b'),
          datasetProperties: {
            value: { name: 'b' },
            systemMetadata: { runId: 'nightly-7', lastObserved: 1700000000000, properties: { source: 'test' } },
          },
        },
      ];
      const written = await call(t.url, 'POST', `${V3}/dataset?async=false`, { token: editor, body });
      expect(written.status).toBe(200);
      expect(written.json).toMatchObject([
        {
          urn: ds('a'),
          datasetProperties: { value: { name: 'a', description: 'First.' } },
          structuredProperties: { value: { properties: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }] } },
        },
        { urn: ds('b'), datasetProperties: { value: { name: 'b' } } },
      ]);
      expect(Object.keys(written.json[1]).sort()).toEqual(['datasetProperties', 'urn']);
      expect(written.json[1].datasetProperties.systemMetadata).toBeUndefined();

      // async=true is accepted: the write is done when the answer comes, so it is 200 too.
      const again = await call(t.url, 'POST', `/gms${V3}/dataset?async=true&systemMetadata=true`, {
        token: editor,
        body: [{ urn: ds('c'), status: { value: { removed: false } } }],
      });
      expect(again.status).toBe(200);
      expect(again.json[0].status.systemMetadata).toMatchObject({ runId: 'no-run-id-provided', version: '1' });
      expect(again.json[0].status.auditStamp.actor).toBe(EDITOR);
    });

    it('is atomic: one bad item is 400 naming its index and place in the body, and nothing is written', async () => {
      const body = [
        { urn: ds('atomic-1'), datasetProperties: { value: { name: 'fine' } } },
        { urn: ds('atomic-2'), datasetProperties: { value: { name: 42 } } },
        { urn: ds('atomic-3'), status: { value: { removed: false }, systemMetadata: { runId: 7 } } },
      ];
      const refused = await call(t.url, 'POST', `${V3}/dataset`, { token: editor, body });
      expect(refused.status).toBe(400);
      expect(refused.json.error.code).toBe('INVALID_INPUT');
      const paths = refused.json.error.details.map((d: { path: string }) => d.path);
      expect(paths).toEqual(
        expect.arrayContaining([expect.stringMatching(/^\/1\/datasetProperties\/value\/name/), '/2/status/systemMetadata/runId']),
      );
      expect(paths.some((p: string) => p.startsWith('/0'))).toBe(false);
      expect(refused.json.message).toBe(refused.json.error.message);
      for (const name of ['atomic-1', 'atomic-2', 'atomic-3'])
        expect((await call(t.url, 'HEAD', entityPath('dataset', ds(name)), { token: reader })).status).toBe(404);
    });

    it('a one-item batch names index 0; a URN of another type, a missing value, a non-list body are refused with their places', async () => {
      const one = await call(t.url, 'POST', `${V3}/dataset`, { token: editor, body: [{ urn: ds('solo'), unknownAspect: { value: {} } }] });
      expect(one.status).toBe(400);
      expect(one.json.error.details[0].path).toBe('/0/unknownAspect/value');

      const mixed = await call(t.url, 'POST', `${V3}/dataset`, {
        token: editor,
        body: [
          { urn: 'urn:li:chart:(looker,1)', chartInfo: { value: { title: 'x' } } },
          { urn: ds('x'), datasetProperties: {} },
        ],
      });
      expect(mixed.status).toBe(400);
      expect(mixed.json.error.details.map((d: { path: string }) => d.path)).toEqual(['/0/urn', '/1/datasetProperties/value']);

      const notList = await call(t.url, 'POST', `${V3}/dataset`, { token: editor, body: { urn: ds('x') } });
      expect(notList.status).toBe(400);
      expect(notList.json.error.details).toEqual([{ path: '/', message: 'must be an array' }]);
    });

    it('needs the privileges of what it writes (403), and a structured property value that is not allowed is 400', async () => {
      const refused = await call(t.url, 'POST', `${V3}/dataset`, {
        token: reader,
        body: [{ urn: ds('r'), datasetProperties: { value: { name: 'r' } } }],
      });
      expect(refused.status).toBe(403);
      const bad = await call(t.url, 'POST', `${V3}/dataset`, {
        token: editor,
        body: [
          { urn: ds('bad'), structuredProperties: { value: { properties: [{ propertyUrn: TIER, values: [{ string: 'bronze' }] }] } } },
        ],
      });
      expect(bad.status).toBe(400);
      expect(bad.json.error.details[0].path).toMatch(/^\/0\/structuredProperties\/value/);
    });
  });

  describe('scroll GET /openapi/v3/entity/{entityName}', () => {
    it('pages through a type in URN order with scrollId, the total, and the asked aspects', async () => {
      const body = ['p1', 'p2', 'p3', 'p4', 'p5'].map((n) => ({
        urn: ds(`scroll.${n}`),
        datasetProperties: { value: { name: `scroll ${n}` } },
        status: { value: { removed: false } },
      }));
      expect((await call(t.url, 'POST', `${V3}/dataset`, { token: editor, body })).status).toBe(200);
      const seen: string[] = [];
      let scrollId: string | undefined;
      let pages = 0;
      do {
        const page = await call(
          t.url,
          'GET',
          `${V3}/dataset?query=scroll&count=2&aspects=datasetProperties${scrollId ? `&scrollId=${enc(scrollId)}` : ''}`,
          { token: reader },
        );
        expect(page.status).toBe(200);
        expect(page.json.totalCount).toBe(5);
        expect(page.json.entities.length).toBeLessThanOrEqual(2);
        for (const entity of page.json.entities) {
          expect(Object.keys(entity).sort()).toEqual(['datasetProperties', 'urn']);
          seen.push(entity.urn);
        }
        scrollId = page.json.scrollId;
        pages++;
      } while (scrollId && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(body.map((b) => b.urn).sort());
    });

    it('leaves soft-deleted entities out unless includeSoftDelete=true; answers system metadata when asked', async () => {
      expect(
        (
          await call(t.url, 'POST', `${entityPath('dataset', ds('scroll.p5'), 'status')}?createIfNotExists=false`, {
            token: editor,
            body: { value: { removed: true } },
          })
        ).status,
      ).toBe(200);
      const live = await call(t.url, 'GET', `${V3}/dataset?query=scroll&count=10`, { token: reader });
      expect(live.json.entities.map((e: { urn: string }) => e.urn)).not.toContain(ds('scroll.p5'));
      const all = await call(t.url, 'GET', `${V3}/dataset?query=scroll&count=10&includeSoftDelete=true&systemMetadata=true`, {
        token: reader,
      });
      expect(all.json.entities.map((e: { urn: string }) => e.urn)).toContain(ds('scroll.p5'));
      expect(all.json.entities[0].datasetProperties.systemMetadata).toMatchObject({ version: '1', runId: 'no-run-id-provided' });
      expect(all.json.scrollId).toBeUndefined();
    });

    it('refuses a sort it cannot keep (501) and a scrollId it did not make (400)', async () => {
      const desc = await call(t.url, 'GET', `${V3}/dataset?sortCriteria=urn&sortOrder=DESCENDING`, { token: reader });
      expect(desc.status).toBe(501);
      expect(desc.json.error.details[0].path).toBe('sortOrder');
      const other = await call(t.url, 'GET', `${V3}/dataset?sortCriteria=name`, { token: reader });
      expect(other.status).toBe(501);
      const bad = await call(t.url, 'GET', `${V3}/dataset?scrollId=nonsense`, { token: reader });
      expect(bad.status).toBe(400);
    });
  });

  describe('batch PATCH /openapi/v3/entity/{entityName}', () => {
    // The steps of DataHub's smoke-test/tests/openapi/v3/entities.json ("Patch dataset with description", "Patch REMOVE dataset description").
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:test,datasetPatchEntityV3,PROD)';

    it('patches aspects of several entities in one step and answers the patched aspects', async () => {
      const added = await call(t.url, 'PATCH', `${V3}/dataset?async=false`, {
        token: editor,
        body: [{ urn, datasetProperties: { value: { patch: [{ op: 'add', path: '/description', value: 'Test description' }] } } }],
      });
      expect(added.status).toBe(200);
      expect(added.json).toEqual([{ urn, datasetProperties: { value: { description: 'Test description' } } }]);
      const read = await call(t.url, 'GET', `${entityPath('dataset', urn)}?aspects=datasetProperties`, { token: reader });
      expect(read.json).toEqual({ urn, datasetProperties: { value: { description: 'Test description' } } });

      const removed = await call(t.url, 'PATCH', `${V3}/dataset`, {
        token: editor,
        body: [
          {
            urn,
            datasetProperties: {
              value: {
                patch: [
                  { op: 'remove', path: '/description' },
                  { op: 'add', path: '/name', value: 'patched' },
                ],
              },
            },
          },
          { urn: ds('patch.other'), status: { value: { patch: [{ op: 'add', path: '/removed', value: false }] } } },
        ],
        contentType: 'application/json-patch+json',
      });
      expect(removed.status).toBe(200);
      expect(removed.json).toEqual([
        { urn, datasetProperties: { value: { name: 'patched' } } },
        { urn: ds('patch.other'), status: { value: { removed: false } } },
      ]);
    });

    it('is atomic: a failing operation, an invalid result or an aspect with its own rules refuses every patch, at its place', async () => {
      const body = [
        { urn, datasetProperties: { value: { patch: [{ op: 'replace', path: '/name', value: 'never' }] } } },
        { urn: ds('patch.other'), status: { value: { patch: [{ op: 'replace', path: '/removed', value: 'yes' }] } } },
      ];
      const invalid = await call(t.url, 'PATCH', `${V3}/dataset`, { token: editor, body });
      expect(invalid.status).toBe(400);
      expect(invalid.json.error.details.map((d: { path: string }) => d.path)).toEqual([expect.stringMatching(/^\/1\/status\/value/)]);
      const failedTest = await call(t.url, 'PATCH', `${V3}/dataset`, {
        token: editor,
        body: [body[0], { urn: ds('patch.other'), status: { value: { patch: [{ op: 'test', path: '/removed', value: true }] } } }],
      });
      expect(failedTest.status).toBe(409);
      expect(failedTest.json.error.details[0].path).toBe('/1/status/value/patch/0');
      const owned = await call(t.url, 'PATCH', `${V3}/dataset`, {
        token: editor,
        body: [
          body[0],
          {
            urn,
            // structuredProperties is patched in a batch by its own rules (one write path): an unknown property refuses the batch.
            structuredProperties: {
              value: {
                patch: [
                  {
                    op: 'add',
                    path: '/properties/urn:li:structuredProperty:nope',
                    value: { propertyUrn: 'urn:li:structuredProperty:nope', values: [{ string: 'x' }] },
                  },
                ],
                arrayPrimaryKeys: { properties: ['propertyUrn'] },
              },
            },
          },
        ],
      });
      expect(owned.status).toBe(400);
      expect(owned.json.error.details[0].path).toMatch(/^\/1\/structuredProperties/);
      const noPatch = await call(t.url, 'PATCH', `${V3}/dataset`, {
        token: editor,
        body: [{ urn, datasetProperties: { value: { name: 'x' } } }],
      });
      expect(noPatch.status).toBe(400);
      expect(noPatch.json.error.details[0].path).toBe('/0/datasetProperties/value/patch');
      expect((await call(t.url, 'PATCH', `${V3}/dataset`, { token: reader, body: [body[0]] })).status).toBe(403);
      expect((await call(t.url, 'GET', entityPath('dataset', urn, 'datasetProperties'), { token: reader })).json.value).toEqual({
        name: 'patched',
      });
    });
  });

  describe('POST /openapi/v3/entity/scroll and POST .../{entityName}/batchGet', () => {
    it('scrolls across types with a filter (OR of ANDs, the platform condition names) and the asked aspects', async () => {
      const body = [
        {
          urn: ds('across.one'),
          datasetProperties: { value: { name: 'across one' } },
          structuredProperties: { value: { properties: [{ propertyUrn: TIER, values: [{ string: 'silver' }] }] } },
        },
        { urn: ds('across.two'), datasetProperties: { value: { name: 'across two' } } },
      ];
      expect((await call(t.url, 'POST', `${V3}/dataset`, { token: editor, body })).status).toBe(200);
      const filtered = await call(t.url, 'POST', `${V3}/scroll?count=5&sortCriteria=urn`, {
        token: reader,
        body: {
          entities: ['dataset', 'chart'],
          aspects: ['datasetProperties'],
          filter: { and: [{ criteria: [{ field: 'structuredProperties.io.v3.tier', values: ['silver'], condition: 'EQUAL' }] }] },
        },
      });
      expect(filtered.status).toBe(200);
      expect(filtered.json).toEqual({
        entities: [{ urn: ds('across.one'), datasetProperties: { value: { name: 'across one' } } }],
        totalCount: 1,
      });

      const startsWith = await call(t.url, 'POST', `${V3}/scroll`, {
        token: reader,
        body: {
          entities: ['dataset'],
          aspects: ['datasetProperties'],
          filter: { and: [{ criteria: [{ field: 'name', values: ['across t'], condition: 'STARTS_WITH' }] }] },
        },
      });
      expect(startsWith.json.entities.map((e: { urn: string }) => e.urn)).toEqual([ds('across.two')]);

      const sorted = await call(t.url, 'POST', `${V3}/scroll`, {
        token: reader,
        body: { sortCriteria: [{ field: 'name', order: 'ASCENDING' }] },
      });
      expect(sorted.status).toBe(501);
      const bad = await call(t.url, 'POST', `${V3}/scroll`, { token: reader, body: { entities: ['nope'], filter: { or: [] } } });
      expect(bad.status).toBe(400);
    });

    it('batchGet reads each entity with the aspects it names (all when none), leaving out the missing ones', async () => {
      const got = await call(t.url, 'POST', `${V3}/dataset/batchGet?systemMetadata=true`, {
        token: reader,
        body: [{ urn: ds('across.one'), datasetProperties: {} }, { urn: ds('across.two') }, { urn: ds('never.written') }],
      });
      expect(got.status).toBe(200);
      expect(got.json.map((e: { urn: string }) => e.urn)).toEqual([ds('across.one'), ds('across.two')]);
      expect(Object.keys(got.json[0]).sort()).toEqual(['datasetProperties', 'urn']);
      expect(got.json[0].datasetProperties.systemMetadata.version).toBe('1');
      expect(Object.keys(got.json[1]).sort()).toEqual(['datasetProperties', 'urn']);
      const wrongType = await call(t.url, 'POST', `${V3}/dataset/batchGet`, { token: reader, body: [{ urn: TIER }] });
      expect(wrongType.status).toBe(400);
      expect(wrongType.json.error.details[0].path).toBe('/0/urn');
    });
  });

  describe('entity GET / HEAD / DELETE', () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:s3,bucket/path/to/file.csv?x=1&y=%2,PROD)';

    it('reads an entity whose URN needs percent-encoding (slash, ?, &, %), at the root and under /gms', async () => {
      const written = await call(t.url, 'POST', `${V3}/dataset`, {
        token: editor,
        body: [{ urn, datasetProperties: { value: { name: 'file.csv' } }, status: { value: { removed: false } } }],
      });
      expect(written.status).toBe(200);
      for (const prefix of ['', '/gms']) {
        const read = await call(t.url, 'GET', `${prefix}${entityPath('dataset', urn)}`, { token: reader });
        expect(read.status).toBe(200);
        expect(read.json).toEqual({ urn, datasetProperties: { value: { name: 'file.csv' } }, status: { value: { removed: false } } });
      }
      const some = await call(t.url, 'GET', `${entityPath('DATASET', urn)}?aspects=status&systemMetadata=true`, { token: reader });
      expect(Object.keys(some.json).sort()).toEqual(['status', 'urn']);
      expect(some.json.status.systemMetadata.version).toBe('1');
      const none = await call(t.url, 'GET', `${entityPath('dataset', urn)}?aspects=glossaryTermInfo`, { token: reader });
      expect(none.status).toBe(404);
    });

    it('HEAD answers 204 or 404 with no body; a soft-deleted entity is absent unless includeSoftDelete=true', async () => {
      const head = await call(t.url, 'HEAD', entityPath('dataset', urn), { token: reader });
      expect(head.status).toBe(204);
      expect(head.text).toBe('');
      const missing = await call(t.url, 'HEAD', entityPath('dataset', ds('nobody')), { token: reader });
      expect(missing.status).toBe(404);
      expect(missing.text).toBe('');
      expect((await call(t.url, 'HEAD', entityPath('dataset', urn, 'status'), { token: reader })).status).toBe(204);
      expect((await call(t.url, 'HEAD', entityPath('dataset', urn, 'structuredProperties'), { token: reader })).status).toBe(404);

      await call(t.url, 'POST', `${entityPath('dataset', urn, 'status')}?createIfNotExists=false`, {
        token: editor,
        body: { value: { removed: true } },
      });
      expect((await call(t.url, 'HEAD', entityPath('dataset', urn), { token: reader })).status).toBe(404);
      expect((await call(t.url, 'HEAD', `${entityPath('dataset', urn)}?includeSoftDelete=true`, { token: reader })).status).toBe(204);
      const unauthenticated = await call(t.url, 'HEAD', entityPath('dataset', urn));
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.text).toBe('');
    });

    it('DELETE is hard (200, no body), needs EDIT_ENTITY, and is idempotent; aspects=... deletes only those', async () => {
      const other = ds('delete.partly');
      await call(t.url, 'POST', `${V3}/dataset`, {
        token: editor,
        body: [{ urn: other, datasetProperties: { value: { name: 'p' } }, status: { value: { removed: false } } }],
      });
      const partly = await call(t.url, 'DELETE', `${entityPath('dataset', other)}?aspects=status`, { token: editor });
      expect(partly.status).toBe(200);
      expect((await call(t.url, 'GET', entityPath('dataset', other), { token: reader })).json).toEqual({
        urn: other,
        datasetProperties: { value: { name: 'p' } },
      });

      expect((await call(t.url, 'DELETE', entityPath('dataset', urn), { token: reader })).status).toBe(403);
      const deleted = await call(t.url, 'DELETE', entityPath('dataset', urn), { token: editor });
      expect(deleted.status).toBe(200);
      expect(deleted.text).toBe('');
      expect(await t.catalog.entities.get(ADMIN, urn)).toBeUndefined();
      expect((await call(t.url, 'GET', entityPath('dataset', urn), { token: reader })).status).toBe(404);
      expect((await call(t.url, 'DELETE', entityPath('dataset', urn), { token: editor })).status).toBe(200);
      const clear = await call(t.url, 'DELETE', `${entityPath('dataset', other)}?clear=true`, { token: editor });
      expect(clear.status).toBe(501);
    });

    it('hard-deletes a structured property as v2 does: the definition at once, its values after the clean-up', async () => {
      const prop = 'urn:li:structuredProperty:io.v3.doomed';
      const target = ds('doomed.target');
      await call(t.url, 'POST', entityPath('structuredProperty', prop, 'propertyDefinition'), {
        token: admin,
        body: { value: { ...tierDefinition, qualifiedName: 'io.v3.doomed' } },
      });
      const set = await call(t.url, 'POST', `${V3}/dataset`, {
        token: editor,
        body: [{ urn: target, structuredProperties: { value: { properties: [{ propertyUrn: prop, values: [{ string: 'gold' }] }] } } }],
      });
      expect(set.status).toBe(200);
      expect((await call(t.url, 'DELETE', entityPath('structuredProperty', prop), { token: editor })).status).toBe(403);
      expect((await call(t.url, 'DELETE', entityPath('structuredProperty', prop), { token: admin })).status).toBe(200);
      expect(await t.catalog.entities.get(ADMIN, prop)).toBeUndefined();
      const hidden = await call(t.url, 'GET', entityPath('dataset', target, 'structuredProperties'), { token: reader });
      expect(hidden.status === 404 || hidden.json.value.properties.length === 0).toBe(true);
      await t.catalog.settle();
      const [raw] = await t.catalog.entities.getMany(ADMIN, [target]);
      expect(raw?.aspects.structuredProperties?.value.properties ?? []).toEqual([]);
    });
  });

  describe('aspect GET / POST / PATCH / DELETE', () => {
    const urn = ds('aspects');

    it('POST { value, systemMetadata } only creates unless createIfNotExists=false; the system metadata is kept and read back', async () => {
      const path = entityPath('dataset', urn, 'datasetProperties');
      const created = await call(t.url, 'POST', `${path}?systemMetadata=true`, {
        token: editor,
        body: {
          value: { name: 'aspects', description: 'One.' },
          systemMetadata: { runId: 'run-1', pipelineName: 'p', properties: { k: 'v' } },
          headers: { 'If-Version-Match': '0' },
        },
      });
      expect(created.status).toBe(200);
      expect(created.json).toMatchObject({
        urn,
        datasetProperties: {
          value: { name: 'aspects', description: 'One.' },
          systemMetadata: { runId: 'run-1', pipelineName: 'p', properties: { k: 'v' }, version: '1' },
        },
      });

      const twice = await call(t.url, 'POST', path, { token: editor, body: { value: { name: 'other' } } });
      expect(twice.status).toBe(409);
      expect(twice.json.error.code).toBe('CONFLICT');
      expect(twice.json.message).toMatch(/datasetProperties/);

      const replaced = await call(t.url, 'POST', `${path}?createIfNotExists=false`, {
        token: editor,
        body: { value: { name: 'aspects', description: 'Two.' } },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.json).toEqual({ urn, datasetProperties: { value: { name: 'aspects', description: 'Two.' } } });

      const read = await call(t.url, 'GET', `${path}?systemMetadata=true`, { token: reader });
      expect(read.json.value).toEqual({ name: 'aspects', description: 'Two.' });
      // The second write sent no system metadata: the first one's run id is not carried over.
      expect(read.json.systemMetadata).toMatchObject({ version: '2', runId: 'no-run-id-provided' });
      expect(read.json.systemMetadata.pipelineName).toBeUndefined();
      const plain = await call(t.url, 'GET', path, { token: reader });
      expect(plain.json).toEqual({ value: { name: 'aspects', description: 'Two.' } });
      const first = await call(t.url, 'GET', `${path}?version=1`, { token: reader });
      expect(first.json.value).toEqual({ name: 'aspects', description: 'One.' });

      const entityOnly = await call(t.url, 'POST', `${entityPath('dataset', urn, 'status')}?createEntityIfNotExists=true`, {
        token: editor,
        body: { value: { removed: false } },
      });
      expect(entityOnly.status).toBe(409);
      const badMetadata = await call(t.url, 'POST', `${path}?createIfNotExists=false`, {
        token: editor,
        body: { value: { name: 'x' }, systemMetadata: { secret: 1 } },
      });
      expect(badMetadata.status).toBe(400);
      expect(badMetadata.json.error.details[0].path).toMatch(/systemMetadata\/secret$/);
      const noValue = await call(t.url, 'POST', path, { token: editor, body: { name: 'bare' } });
      expect(noValue.status).toBe(400);
    });

    it('PATCH applies a JSON Patch (application/json-patch+json or application/json) to a generic aspect', async () => {
      const path = entityPath('dataset', urn, 'datasetProperties');
      const patched = await call(t.url, 'PATCH', path, {
        token: editor,
        body: {
          patch: [
            { op: 'replace', path: '/description', value: 'Three.' },
            { op: 'add', path: '/customProperties', value: { team: 'core' } },
          ],
        },
        contentType: 'application/json-patch+json',
      });
      expect(patched.status).toBe(200);
      expect(patched.json).toEqual({
        urn,
        datasetProperties: { value: { name: 'aspects', description: 'Three.', customProperties: { team: 'core' } } },
      });

      const asJson = await call(t.url, 'PATCH', `${path}?systemMetadata=true`, {
        token: editor,
        body: { patch: [{ op: 'remove', path: '/customProperties' }] },
      });
      expect(asJson.status).toBe(200);
      expect(asJson.json.datasetProperties.value).toEqual({ name: 'aspects', description: 'Three.' });
      expect(asJson.json.datasetProperties.systemMetadata.version).toBe('4');

      const failed = await call(t.url, 'PATCH', path, {
        token: editor,
        body: {
          patch: [
            { op: 'test', path: '/description', value: 'Nope.' },
            { op: 'remove', path: '/description' },
          ],
        },
      });
      expect(failed.status).toBe(409);
      const bare = await call(t.url, 'PATCH', path, { token: editor, body: [{ op: 'remove', path: '/description' }] });
      expect(bare.status).toBe(400);
      expect((await call(t.url, 'GET', path, { token: reader })).json.value.description).toBe('Three.');
      const text = await call(t.url, 'PATCH', path, { token: editor, rawBody: 'x', contentType: 'text/plain' });
      expect(text.status).toBe(415);
    });

    it('DELETE removes the aspect (200, no body), idempotently; an aspect the entity type lacks is 400', async () => {
      const path = entityPath('dataset', urn, 'datasetProperties');
      expect((await call(t.url, 'DELETE', path, { token: reader })).status).toBe(403);
      const deleted = await call(t.url, 'DELETE', path, { token: editor });
      expect(deleted.status).toBe(200);
      expect(deleted.text).toBe('');
      expect((await call(t.url, 'GET', path, { token: reader })).status).toBe(404);
      expect((await call(t.url, 'DELETE', path, { token: editor })).status).toBe(200);
      const wrong = await call(t.url, 'DELETE', entityPath('dataset', urn, 'chartInfo'), { token: editor });
      expect(wrong.status).toBe(400);
      expect(wrong.json.error.details[0].path).toBe('aspectName');
    });
  });

  describe('HEAD elsewhere', () => {
    it('a route with GET answers HEAD with its status and headers and no body; a route without GET is 405', async () => {
      const v2 = await call(t.url, 'HEAD', '/openapi/v2/api-docs');
      expect(v2.status).toBe(200);
      expect(v2.text).toBe('');
      expect(v2.headers.get('content-type')).toMatch(/json/);
      // A streamed GET (server-sent events) answers HEAD without opening the stream.
      const feed = await call(t.url, 'HEAD', '/openapi/v2/changes', { token: admin, headers: { accept: 'text/event-stream' } });
      expect(feed.status).toBe(200);
      expect(feed.text).toBe('');
      const graphql = await call(t.url, 'HEAD', '/api/graphql', { token: reader });
      expect(graphql.status).toBe(405);
      expect(graphql.headers.get('allow')).toBe('POST');
      expect(graphql.text).toBe('');
    });
  });
});
