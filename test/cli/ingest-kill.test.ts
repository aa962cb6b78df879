import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresAdapter } from '../../adapters/postgres/index';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../src/index';
import { POSTGRES_URL, serverDecision } from '../support/postgres';
import { ADMIN, CLI, cliEnv, removeTempDirs, requireBuiltCli, runCli, ROOT, tempDir } from './helpers';

vi.setConfig({ testTimeout: 180_000 });
beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

// Eight chunks of 250: enough for kills at four points to land inside the file (at least one must).
const LINES = 2000;
const ASPECTS = ['datasetProperties', 'status', 'structuredProperties'] as const;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,killed.t${i},PROD)`;

/** A file of whole entities, three aspects each (one of them checked against a property definition). */
function writeFile(): string {
  const file = join(tempDir(), 'entities.jsonl');
  const lines = Array.from({ length: LINES }, (_, i) =>
    JSON.stringify({
      urn: urnOf(i),
      aspects: {
        datasetProperties: { name: `t${i}`, description: `table number ${i}` },
        status: { removed: false },
        structuredProperties: {
          properties: [{ propertyUrn: 'urn:li:structuredProperty:tier', values: [{ string: i % 2 ? 'gold' : 'silver' }] }],
        },
      },
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Where the ingest writes: its command-line arguments, and a catalog on the same store for the checks. */
interface Store {
  args: string[];
  open(): Catalog;
}

const stores: Record<string, (run: number) => Store> = {
  sqlite: (run) => {
    const db = join(tempDir(), `killed-${run}.db`);
    return { args: ['--db', db], open: () => catalogOn(createSqliteAdapter({ filename: db })) };
  },
};
if ((await serverDecision('test/cli/ingest-kill.test.ts')) === 'run') {
  stores.postgres = (run) => {
    const schema = `mc_killed_${Date.now()}_${run}`;
    return {
      args: ['--postgres', POSTGRES_URL, '--postgres-schema', schema],
      open: () => catalogOn(createPostgresAdapter({ connectionString: POSTGRES_URL }, { schema, maxConnections: 2 })),
    };
  };
}

function catalogOn(adapter: Parameters<typeof createCatalog>[0]['adapter']): Catalog {
  return createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
}

async function withStore<T>(store: Store, work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const catalog = store.open();
  try {
    return await work(catalog);
  } finally {
    await catalog.close();
  }
}

/** For each entity of the file: how many of its line's aspects are stored (0 or 3 when chunks are atomic). */
async function aspectCounts(store: Store): Promise<number[]> {
  return withStore(store, async (catalog) => {
    const counts: number[] = [];
    for (let i = 0; i < LINES; i += 500) {
      const urns = Array.from({ length: Math.min(500, LINES - i) }, (_, k) => urnOf(i + k));
      // One batch read per 500 entities (unknown URNs are left out of it).
      const views = new Map((await catalog.entities.getMany(ADMIN, urns, { aspects: [...ASPECTS] })).map((v) => [v.urn, v]));
      for (const urn of urns) {
        const view = views.get(urn);
        counts.push(view ? ASPECTS.filter((a) => view.aspects[a] !== undefined).length : 0);
      }
    }
    return counts;
  });
}

describe('metacatalog ingest killed mid-way (kill -9)', () => {
  for (const [kind, storeOf] of Object.entries(stores)) {
    it(`${kind}: leaves every entity with all or none of its line's aspects, and a second run completes the file`, async () => {
      const file = writeFile();
      const partial: number[] = [];
      for (let run = 0; run < 4; run++) {
        const store = storeOf(run);
        await withStore(store, (catalog) =>
          catalog.properties.create(ADMIN, { qualifiedName: 'tier', valueType: 'string', entityTypes: ['dataset'] }),
        );
        const child = spawn(process.execPath, [CLI, 'ingest', file, ...store.args, '--chunk-size', '250'], { cwd: ROOT, env: cliEnv() });
        const exit = new Promise((resolve) => child.once('exit', resolve));
        // Wait for the first chunk to be written (its first entity appears), then kill at a point that differs
        // from run to run: one catalog polls one URN, so that the wait costs little beside the ingest.
        const probe = store.open();
        try {
          for (let waited = 0; waited < 60_000; waited += 10) {
            if ((await probe.entities.get(ADMIN, urnOf(0))) !== undefined) break;
            await new Promise((r) => setTimeout(r, 10));
          }
        } finally {
          await probe.close();
        }
        await new Promise((r) => setTimeout(r, run * 40));
        child.kill('SIGKILL');
        await exit;
        const counts = await aspectCounts(store);
        expect(counts.every((c) => c === 0 || c === ASPECTS.length)).toBe(true);
        const complete = counts.filter((c) => c === ASPECTS.length).length;
        partial.push(complete);
        const again = await runCli(['ingest', file, ...store.args, '--chunk-size', '250']);
        expect(again.code).toBe(0);
        expect((await aspectCounts(store)).every((c) => c === ASPECTS.length)).toBe(true);
      }
      // At least one run was cut in the middle of the file (not before its first chunk, not after its last).
      expect(partial.some((n) => n > 0 && n < LINES)).toBe(true);
    });
  }
});
