import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliEnv, removeTempDirs, requireBuiltCli, runCli, serveInProcess, tempDir, type CliResult, type Served } from './helpers';
import { FINANCE_POLICY_YAML } from './finance-policy';

vi.setConfig({ testTimeout: 180_000 });

/**
 * Metadata policies enforced on the command line's write routes. Embedded mode acts as a super user, so
 * these run in REMOTE mode against `metacatalog serve`, with the token of a finance steward: a METADATA
 * policy grants ana EDIT_ENTITY_PROPERTIES for `finance.*` properties on datasets whose
 * `finance.domain` value is `finance` (docs/access.md). Set-up as in test/core/access/metadata-policies.test.ts,
 * done through the CLI as the bootstrap admin.
 */
const ANA = 'urn:li:corpuser:ana';
const FIN = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.ledger,PROD)';
const MKT = 'urn:li:dataset:(urn:li:dataPlatform:hive,marketing.campaigns,PROD)';
const DOMAIN = 'urn:li:structuredProperty:finance.domain';
const COST = 'urn:li:structuredProperty:finance.costCenter';
const PII = 'urn:li:structuredProperty:pii.level';
const s = (value: string) => ({ string: value });

const PROPERTIES_YAML = ['finance.domain', 'finance.costCenter', 'pii.level']
  .map((id) => `- id: ${id}\n  type: string\n  entity_types: [dataset]\n`)
  .join('');

let server: Served;
let stewardToken = '';
const env = cliEnv();

function write(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}
const asAdmin = (...args: string[]): Promise<CliResult> => runCli([...args, '--server', server.url, '--token', server.token], { env });
const asSteward = (...args: string[]): Promise<CliResult> => runCli([...args, '--server', server.url, '--token', stewardToken], { env });

const entityLine = (urn: string, properties: Array<[string, string]>) =>
  JSON.stringify({
    urn,
    aspects: { structuredProperties: { properties: properties.map(([propertyUrn, value]) => ({ propertyUrn, values: [s(value)] })) } },
  });

/** The error a `--json` run printed: one JSON line on stderr (docs/cli.md), after an exit of 1. */
interface Refusal {
  code: string;
  message: string;
  reason?: string;
  exitCode: number;
  details?: Array<{ path: string; message: string }>;
}
function refusalOf(result: CliResult): Refusal {
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return (JSON.parse(lines[0]!) as { error: Refusal }).error;
}

/** The stored structured property values of a dataset, read by the admin over REST v2: [[property, values], ...] sorted. */
async function valuesOf(urn: string): Promise<Array<[string, unknown]>> {
  const response = await fetch(`${server.url}/openapi/v2/entity/dataset/${encodeURIComponent(urn)}`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    aspects: { structuredProperties?: { value: { properties: Array<{ propertyUrn: string; values: unknown }> } } };
  };
  return (body.aspects.structuredProperties?.value.properties ?? [])
    .map((a): [string, unknown] => [a.propertyUrn, a.values])
    .sort((a, b) => a[0].localeCompare(b[0]));
}

beforeAll(async () => {
  requireBuiltCli();
  server = await serveInProcess();
  const upserted = await asAdmin('properties', 'upsert', '-f', write('properties.yaml', PROPERTIES_YAML));
  expect(upserted.stderr).toBe('');
  expect(upserted.code).toBe(0);
  const datasets = [
    JSON.stringify({ urn: FIN, aspects: { datasetProperties: { name: 'ledger' } } }),
    JSON.stringify({ urn: MKT, aspects: { datasetProperties: { name: 'campaigns' } } }),
    entityLine(FIN, [[DOMAIN, 'finance']]),
    entityLine(MKT, [[DOMAIN, 'marketing']]),
  ];
  const ingested = await asAdmin('ingest', write('datasets.jsonl', `${datasets.join('\n')}\n`));
  expect(ingested.code).toBe(0);
  const policy = await asAdmin('policies', 'create', '-f', write('policy.yaml', FINANCE_POLICY_YAML));
  expect(policy.code).toBe(0);
  const token = await asAdmin('tokens', 'create', '--name', 'steward', '--for', ANA);
  expect(token.code).toBe(0);
  stewardToken = token.stdout.trim();
  expect(stewardToken).not.toBe('');
  expect(await valuesOf(FIN)).toEqual([[DOMAIN, [s('finance')]]]);
  expect(await valuesOf(MKT)).toEqual([[DOMAIN, [s('marketing')]]]);
});

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

