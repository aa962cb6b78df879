import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, removeTempDirs, requireBuiltCli, runCli, startServe, tempDir, withCatalog } from './helpers';
import { MODES, withMode } from './modes';
import { POSTGRES_URL, serverDecision } from '../support/postgres';
import type { Catalog } from '../../src/index';

vi.setConfig({ testTimeout: 180_000 });
beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const withPostgres = (await serverDecision('test/cli/export-backup.test.ts')) === 'run';

async function populate(catalog: Catalog, names: readonly string[]): Promise<void> {
  await catalog.properties.create(ADMIN, { qualifiedName: 'owner', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.entities.upsertMany(
    ADMIN,
    names.map((name) => ({
      urn: ds(name),
      aspects: {
        datasetProperties: { name },
        structuredProperties: { properties: [{ propertyUrn: 'urn:li:structuredProperty:owner', values: [{ string: `team-${name}` }] }] },
      },
    })),
  );
  await catalog.timeseries.append(ADMIN, ds(names[0]!), 'datasetProfile', { timestampMillis: 1_700_000_000_000, rowCount: 5 });
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { kind: string; [k: string]: unknown });
/** The records of an export without its header (which names the source and the time). */
const body = (file: string) => lines(file).filter((r) => r.kind !== 'header');

describe('metacatalog export, then ingest of the export', () => {
  for (const mode of MODES) {
    it(`${mode.name}: export -o writes every record; ingest reads it into a new SQLite file${withPostgres ? ' and into PostgreSQL' : ''}`, async () => {
      await withMode(mode, async (mc, cli) => {
        await withCatalog(mc.db, (catalog) => populate(catalog, ['a', 'b', 'c']));
        const file = join(tempDir(), 'catalog.jsonl');
        const exported = await cli('export', '-o', file);
        expect(exported.stderr).toBe('');
        expect(exported.code).toBe(0);
        const records = lines(file);
        // The property, three datasets, and (remote) the bootstrap admin token.
        const entities = records.filter((r) => r.kind === 'entity').length;
        expect(entities).toBe(mode.name === 'remote' ? 5 : 4);
        expect(exported.stdout).toMatch(new RegExp(`^Exported ${entities} entities \\(\\d+ aspects\\), 1 timeseries rows`));
        expect(records[0]).toMatchObject({ kind: 'header', format: 'metacatalog-export', source: 'sqlite' });
        expect(records.at(-1)).toMatchObject({ kind: 'end', counts: { timeseries: 1 } });
        expect(existsSync(`${file}.partial`)).toBe(false);
        // The file exists now: a second export to it is refused without --force.
        expect((await cli('export', '-o', file)).code).toBe(2);

        const target = join(tempDir(), 'moved.db');
        const imported = await runCli(['ingest', file, '--db', target]);
        expect(imported.stderr).toBe('');
        expect(imported.stdout).toMatch(new RegExp(`^Imported ${entities} entities .* 1 timeseries rows`));
        expect(imported.code).toBe(0);
        const again = join(tempDir(), 'again.jsonl');
        expect((await runCli(['export', '--db', target, '-o', again])).code).toBe(0);
        expect(body(again)).toEqual(body(file));

        if (withPostgres) {
          const schema = `mc_cli_export_${Date.now()}_${mode.name}`;
          const pgArgs = ['--postgres', POSTGRES_URL, '--postgres-schema', schema];
          expect((await runCli(['ingest', file, ...pgArgs])).code).toBe(0);
          const fromPostgres = join(tempDir(), 'pg.jsonl');
          expect((await runCli(['export', ...pgArgs, '-o', fromPostgres])).code).toBe(0);
          expect(lines(fromPostgres)[0]).toMatchObject({ source: 'postgres' });
          expect(body(fromPostgres)).toEqual(body(file));
        }
      });
    });
  }

  it('a cut-short file is reported, and a broken line by its number', async () => {
    const db = join(tempDir(), 'source.db');
    await withCatalog(db, (catalog) => populate(catalog, ['a', 'b']));
    const file = join(tempDir(), 'catalog.jsonl');
    expect((await runCli(['export', '--db', db, '-o', file])).code).toBe(0);
    const text = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const cut = join(tempDir(), 'cut.jsonl');
    writeFileSync(cut, `${text.slice(0, -1).join('\n')}\n`);
    const target = join(tempDir(), 'target.db');
    const result = await runCli(['ingest', cut, '--db', target, '--chunk-size', '2']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cut short/);

    const broken = join(tempDir(), 'broken.jsonl');
    writeFileSync(broken, [...text.slice(0, 3), '{"kind": "entity", "urn": "not-a-urn"', ...text.slice(3)].join('\n'));
    const second = await runCli(['ingest', broken, '--db', join(tempDir(), 'other.db'), '--chunk-size', '2']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^line 4: invalid JSON/m);
  });
});

describe('metacatalog backup', () => {
  it('copies a serving SQLite file consistently while writes go on, and refuses to overwrite', async () => {
    const served = await startServe();
    try {
      const write = (i: number) =>
        fetch(`${served.url}/openapi/v2/entity/dataset/${encodeURIComponent(ds(`w${i}`))}/datasetProperties`, {
          method: 'POST',
          headers: { authorization: `Bearer ${served.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `w${i}` }),
        });
      for (let i = 0; i < 50; i++) expect((await write(i)).status).toBe(200);
      let writing = true;
      let written = 50;
      const writer = (async () => {
        while (writing) if ((await write(written)).status === 200) written++;
      })();
      const copy = join(tempDir(), 'copy.db');
      const result = await runCli(['backup', '--db', served.db, '--to', copy]);
      const writtenAtEnd = written;
      writing = false;
      await writer;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/signing key copied/);
      expect(existsSync(`${copy}.signing-key`)).toBe(true);
      const count = await withCatalog(copy, async (catalog) => {
        const page = await catalog.search.search(ADMIN, { types: ['DATASET'], query: '*', count: 0 });
        return page.total;
      });
      // Every write acknowledged before the backup started is in the copy; the copy is one committed state.
      expect(count).toBeGreaterThanOrEqual(50);
      expect(count).toBeLessThanOrEqual(writtenAtEnd + 1);
      const refused = await runCli(['backup', '--db', served.db, '--to', copy]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/exists; pass --force/);
      expect((await runCli(['backup', '--db', served.db, '--to', copy, '--force'])).code).toBe(0);
    } finally {
      await served.stop();
    }
  });
});
