import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog } from '../../src/index';
import {
  ADMIN,
  cliEnv,
  HAS_SCRIPT,
  removeTempDirs,
  requireBuiltCli,
  runCli,
  runCliOnTerminal,
  serveInProcess,
  tempDir,
  withCatalog,
  type Served,
} from './helpers';
import { dataset, FIXED, NOTE, populate, roundTrip, rowsOf, TIER } from './values-round-trip';

vi.setConfig({ testTimeout: 180_000 });

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

describe('properties export-values / import-values (SQLite)', () => {
  it('round-trips 2,500 rows (three export pages, five import chunks): export, edit, clear and remove cells, dry run, import, export again', async () => {
    const db = join(tempDir(), 'values.db');
    const open = () => createCatalog({ adapter: createSqliteAdapter({ filename: db }), superUsers: [ADMIN], jobs: { background: false } });
    await roundTrip({ args: ['--db', db], open }, 2500);
  });
});

describe('properties import-values: refusals', () => {
  async function small(): Promise<{ db: string; file: (text: string) => string }> {
    const db = join(tempDir(), 'small.db');
    await withCatalog(db, async (catalog) => {
      await populate(catalog, 3);
      await catalog.properties.upsertValues(ADMIN, dataset(1), {
        properties: [
          { propertyUrn: FIXED, values: [{ string: 'once' }] },
          { propertyUrn: TIER, values: [{ string: 'gold' }] },
        ],
      });
    });
    return {
      db,
      file: (text) => {
        const path = join(tempDir(), 'edit.csv');
        writeFileSync(path, text);
        return path;
      },
    };
  }

  it('lists every bad cell by line and column and writes nothing', async () => {
    const { db, file } = await small();
    const before = await withCatalog(db, (catalog) => catalog.properties.getValues(ADMIN, dataset(0)));
    const csv = [
      'urn,csv.tier,retention,csv.days',
      `"${dataset(0)}",silver,,1`,
      `"${dataset(2)}",bronze,,ninety`,
      `"${dataset(1)}","gold|silver",,`,
      `"urn:li:dataset:(urn:li:dataPlatform:hive,nowhere,PROD)",gold,,`,
    ].join('\n');
    const unknown = await runCli(['properties', 'import-values', file(csv), '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('line 1, column 3 ("retention"): "retention" is not a structured property');

    const bad = file(
      [
        'urn,csv.tier,csv.days,csv.fixed',
        `"${dataset(0)}",silver,1,`,
        `"${dataset(2)}",bronze,ninety,`,
        `"${dataset(1)}","gold|silver",,changed`,
        `"urn:li:dataset:(urn:li:dataPlatform:hive,nowhere,PROD)",gold,,`,
        `"${dataset(0)}",gold,,`,
        `"${dataset(4)}","multi`,
        `line",C:\\temp,`,
      ].join('\n'),
    );
    const refused = await runCli(['properties', 'import-values', bad, '--db', db]);
    expect(refused.code).toBe(1);
    // File problems come first (nothing is sent to the catalog while the file itself is wrong).
    expect(refused.stderr.split('\n').filter((l) => l.includes(': line '))).toEqual([
      expect.stringMatching(/: line 6, column "urn": .* is on line 2 already$/),
      expect.stringMatching(/: line 7, column "csv.days": a backslash must be doubled/),
    ]);
    expect(refused.stderr).toMatch(/2 problems; nothing was written/);

    const catalogProblems = file(
      [
        'urn,csv.tier,csv.days,csv.fixed',
        `"${dataset(0)}",silver,1,`,
        `"${dataset(2)}",bronze,ninety,`,
        `"${dataset(1)}","gold|silver",,changed`,
        `"urn:li:dataset:(urn:li:dataPlatform:hive,nowhere,PROD)",gold,,`,
      ].join('\r\n'),
    );
    const json = await runCli(['properties', 'import-values', catalogProblems, '--db', db, '--json']);
    expect(json.code).toBe(1);
    const { error } = JSON.parse(json.stderr) as {
      error: { code: string; message: string; details: Array<{ path: string; message: string }> };
    };
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('4 problems; nothing was written');
    expect(error.details).toEqual([
      { path: 'line 3, column "csv.days"', message: expect.stringContaining('should be a number') },
      { path: 'line 4, column "csv.tier"', message: expect.stringContaining('cardinality SINGLE') },
      { path: 'line 4, column "csv.fixed"', message: expect.stringContaining('is immutable') },
      { path: 'line 5, column "urn"', message: expect.stringContaining('does not exist') },
    ]);
    expect(await withCatalog(db, (catalog) => catalog.properties.getValues(ADMIN, dataset(0)))).toEqual(before);
  });

  it('a dry run reports the counts and writes nothing; a soft-deleted column is refused', async () => {
    const { db, file } = await small();
    const edit = file(`urn,csv.tier,csv.note\n"${dataset(0)}",bronze,<remove>\n"${dataset(1)}",gold,\n`);
    const dry = await runCli(['properties', 'import-values', edit, '--dry-run', '--db', db]);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toBe(
      `${edit}: 2 rows: 1 entities would change (1 properties set, 1 removed), 1 unchanged\n` +
        'This was a dry run: nothing was written. Run it again without --dry-run to write.\n',
    );
    expect(await withCatalog(db, (catalog) => catalog.properties.getValues(ADMIN, dataset(0)))).toEqual(
      expect.arrayContaining([expect.objectContaining({ propertyUrn: TIER, values: [{ string: 'gold' }] })]),
    );
    await withCatalog(db, (catalog) => catalog.properties.softDelete(ADMIN, NOTE));
    const refused = await runCli(['properties', 'import-values', edit, '--db', db]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'line 1, column 3 ("csv.note"): structured property urn:li:structuredProperty:csv.note is soft-deleted',
    );
  });
});

describe.runIf(HAS_SCRIPT)('properties import-values on a terminal', () => {
  it('draws a progress bar while it writes', async () => {
    const db = join(tempDir(), 'terminal.db');
    await withCatalog(db, (catalog) => populate(catalog, 3));
    const file = join(tempDir(), 'terminal.csv');
    writeFileSync(file, `urn,csv.tier\n"${dataset(0)}",silver\n"${dataset(1)}",<remove>\n`);
    const run = await runCliOnTerminal(['properties', 'import-values', file, '--db', db], '', cliEnv());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Writing values [');
    expect(run.stdout).toContain('100% 2/2');
    expect(run.stdout).toContain('2 rows: 2 entities changed (1 properties set, 1 removed), 0 unchanged');
  });
});

describe('properties export-values / import-values against a server', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveInProcess();
  });
  afterAll(() => served.stop());

  it('round-trips through the values route, and refuses a token without EDIT_ENTITY_PROPERTIES', async () => {
    await withCatalog(served.db, (catalog) => populate(catalog, 300));
    const args = ['--server', served.url, '--token', served.token];
    const first = join(tempDir(), 'remote.csv');
    const exported = await runCli(['properties', 'export-values', '--filter', 'structuredProperties.csv.tier=gold', '-o', first, ...args]);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsOf(first);
    expect(rows).toHaveLength(101);
    expect(rows.slice(1).every((r) => r[4] === 'gold')).toBe(true);
    const edited = rows.map((row, r) => (r === 0 ? row : [row[0]!, '', '', 'a|b', 'bronze']));
    const second = join(tempDir(), 'remote-edit.csv');
    writeFileSync(second, stringify(edited));
    const imported = await runCli(['properties', 'import-values', second, '--json', ...args]);
    expect(imported.stderr).toBe('');
    expect(JSON.parse(imported.stdout)).toMatchObject({ dryRun: false, entities: 100, changed: 100, set: 200 });
    const again = join(tempDir(), 'remote-again.csv');
    expect(
      (await runCli(['properties', 'export-values', '--property', 'csv.tier', '--property', 'csv.tags', '-o', again, ...args])).code,
    ).toBe(0);
    const after = rowsOf(again);
    expect(after[0]).toEqual(['urn', 'csv.tags', 'csv.tier']);
    expect(after.filter((r) => r[2] === 'bronze' && r[1] === 'a|b')).toHaveLength(100);

    const created = await runCli(['tokens', 'create', '--name', 'reader', '--for', 'urn:li:corpuser:reader', '--json', ...args]);
    const { accessToken } = JSON.parse(created.stdout) as { accessToken: string };
    const forbidden = await runCli(['properties', 'import-values', second, '--dry-run', '--server', served.url, '--token', accessToken]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain('EDIT_ENTITY_PROPERTIES');
  });
});