describe('metadata policies on the command line (remote, as a finance steward)', () => {
  it('ingest: a finance property on the finance dataset is written; a file with a pii property or the marketing dataset is refused whole', async () => {
    const ok = await asSteward(
      'ingest',
      write(
        'ok.jsonl',
        `${entityLine(FIN, [
          [DOMAIN, 'finance'],
          [COST, 'cc-1'],
        ])}\n`,
      ),
    );
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Ingested 1 entities');
    expect(await valuesOf(FIN)).toEqual([
      [COST, [s('cc-1')]],
      [DOMAIN, [s('finance')]],
    ]);

    // One chunk: the finance dataset's new cost centre, and a pii value on it.
    const piiFile = write(
      'pii.jsonl',
      `${entityLine(FIN, [
        [DOMAIN, 'finance'],
        [COST, 'cc-2'],
        [PII, 'high'],
      ])}\n`,
    );
    const pii = await asSteward('ingest', piiFile);
    expect(pii.code).toBe(1);
    expect(pii.stderr).toBe(
      `metacatalog ingest: ${ANA} may not set or remove ${PII} on ${FIN}: no policy grants EDIT_ENTITY_PROPERTIES for that property there; nothing was written (writing the chunk of line 1; nothing was written before it)\n`,
    );
    const piiJson = refusalOf(await asSteward('ingest', piiFile, '--json'));
    expect(piiJson).toMatchObject({ code: 'FORBIDDEN', exitCode: 1 });
    expect(piiJson.message).toContain(PII);
    expect(piiJson.message).toContain(FIN);
    expect(await valuesOf(FIN)).toEqual([
      [COST, [s('cc-1')]],
      [DOMAIN, [s('finance')]],
    ]);

    // Two lines in one chunk: the allowed change on the finance dataset, and one on the marketing dataset.
    const marketing = await asSteward(
      'ingest',
      write(
        'marketing.jsonl',
        `${entityLine(FIN, [
          [DOMAIN, 'finance'],
          [COST, 'cc-3'],
        ])}\n${entityLine(MKT, [
          [DOMAIN, 'marketing'],
          [COST, 'cc-3'],
        ])}\n`,
      ),
      '--json',
    );
    const marketingError = refusalOf(marketing);
    expect(marketingError).toMatchObject({ code: 'FORBIDDEN', exitCode: 1 });
    expect(marketingError.message).toBe(
      `${ANA} lacks the EDIT_ENTITY_PROPERTIES privilege on ${MKT} (to set or remove ${COST}): no policy that grants it covers that entity; nothing was written (writing the chunk of lines 1-2; nothing was written before it)`,
    );
    // The refused item is the file's second line; the first (allowed on its own) was not written either.
    expect(marketingError.details).toEqual([{ path: '/proposals/1/aspect/value', message: expect.stringContaining(MKT) as unknown }]);
    expect(JSON.parse(marketing.stdout)).toMatchObject({ entities: 0, chunks: 0, lines: 2, failedChunk: { firstLine: 1, lastLine: 2 } });
    expect(await valuesOf(FIN)).toEqual([
      [COST, [s('cc-1')]],
      [DOMAIN, [s('finance')]],
    ]);
    expect(await valuesOf(MKT)).toEqual([[DOMAIN, [s('marketing')]]]);
  });

  it('properties import-values: a finance column is written; a pii column or a marketing row refuses the whole file', async () => {
    const before = await valuesOf(FIN);
    const ok = await asSteward('properties', 'import-values', write('ok.csv', `urn,finance.costCenter\n"${FIN}",cc-csv\n`));
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('1 entities changed');
    const after = await valuesOf(FIN);
    expect(after).toEqual(before.map(([p, v]) => (p === COST ? [p, [s('cc-csv')]] : [p, v])));

    const piiFile = write('pii.csv', `urn,finance.costCenter,pii.level\n"${FIN}",cc-csv-2,high\n`);
    const pii = await asSteward('properties', 'import-values', piiFile);
    expect(pii.code).toBe(1);
    expect(pii.stderr).toBe(
      `metacatalog properties import-values: ${ANA} may not set or remove ${PII} on ${FIN}: no policy grants EDIT_ENTITY_PROPERTIES for that property there; nothing was written\n`,
    );
    const piiJson = refusalOf(await asSteward('properties', 'import-values', piiFile, '--json'));
    expect(piiJson).toMatchObject({ code: 'FORBIDDEN', exitCode: 1, reason: 'EDIT_ENTITY_PROPERTIES' });
    expect(piiJson.details).toEqual([{ path: '/edits/0', message: expect.stringContaining(PII) as unknown }]);
    expect(await valuesOf(FIN)).toEqual(after);

    const marketing = await asSteward(
      'properties',
      'import-values',
      write('marketing.csv', `urn,finance.costCenter\n"${FIN}",cc-csv-3\n"${MKT}",cc-csv-3\n`),
      '--json',
    );
    const marketingError = refusalOf(marketing);
    expect(marketingError).toMatchObject({ code: 'FORBIDDEN', exitCode: 1 });
    expect(marketingError.message).toBe(
      `${ANA} lacks the EDIT_ENTITY_PROPERTIES privilege on ${MKT} (to set or remove ${COST}): no policy that grants it covers that entity; nothing was written`,
    );
    // The refused edit is the file's second row; the first (allowed on its own) was not written either.
    expect(marketingError.details).toEqual([{ path: '/edits/1', message: expect.stringContaining(MKT) as unknown }]);
    expect(await valuesOf(FIN)).toEqual(after);
    expect(await valuesOf(MKT)).toEqual([[DOMAIN, [s('marketing')]]]);
  });

  it('properties apply: refused at the dry run for the marketing dataset, with the refused entities counted; allowed on finance', async () => {
    const before = [await valuesOf(FIN), await valuesOf(MKT)];
    const all = ['properties', 'apply', '--type', 'dataset', '--set', 'finance.costCenter=cc-apply'];
    const dry = await asSteward(...all, '--dry-run', '--json');
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    const preview = JSON.parse(dry.stdout) as { matched: number; violations: unknown[] };
    expect(preview.matched).toBe(2);
    expect(preview.violations).toEqual([
      {
        urn: MKT,
        propertyUrn: COST,
        count: 1,
        privilege: 'EDIT_ENTITY_PROPERTIES',
        message: `${ANA} lacks the EDIT_ENTITY_PROPERTIES privilege on ${MKT} (to set or remove ${COST}): no policy that grants it covers that entity`,
      },
    ]);
    const refused = await asSteward(...all);
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: `metacatalog properties apply: the change is refused: ${ANA} lacks the EDIT_ENTITY_PROPERTIES privilege on ${MKT} (to set or remove ${COST}): no policy that grants it covers that entity; nothing was queued\n`,
    });
    const refusedJson = refusalOf(await asSteward(...all, '--json'));
    expect(refusedJson.code).toBe('FORBIDDEN');
    expect(await valuesOf(FIN)).toEqual(before[0]);
    expect(await valuesOf(MKT)).toEqual(before[1]);

    // Limited to the finance datasets, the same change is allowed and runs on the server.
    const finance = [...all.slice(0, 4), '--filter', 'structuredProperties.finance.domain=finance', ...all.slice(4)];
    const fineDry = JSON.parse((await asSteward(...finance, '--dry-run', '--json')).stdout) as { matched: number; violations: unknown[] };
    expect(fineDry).toMatchObject({ matched: 1, violations: [] });
    const done = await asSteward(...finance);
    expect(done.code).toBe(0);
    expect(done.stdout + done.stderr).toContain('DONE: 1 of 1 done, 0 failed');
    expect(await valuesOf(FIN)).toEqual(before[0]!.map(([p, v]) => (p === COST ? [p, [s('cc-apply')]] : [p, v])));
    expect(await valuesOf(MKT)).toEqual(before[1]);
  });
});
