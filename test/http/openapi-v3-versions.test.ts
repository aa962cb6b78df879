import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { call, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

// A kept version read through OpenAPI v3 (batchGet's `If-Version-Match`, the aspect GET's `version=N`) with
// `systemMetadata=true` answers that version's own system metadata, as the latest version does.

const V3 = '/openapi/v3/entity';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,v3.versions,PROD)';
const ASPECT_PATH = `${V3}/dataset/${enc(URN)}/datasetProperties`;

describe.each(['memory', 'sqlite'] as const)('OpenAPI v3 kept versions with their system metadata (%s)', (kind) => {
  let t: TestServer;
  let editor: string;
  let reader: string;

  beforeAll(async () => {
    t = await startTestServer(kind === 'memory' ? { catalog: { adapter: createMemoryAdapter() } } : {});
    editor = await t.tokenFor(EDITOR);
    reader = await t.tokenFor(READER);
    for (const [name, runId] of [
      ['first', 'run-1'],
      ['second', 'run-2'],
    ]) {
      const written = await call(t.url, 'POST', `${ASPECT_PATH}?createIfNotExists=false`, {
        token: editor,
        body: { value: { name }, systemMetadata: { runId, pipelineName: `pipeline-${runId}` } },
      });
      expect(written.status).toBe(200);
    }
  });
  afterAll(() => t.close());

  const batchGet = (version: string, withSystemMetadata = true) =>
    call(t.url, 'POST', `${V3}/dataset/batchGet${withSystemMetadata ? '?systemMetadata=true' : ''}`, {
      token: reader,
      body: [{ urn: URN, datasetProperties: { headers: { 'If-Version-Match': version } } }],
    });

  it('batchGet with If-Version-Match: 1 answers version 1 with its own system metadata and stamp', async () => {
    const first = await batchGet('1');
    expect(first.status).toBe(200);
    expect(first.json).toHaveLength(1);
    const aspect = first.json[0].datasetProperties;
    expect(aspect.value).toEqual({ name: 'first' });
    expect(aspect.systemMetadata).toMatchObject({ runId: 'run-1', pipelineName: 'pipeline-run-1', version: '1' });
    // As a reader sees it: the writer's fields, the version and stamps, never the catalog's own bookkeeping.
    expect(aspect.systemMetadata.clientSystemMetadata).toBeUndefined();
    expect(aspect.auditStamp).toMatchObject({ actor: EDITOR });
  });

  it('version 2 and 0 (the latest) carry the second write’s; without systemMetadata=true only the value', async () => {
    for (const version of ['2', '0']) {
      const answer = await batchGet(version);
      expect(answer.json[0].datasetProperties.value).toEqual({ name: 'second' });
      expect(answer.json[0].datasetProperties.systemMetadata).toMatchObject({
        runId: 'run-2',
        pipelineName: 'pipeline-run-2',
        version: '2',
      });
    }
    expect((await batchGet('1', false)).json).toEqual([{ urn: URN, datasetProperties: { value: { name: 'first' } } }]);
  });

  it('the aspect GET with version=1&systemMetadata=true answers the same as batchGet', async () => {
    const read = await call(t.url, 'GET', `${ASPECT_PATH}?version=1&systemMetadata=true`, { token: reader });
    expect(read.status).toBe(200);
    expect(read.json).toEqual((await batchGet('1')).json[0].datasetProperties);
  });
});
