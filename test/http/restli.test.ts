import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { ADMIN, call, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

/**
 * DataHub's Rest.li endpoints as its Python SDK and command line call them. Each request body is
 * shaped as the named DataHub source builds it.
 */

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,logging_events,PROD)';
const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';
// Urn.url_encode (metadata-ingestion/src/datahub/utilities/urns/_urn_base.py): everything but letters, digits and _.- percent-encoded.
const restliEncode = (urn: string) => enc(urn).replace(/\(/g, '%28').replace(/\)/g, '%29');

/** metadata-ingestion/src/datahub/emitter/mcp.py (MetadataChangeProposalWrapper.to_obj) after ensure_has_system_metadata (cli/cli_utils.py). */
function mcp(entityUrn: string, aspectName: string, value: unknown, changeType = 'UPSERT'): Record<string, unknown> {
  const entityType = entityUrn.split(':')[2];
  return {
    entityType,
    entityUrn,
    changeType,
    aspectName,
    aspect: { value: JSON.stringify(value), contentType: changeType === 'PATCH' ? 'application/json-patch+json' : 'application/json' },
    systemMetadata: { lastObserved: 1700000000000, runId: 'no-run-id-provided', lastRunId: 'no-run-id-provided' },
  };
}

/** metadata-ingestion/src/datahub/api/entities/structuredproperties/structuredproperties.py (StructuredPropertyDefinitionClass of the YAML entry). */
const RETENTION_DEFINITION = {
  qualifiedName: 'io.acryl.privacy.retentionTime',
  displayName: 'Retention Time',
  valueType: 'urn:li:dataType:datahub.number',
  description: 'Retention Time is used to figure out how long to retain records in a dataset',
  entityTypes: ['urn:li:entityType:datahub.dataset', 'urn:li:entityType:datahub.dataFlow'],
  cardinality: 'MULTIPLE',
  immutable: false,
  allowedValues: [
    { value: { double: 30 }, description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
    { value: { double: 90 }, description: 'Use this for datasets that drive monthly reporting but contain pii' },
    { value: { double: 365 }, description: 'Use this for non-sensitive data that can be retained for longer' },
  ],
};

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const kinds = {
  memory: () => startTestServer({ catalog: { adapter: createMemoryAdapter() } }),
  sqlite: () => startTestServer(),
};

for (const [kind, start] of Object.entries(kinds)) {
  describe(`DataHub's Rest.li endpoints (${kind})`, () => {
    async function open(): Promise<{ t: TestServer; admin: string; editor: string; reader: string }> {
      t = await start();
      return { t, admin: t.adminToken, editor: await t.tokenFor(EDITOR), reader: await t.tokenFor(READER) };
    }

    it('GET /config answers what the SDK checks on connect (rest_emitter.py fetch_server_config, server_config_util.py), at the root and under /gms, without credentials', async () => {
      const { t } = await open();
      for (const path of ['/config', '/gms/config']) {
        const r = await call(t.url, 'GET', path);
        expect(r.status).toBe(200);
        expect(r.json.noCode).toBe('true');
        // Parsed by RestServiceConfig._parse_version: must match (\d+)\.(\d+)\.(\d+) after an optional "v".
        expect(r.json.versions['acryldata/datahub'].version).toMatch(/^v?\d+\.\d+\.\d+/);
        expect(r.json.datahub.serverEnv).toBe('core');
        expect(r.json.telemetry.enabledCli).toBe(false);
      }
    });

    it('ingestProposal: UPSERT as DatahubRestEmitter.emit_mcp sends it, read back through /aspects and /entitiesV2 with percent-encoded URNs, systemMetadata kept', async () => {
      const { t, editor, reader } = await open();
      const proposal = mcp(DATASET, 'datasetProperties', {
        name: 'logging_events',
        description: 'Events',
        customProperties: { team: 'infra' },
      });
      const written = await call(t.url, 'POST', '/gms/aspects?action=ingestProposal', {
        token: editor,
        body: { proposal, async: 'false' },
        headers: { 'x-restli-protocol-version': '2.0.0' },
      });
      expect(written.status).toBe(200);
      expect(written.json).toEqual({ value: DATASET });

      // metadata-ingestion/src/datahub/ingestion/graph/client.py get_aspect
      const aspect = await call(t.url, 'GET', `/gms/aspects/${restliEncode(DATASET)}?aspect=datasetProperties&version=0`, {
        token: reader,
      });
      expect(aspect.status).toBe(200);
      expect(aspect.json).toMatchObject({
        urn: DATASET,
        version: 0,
        aspect: {
          'com.linkedin.dataset.DatasetProperties': { name: 'logging_events', description: 'Events', customProperties: { team: 'infra' } },
        },
        created: { actor: EDITOR },
        systemMetadata: { runId: 'no-run-id-provided', lastObserved: 1700000000000 },
      });

      // client.py get_entity_raw
      const entity = await call(t.url, 'GET', `/gms/entitiesV2/${restliEncode(DATASET)}?aspects=List(datasetProperties,datasetKey)`, {
        token: reader,
      });
      expect(entity.status).toBe(200);
      expect(entity.json.entityName).toBe('dataset');
      expect(entity.json.urn).toBe(DATASET);
      expect(Object.keys(entity.json.aspects).sort()).toEqual(['datasetKey', 'datasetProperties']);
      expect(entity.json.aspects.datasetProperties).toMatchObject({
        name: 'datasetProperties',
        type: 'VERSIONED',
        version: 0,
        value: { name: 'logging_events' },
        systemMetadata: { runId: 'no-run-id-provided' },
      });
      expect(entity.json.aspects.datasetKey.value).toEqual({
        platform: 'urn:li:dataPlatform:hive',
        name: 'logging_events',
        origin: 'PROD',
      });

      // smoke-test/tests/test_e2e.py test_gms_batch_get_v2: ids=List(quote(urn1),quote(urn2)).
      const quote = (urn: string) => encodeURIComponent(urn).replace(/%3A/g, ':').replace(/\(/g, '%28').replace(/\)/g, '%29');
      const missing = 'urn:li:dataset:(urn:li:dataPlatform:hive,missing,PROD)';
      const batch = await call(
        t.url,
        'GET',
        `/gms/entitiesV2?ids=List(${quote(DATASET)},${quote(missing)})&aspects=List(datasetProperties)`,
        {
          token: reader,
          headers: { 'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'batch_get' },
        },
      );
      expect(batch.status).toBe(200);
      expect(Object.keys(batch.json.results)).toEqual([DATASET]);
      expect(batch.json.results[DATASET].aspects.datasetProperties.value).toMatchObject({ name: 'logging_events' });
      expect((await call(t.url, 'GET', '/entitiesV2?ids=List(not-a-urn)', { token: reader })).status).toBe(400);
      const all = await call(t.url, 'GET', `/entitiesV2/${restliEncode(DATASET)}`, { token: reader });
      expect(Object.keys(all.json.aspects).sort()).toEqual(['datasetKey', 'datasetProperties']);
      expect(
        (await call(t.url, 'GET', `/entitiesV2/${restliEncode('urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)')}`, { token: reader }))
          .status,
      ).toBe(404);
      expect((await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=status&version=0`, { token: reader })).status).toBe(404);
    });

    it("properties: the SDK's definition proposal, then `properties get` reads the key aspect (structuredproperties_cli.py, graph.exists)", async () => {
      const { t, admin, reader } = await open();
      const keyPath = `/gms/aspects/${restliEncode(RETENTION)}?aspect=structuredPropertyKey&version=0`;
      expect((await call(t.url, 'GET', keyPath, { token: reader })).status).toBe(404);
      const created = await call(t.url, 'POST', '/gms/aspects?action=ingestProposal', {
        token: admin,
        body: { proposal: mcp(RETENTION, 'propertyDefinition', RETENTION_DEFINITION), async: 'false' },
      });
      expect(created.status).toBe(200);
      const key = await call(t.url, 'GET', keyPath, { token: reader });
      expect(key.status).toBe(200);
      expect(key.json.aspect).toEqual({ 'com.linkedin.structured.StructuredPropertyKey': { id: 'io.acryl.privacy.retentionTime' } });
      // structuredproperties.py TypeQualifierAllowedTypes: graph.exists(<entity type urn>) reads entityTypeKey.
      const entityType = await call(
        t.url,
        'GET',
        `/gms/aspects/${restliEncode('urn:li:entityType:datahub.dataset')}?aspect=entityTypeKey&version=0`,
        { token: reader },
      );
      expect(entityType.json.aspect).toEqual({ 'com.linkedin.metadata.key.EntityTypeKey': { id: 'datahub.dataset' } });
      expect(
        (
          await call(t.url, 'GET', `/gms/aspects/${restliEncode('urn:li:entityType:datahub.nope')}?aspect=entityTypeKey&version=0`, {
            token: reader,
          })
        ).status,
      ).toBe(404);
      expect(
        (await call(t.url, 'GET', `/gms/aspects/${restliEncode('urn:li:dataType:datahub.number')}?aspect=dataTypeKey`, { token: reader }))
          .json.aspect,
      ).toEqual({ 'com.linkedin.metadata.key.DataTypeKey': { id: 'datahub.number' } });
      const definition = await call(t.url, 'GET', `/gms/aspects/${restliEncode(RETENTION)}?aspect=propertyDefinition&version=0`, {
        token: reader,
      });
      expect(definition.json.aspect['com.linkedin.structured.StructuredPropertyDefinition']).toMatchObject({
        qualifiedName: 'io.acryl.privacy.retentionTime',
        cardinality: 'MULTIPLE',
      });

      // datahub delete --urn <property> (soft): ingestion/graph/client.py soft_delete_entity emits status { removed: true }.
      const soft = await call(t.url, 'POST', '/gms/aspects?action=ingestProposal', {
        token: admin,
        body: { proposal: mcp(RETENTION, 'status', { removed: true }), async: 'false' },
      });
      expect(soft.status).toBe(200);
      expect((await t.catalog.properties.get(READER, RETENTION))?.removed).toBe(true);
      // datahub delete --urn <property> --hard: /entities?action=delete.
      const hard = await call(t.url, 'POST', '/gms/entities?action=delete', { token: admin, body: { urn: RETENTION } });
      expect(hard.json.value).toMatchObject({ urn: RETENTION, timeseriesRows: 0 });
      expect(hard.json.value.rows).toBeGreaterThanOrEqual(2);
      expect(await t.catalog.properties.get(READER, RETENTION)).toBeUndefined();
      expect((await call(t.url, 'GET', keyPath, { token: reader })).status).toBe(404);
    });

    it('PATCH: set_structured_property sends remove then add on the same path; removing a property that is not set is a no-op (specific/aspect_helpers/structured_properties.py, emitter/mcp_patch_builder.py)', async () => {
      const { t, admin, editor, reader } = await open();
      await call(t.url, 'POST', '/aspects?action=ingestProposal', {
        token: admin,
        body: { proposal: mcp(RETENTION, 'propertyDefinition', RETENTION_DEFINITION) },
      });
      const path = `/properties/${RETENTION}`;
      const set = (value: number) => [
        { op: 'remove', path, value: {} },
        { op: 'add', path, value: { propertyUrn: RETENTION, values: [{ double: value }] } },
      ];
      for (const value of [30, 90]) {
        const r = await call(t.url, 'POST', '/aspects?action=ingestProposal', {
          token: editor,
          body: { proposal: mcp(DATASET, 'structuredProperties', set(value), 'PATCH'), async: 'false' },
        });
        expect(r.status).toBe(200);
        const read = await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=structuredProperties&version=0`, { token: reader });
        expect(read.json.aspect['com.linkedin.structured.StructuredProperties'].properties).toEqual([
          expect.objectContaining({ propertyUrn: RETENTION, values: [{ double: value }] }),
        ]);
      }
      // The REST v2 PATCH takes the same remove-then-add of a property that is not set.
      const other = 'urn:li:dataset:(urn:li:dataPlatform:hive,other,PROD)';
      const v2 = await call(t.url, 'PATCH', `/openapi/v2/entity/dataset/${enc(other)}/structuredProperties`, {
        token: editor,
        contentType: 'application/json-patch+json',
        body: { patch: set(365), arrayPrimaryKeys: { properties: ['propertyUrn'] } },
      });
      expect(v2.status).toBe(200);
      expect(v2.json.aspects.structuredProperties.value.properties).toEqual([expect.objectContaining({ values: [{ double: 365 }] })]);
    });

    it("CREATE refuses an aspect that exists; DELETE removes the aspect; UPSERT of status removed soft-deletes (the CLI's soft delete)", async () => {
      const { t, editor, reader } = await open();
      const ingest = (proposal: unknown) =>
        call(t.url, 'POST', '/aspects?action=ingestProposal', { token: editor, body: { proposal, async: 'false' } });
      expect((await ingest(mcp(DATASET, 'datasetProperties', { name: 'a' }, 'CREATE'))).status).toBe(200);
      const again = await ingest(mcp(DATASET, 'datasetProperties', { name: 'b' }, 'CREATE'));
      expect(again.status).toBe(422);
      expect(again.json.message).toContain('exists already');
      // metadata-ingestion/src/datahub/cli/delete_cli.py soft delete: StatusClass(removed=True)
      expect((await ingest(mcp(DATASET, 'status', { removed: true }))).status).toBe(200);
      expect(
        (await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=status&version=0`, { token: reader })).json.aspect[
          'com.linkedin.common.Status'
        ],
      ).toEqual({ removed: true });
      const deleted = await ingest({ entityType: 'dataset', entityUrn: DATASET, changeType: 'DELETE', aspectName: 'datasetProperties' });
      expect(deleted.status).toBe(200);
      expect((await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=datasetProperties`, { token: reader })).status).toBe(404);
    });

    it('ingestProposalBatch: one invalid proposal is 422 naming it, with a top-level message, and nothing is written; a good batch answers success (rest_emitter.py _emit_restli_mcps)', async () => {
      const { t, editor, reader } = await open();
      const good = [
        mcp(DATASET, 'datasetProperties', { name: 'logging_events' }),
        mcp(DATASET, 'status', { removed: false }),
        mcp('urn:li:dataset:(urn:li:dataPlatform:hive,second,PROD)', 'datasetProperties', { name: 'second' }),
      ];
      const bad = [...good, mcp(DATASET, 'datasetProperties', { nmae: 'typo' })];
      const refused = await call(t.url, 'POST', '/gms/aspects?action=ingestProposalBatch', {
        token: editor,
        body: { proposals: bad, async: 'false' },
      });
      expect(refused.status).toBe(422);
      expect(typeof refused.json.message).toBe('string');
      expect(refused.json.message).toContain('/proposals/3/aspect/value');
      expect(refused.json.error.code).toBe('INVALID_INPUT');
      expect(refused.json.error.details[0].path).toMatch(/^\/proposals\/3\//);
      expect(await t.catalog.entities.get(READER, DATASET)).toBeUndefined();

      const ok = await call(t.url, 'POST', '/gms/aspects?action=ingestProposalBatch', {
        token: editor,
        body: { proposals: good, async: 'false' },
      });
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ value: 'success' });
      expect(Object.keys((await t.catalog.entities.get(READER, DATASET))!.aspects).sort()).toEqual(['datasetProperties', 'status']);

      const garbled = await call(t.url, 'POST', '/aspects?action=ingestProposalBatch', {
        token: editor,
        body: { proposals: [{ ...good[0], aspect: { value: '{not json', contentType: 'application/json' } }] },
      });
      expect(garbled.status).toBe(422);
      expect(garbled.json.error.details[0].path).toBe('/proposals/0/aspect/value');
      expect((await call(t.url, 'GET', `/entitiesV2/${restliEncode(DATASET)}`, { token: reader })).status).toBe(200);
    });

    it('a proposal batch may be larger than the general body limit (the SDK sends up to 15 MB): 16 MiB by default', async () => {
      const { t, editor } = await open();
      const text = 'x'.repeat(40_000);
      const proposals = Array.from({ length: 30 }, (_, i) =>
        mcp(`urn:li:dataset:(urn:li:dataPlatform:hive,big${i},PROD)`, 'datasetProperties', { name: `big${i}`, description: text }),
      );
      expect(JSON.stringify({ proposals }).length).toBeGreaterThan(1024 * 1024);
      const r = await call(t.url, 'POST', '/aspects?action=ingestProposalBatch', { token: editor, body: { proposals } });
      expect(r.status).toBe(200);
      const elsewhere = await call(t.url, 'POST', '/api/graphql', {
        token: editor,
        body: { query: '{ __typename }', padding: 'x'.repeat(1024 * 1024) },
      });
      expect(elsewhere.status).toBe(413);
    });

    it('errors carry a top-level message (what the SDK prints) beside error: refusals and unknown aspects', async () => {
      const { t, reader } = await open();
      const refused = await call(t.url, 'POST', '/aspects?action=ingestProposal', {
        token: reader,
        body: { proposal: mcp(DATASET, 'status', { removed: false }) },
      });
      expect(refused.status).toBe(403);
      expect(refused.json.message).toContain('EDIT_ENTITY');
      expect(refused.json.status).toBe(403);
      const unknown = await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=nope`, { token: reader });
      expect(unknown.status).toBe(400);
      expect(unknown.json.message).toContain('nope');
      // metadata-ingestion/src/datahub/ingestion/graph/client.py get_aspect refuses timeseries aspects itself; the server says why too.
      const timeseries = await call(t.url, 'GET', `/aspects/${restliEncode(DATASET)}?aspect=datasetProfile`, { token: reader });
      expect(timeseries.status).toBe(400);
      expect(timeseries.json.message).toContain('timeseries');
      const noToken = await call(t.url, 'POST', '/aspects?action=ingestProposal', {
        body: { proposal: mcp(DATASET, 'status', { removed: false }) },
      });
      expect(noToken.status).toBe(401);
      expect(typeof noToken.json.message).toBe('string');
    });

    it('POST /entities?action=delete hard-deletes and reports rows (ingestion/graph/client.py hard_delete_entity, cli/delete_cli.py)', async () => {
      const { t, editor, reader } = await open();
      await call(t.url, 'POST', '/aspects?action=ingestProposalBatch', {
        token: editor,
        body: { proposals: [mcp(DATASET, 'datasetProperties', { name: 'x' }), mcp(DATASET, 'status', { removed: false })] },
      });
      await t.catalog.timeseries.append(ADMIN, DATASET, 'datasetProfile', { timestampMillis: 1700000000000, rowCount: 5 });
      const r = await call(t.url, 'POST', '/gms/entities?action=delete', { token: editor, body: { urn: DATASET } });
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ value: { urn: DATASET, rows: 3, timeseriesRows: 1 } });
      expect(await t.catalog.entities.get(READER, DATASET)).toBeUndefined();
      expect((await call(t.url, 'POST', '/entities?action=delete', { token: editor, body: { urn: DATASET } })).json).toEqual({
        value: { urn: DATASET, rows: 0, timeseriesRows: 0 },
      });
      const refused = await call(t.url, 'POST', '/entities?action=delete', {
        token: reader,
        body: { urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,x,PROD)' },
      });
      expect(refused.status).toBe(403);
      expect(refused.json.message).toContain('EDIT_ENTITY');
      const aspectDelete = await call(t.url, 'POST', '/entities?action=delete', {
        token: editor,
        body: { urn: DATASET, aspectName: 'datasetProfile' },
      });
      expect(aspectDelete.status).toBe(501);
      // cli/delete_cli.py asks for deleteReferences before hard-deleting a user: refused with a message it prints.
      const references = await call(t.url, 'POST', '/entities?action=deleteReferences', {
        token: editor,
        body: { urn: 'urn:li:corpuser:jdoe', dryRun: true },
      });
      expect(references.status).toBe(501);
      expect(references.json.message).toContain('deleteReferences is not supported');
    });
  });
}
