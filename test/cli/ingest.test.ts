import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, cliEnv, HAS_SCRIPT, removeTempDirs, requireBuiltCli, runCli, runCliOnTerminal, tempDir, withCatalog } from './helpers';
import { MODES, withMode as withModeOf, type ModeCatalog } from './modes';

vi.setConfig({ testTimeout: 180_000 });

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const CUSTOMERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)';
const FLOW = 'urn:li:dataFlow:(airflow,nightly,prod)';

/**
 * A change proposal as DataHub's file sink writes it (metadata-ingestion/src/datahub/ingestion/sink/file.py:
 * MetadataChangeProposalWrapper.to_obj(simplified_structure=True), the aspect as `{ "json": ... }`).
 */
const fileSinkLine = (entityUrn: string, aspectName: string, json: unknown) =>
  JSON.stringify({
    entityType: entityUrn.split(':')[2],
    entityUrn,
    changeType: 'UPSERT',
    aspectName,
    aspect: { json },
    systemMetadata: { lastObserved: 1700000000000, runId: 'file-1' },
  });
/** A change proposal as DatahubRestEmitter.emit_mcp sends it (metadata-ingestion/src/datahub/emitter/rest_emitter.py): the aspect as JSON text. */
const emitterLine = (entityUrn: string, aspectName: string, value: unknown) =>
  JSON.stringify({
    entityType: entityUrn.split(':')[2],
    entityUrn,
    changeType: 'UPSERT',
    aspectName,
    aspect: { value: JSON.stringify(value), contentType: 'application/json' },
  });
const entityLine = (urn: string, aspects: Record<string, unknown>) => JSON.stringify({ urn, aspects });

async function aspectsOf(mc: ModeCatalog, urn: string): Promise<Record<string, unknown> | undefined> {
  if (mc.server) {
    const response = await fetch(`${mc.server.url}/openapi/v2/entity/${urn.split(':')[2]}/${encodeURIComponent(urn)}`, {
      headers: { authorization: `Bearer ${mc.server.token}` },
    });
    if (response.status === 404) return undefined;
    const body = (await response.json()) as { aspects: Record<string, { value: unknown }> };
    return Object.fromEntries(Object.entries(body.aspects).map(([k, v]) => [k, v.value]));
  }
  return withCatalog(mc.db, async (catalog) => {
    const view = await catalog.entities.get(ADMIN, urn);
    return view && Object.fromEntries(Object.entries(view.aspects).map(([k, v]) => [k, v.value]));
  });
}

