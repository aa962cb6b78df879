import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../src/index';
import { ADMIN, CLI, cliEnv, removeTempDirs, requireBuiltCli, runCli, ROOT, tempDir } from './helpers';

vi.setConfig({ testTimeout: 240_000 });
beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

const ENTITIES = 3000;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,initial.t${String(i).padStart(5, '0')},PROD)`;

/** An export of ENTITIES datasets (a name, a description, a structured property each), written by the library. */
async function writeExport(): Promise<string> {
  const source = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
  await source.properties.create(ADMIN, { qualifiedName: 'tier', valueType: 'string', entityTypes: ['dataset'] });
  for (let i = 0; i < ENTITIES; i += 500) {
    await source.entities.upsertMany(
      ADMIN,
      Array.from({ length: Math.min(500, ENTITIES - i) }, (_, k) => ({
        urn: urnOf(i + k),
        aspects: {
          datasetProperties: { name: `t${i + k}`, description: `table number ${i + k} of the nightly load` },
          structuredProperties: {
            properties: [{ propertyUrn: 'urn:li:structuredProperty:tier', values: [{ string: (i + k) % 2 ? 'gold' : 'silver' }] }],
          },
        },
      })),
    );
  }
  const lines: string[] = [];
  for await (const record of source.exportAll()) lines.push(JSON.stringify(record));
  await source.close();
  const file = join(tempDir(), 'export.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** What the file holds, read without the catalog (which may not open a file being loaded): entity rows, and the load's phase. */
function peek(db: string): { rows: number; phase: string | undefined } {
  try {
    const file = new Database(db, { readonly: true, fileMustExist: true });
    try {
      const rows = file.prepare('SELECT COUNT(*) FROM entities').pluck().get() as number;
      const marker = file.prepare("SELECT 1 FROM sqlite_master WHERE name = 'mc_initial_load'").get();
      const phase = marker ? (file.prepare('SELECT phase FROM mc_initial_load').pluck().get() as string | undefined) : undefined;
      return { rows, phase };
    } finally {
      file.close();
    }
  } catch {
    return { rows: 0, phase: undefined };
  }
}

/** Entities stored, and those search finds (all, and by a property value), through a catalog on the file. */
async function state(db: string): Promise<{ stored: number; found: number; gold: number }> {
  const catalog: Catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: db }),
    superUsers: [ADMIN],
    jobs: { background: false },
  });
  try {
    await catalog.ready();
    let stored = 0;
    for await (const record of catalog.exportAll()) if (record.kind === 'entity' && record.entityType === 'dataset') stored++;
    const found = (await catalog.search.search(ADMIN, { types: ['DATASET'], query: '*', count: 1 })).total;
    const gold = (
      await catalog.search.search(ADMIN, {
        query: '*',
        count: 1,
        orFilters: [{ and: [{ field: 'structuredProperties.tier', values: ['gold'] }] }],
      })
    ).total;
    return { stored, found, gold };
  } finally {
    await catalog.close();
  }
}

const EMPTY = { stored: 0, found: 0, gold: 0 };
const COMPLETE = { stored: ENTITIES, found: ENTITIES, gold: ENTITIES / 2 };

describe('metacatalog ingest --initial killed mid-way (kill -9)', () => {
  it('sqlite: leaves an empty or a complete catalog, never a partial one, and a second run completes it', async () => {
    const file = await writeExport();
    // Where each run is killed: after the first chunk's rows, part way through the entities, while the
    // search structures are built (or just after), and at once.
    const points: Array<(p: ReturnType<typeof peek>) => boolean> = [
      (p) => p.rows > 0,
      (p) => p.rows >= ENTITIES / 2,
      (p) => p.phase === 'search' || (p.rows >= ENTITIES && p.phase === undefined),
      () => true,
    ];
    const seen: string[] = [];
    for (let run = 0; run < points.length; run++) {
      const db = join(tempDir(), `initial-${run}.db`);
      const child = spawn(process.execPath, [CLI, 'ingest', file, '--db', db, '--initial', '--chunk-size', '250'], {
        cwd: ROOT,
        env: cliEnv(),
      });
      let exited = false;
      const exit = new Promise((resolve) =>
        child.once('exit', (code) => {
          exited = true;
          resolve(code);
        }),
      );
      for (let waited = 0; waited < 120_000 && !exited; waited += 5) {
        if (points[run]!(peek(db))) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      child.kill('SIGKILL');
      await exit;
      const after = await state(db);
      expect([EMPTY, COMPLETE]).toContainEqual(after);
      seen.push(after.stored === 0 ? 'empty' : 'complete');
      const again = await runCli(['ingest', file, '--db', db, '--initial', '--chunk-size', '250']);
      if (after.stored === 0) {
        expect(again.code, again.stderr).toBe(0);
        // The datasets and the property's definition.
        expect(again.stdout).toContain(`Imported ${ENTITIES + 1} entities`);
      } else {
        // A complete catalog holds entities: another initial load is refused and changes nothing.
        expect(again.code).not.toBe(0);
        expect(again.stderr).toContain('an initial load needs an empty catalog');
      }
      expect(await state(db)).toEqual(COMPLETE);
    }
    // The kills did cut loads short (at least one run left its catalog empty after rows had been written).
    expect(seen).toContain('empty');
  });
});
