import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createPostgresAdapter } from '../../adapters/postgres/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../src/index';
import { POSTGRES_URL, serverDecision } from '../support/postgres';
import { ADMIN, CLI, cliEnv, removeTempDirs, requireBuiltCli, runCli, ROOT, tempDir } from './helpers';

vi.setConfig({ testTimeout: 240_000 });
beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

const ENTITIES = 2000;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,initial.t${String(i).padStart(5, '0')},PROD)`;

/** An export of ENTITIES datasets (a name, a description, a structured property each), written by the library once per file. */
let exported: Promise<string> | undefined;
function writeExport(): Promise<string> {
  exported ??= makeExport();
  return exported;
}

async function makeExport(): Promise<string> {
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
async function state(db: string | StorageAdapter): Promise<{ stored: number; found: number; gold: number }> {
  const catalog: Catalog = createCatalog({
    adapter: typeof db === 'string' ? createSqliteAdapter({ filename: db }) : db,
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

/**
 * The run after a kill: it completes an empty catalog, and is refused on a complete one (changing nothing); either
 * way the catalog is complete after it.
 */
async function runAgain(after: { stored: number }, args: string[], stateNow: () => ReturnType<typeof state>): Promise<void> {
  const again = await runCli(args);
  if (after.stored === 0) {
    expect(again.code, again.stderr).toBe(0);
    // The datasets and the property's definition.
    expect(again.stdout).toContain(`Imported ${ENTITIES + 1} entities`);
  } else {
    // A complete catalog holds entities: another initial load is refused and changes nothing.
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('an initial load needs an empty catalog');
  }
  expect(await stateNow()).toEqual(COMPLETE);
}

const postgres = (await serverDecision('test/cli/ingest-initial-kill.test.ts')) === 'run';
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
      await runAgain(after, ['ingest', file, '--db', db, '--initial', '--chunk-size', '250'], () => state(db));
    }
    // The kills did cut loads short (at least one run left its catalog empty after rows had been written).
    expect(seen).toContain('empty');
  });

  (postgres ? it : it.skip)('postgres: the load is one transaction, rolled back by the server when the process dies', async () => {
    const file = await writeExport();
    const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    const schemas: string[] = [];
    try {
      /** The loading connection's current (or last) statement: the CLI's connections carry the schema's name. */
      const statements = async (name: string): Promise<string[]> =>
        (await admin.query<{ query: string }>('SELECT query FROM pg_stat_activity WHERE application_name = $1', [name])).rows.map(
          (r) => r.query,
        );
      // Killed while rows are copied, while the indexes are built or analysed, and at once.
      const points: Array<(queries: string[]) => boolean> = [
        (q) => q.some((s) => s.startsWith('COPY')),
        (q) => q.some((s) => s.startsWith('CREATE INDEX') || s.startsWith('ANALYZE')),
        () => true,
      ];
      const seen: string[] = [];
      for (let run = 0; run < points.length; run++) {
        // A load of this size builds its indexes in a fraction of a second: a run that ends before its point is seen
        // (a slow poll on a busy machine) is made again, up to three times. Every run's outcome is checked.
        for (let attempt = 0; ; attempt++) {
          const schema = `mc_initial_kill_${Date.now()}_${run}_${attempt}`;
          schemas.push(schema);
          const url = new URL(POSTGRES_URL);
          url.searchParams.set('application_name', schema);
          const args = ['ingest', file, '--postgres', url.href, '--postgres-schema', schema, '--initial', '--chunk-size', '250'];
          const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: cliEnv() });
          let exited = false;
          const exit = new Promise((resolve) =>
            child.once('exit', (code) => {
              exited = true;
              resolve(code);
            }),
          );
          let hit = false;
          for (let waited = 0; waited < 120_000 && !exited; waited += 5) {
            if (points[run]!(await statements(schema))) {
              hit = true;
              break;
            }
            await new Promise((r) => setTimeout(r, 5));
          }
          child.kill('SIGKILL');
          await exit;
          // The server ends the dead client's session (rolling its transaction back) once it notices.
          for (let waited = 0; waited < 60_000 && (await statements(schema)).length > 0; waited += 50)
            await new Promise((r) => setTimeout(r, 50));
          const adapter = () => createPostgresAdapter({ connectionString: POSTGRES_URL }, { schema, maxConnections: 2 });
          const after = await state(adapter());
          expect([EMPTY, COMPLETE]).toContainEqual(after);
          await runAgain(after, args, () => state(adapter()));
          if (hit || attempt === 2) {
            seen.push(`${after.stored === 0 ? 'empty' : 'complete'}${hit ? '' : ' (point not reached)'}`);
            break;
          }
        }
      }
      // The kills did cut loads short while rows were being copied and while the indexes were built.
      expect(seen.slice(0, 2)).toEqual(['empty', 'empty']);
    } finally {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