function file(lines: readonly string[]): string {
  const path = join(tempDir(), 'lines.jsonl');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe.each(MODES)('metacatalog ingest ($name)', (mode) => {
  const withMode = (work: Parameters<typeof withModeOf>[1]) => withModeOf(mode, work);

  it('writes a file of entity lines and change proposals, and prints a summary', async () => {
    await withMode(async (mc, cli) => {
      const path = file([
        entityLine(ORDERS, { datasetProperties: { name: 'orders', description: 'All orders' }, status: { removed: false } }),
        '',
        fileSinkLine(CUSTOMERS, 'datasetProperties', { name: 'customers' }),
        emitterLine(FLOW, 'dataFlowInfo', { name: 'nightly' }),
      ]);
      const r = await cli('ingest', path);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Ingested 3 entities \(4 aspects\) in 1 chunk in \d+\.\d\d s\n$/);
      expect(await aspectsOf(mc, ORDERS)).toEqual({
        datasetProperties: { name: 'orders', description: 'All orders' },
        status: { removed: false },
      });
      expect(await aspectsOf(mc, CUSTOMERS)).toEqual({ datasetProperties: { name: 'customers' } });
      expect(await aspectsOf(mc, FLOW)).toEqual({ dataFlowInfo: { name: 'nightly' } });

      const json = await cli('ingest', path, '--json', '--chunk-size', '2');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ entities: 3, aspects: 4, chunks: 2, lines: 3, badLines: 0, refused: [] });
    });
  });

  it('reports bad lines by number; nothing of their chunk is written, the other chunks are; exit 1', async () => {
    await withMode(async (mc, cli) => {
      const path = file([
        entityLine(ORDERS, { datasetProperties: { name: 'orders' } }), // 1: chunk 1
        '{"urn": "urn:li:dataset:(urn:li:dataPlatform:hive,x,PROD)", "aspects": ', // 2: chunk 1, invalid JSON
        entityLine(CUSTOMERS, { datasetProperties: { name: 'customers' } }), // 3: chunk 2
        entityLine(FLOW, { dataFlowInfo: { name: 'nightly', nmae: 'typo' } }), // 4: chunk 2, refused by the catalog
        emitterLine('urn:li:dataset:(urn:li:dataPlatform:hive,third,PROD)', 'status', { removed: false }), // 5: chunk 3
        '[1, 2]', // 6: chunk 3, wrong shape
        entityLine('urn:li:dataset:(urn:li:dataPlatform:hive,fourth,PROD)', { status: { removed: false } }), // 7: chunk 4
      ]);
      const r = await cli('ingest', path, '--chunk-size', '2');
      expect(r.code).toBe(1);
      const reported = r.stderr.split('\n').filter(Boolean);
      expect(reported, r.stderr).toEqual([
        expect.stringMatching(/^line 2: invalid JSON/),
        expect.stringMatching(/^line 4: \/aspects\/dataFlowInfo.*nmae/),
        expect.stringMatching(/^line 6: must be a JSON object/),
      ]);
      expect(r.stdout).toMatch(/^Ingested 1 entities \(1 aspects\) in 1 chunk in .* s; 3 lines refused, their chunks not written\n$/);
      expect(await aspectsOf(mc, ORDERS)).toBeUndefined();
      expect(await aspectsOf(mc, CUSTOMERS)).toBeUndefined();
      expect(await aspectsOf(mc, 'urn:li:dataset:(urn:li:dataPlatform:hive,third,PROD)')).toBeUndefined();
      expect(await aspectsOf(mc, 'urn:li:dataset:(urn:li:dataPlatform:hive,fourth,PROD)')).toEqual({ status: { removed: false } });
    });
  });

  it("names a bad urn of an entity line at the line's own field, /urn", async () => {
    await withMode(async (_mc, cli) => {
      const path = file([entityLine('not-a-urn', { status: { removed: false } })]);
      const r = await cli('ingest', path);
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n').filter(Boolean), r.stderr).toEqual([expect.stringMatching(/^line 1: \/urn: .*not-a-urn/)]);
    });
  });

  it('reads standard input with -', async () => {
    await withMode(async (mc) => {
      const input = `${entityLine(ORDERS, { status: { removed: false } })}\n${fileSinkLine(CUSTOMERS, 'status', { removed: true })}\n`;
      const r = await runCli(['ingest', '-', ...mc.args], { env: mc.env, input });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Ingested 2 entities \(2 aspects\) in 1 chunk/);
      expect(await aspectsOf(mc, CUSTOMERS)).toEqual({ status: { removed: true } });
    });
  });

  it('usage errors: no file, a file that is not there', async () => {
    await withMode(async (_mc, cli) => {
      expect((await cli('ingest')).code).toBe(2);
      const missing = await cli('ingest', join(tempDir(), 'none.jsonl'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('cannot read');
    });
  });
});

describe('metacatalog ingest on a terminal', () => {
  it.runIf(HAS_SCRIPT)('draws its progress on the terminal (and none off it: the other tests see an empty stderr)', async () => {
    const db = join(tempDir(), 'catalog.db');
    const path = file([entityLine(ORDERS, { status: { removed: false } }), entityLine(CUSTOMERS, { status: { removed: false } })]);
    const r = await runCliOnTerminal(['ingest', path, '--db', db, '--chunk-size', '1'], '', cliEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Ingesting bytes \[#+-*\] \d+% \d+\/\d+/);
    expect(r.stdout).toContain('Ingested 2 entities (2 aspects) in 2 chunks');
  });
});
