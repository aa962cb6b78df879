import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../../src/index';

const here = dirname(fileURLToPath(import.meta.url));
const ADMIN = 'urn:li:corpuser:admin';
const P = 'urn:li:structuredProperty:io.kill.retention';
const Q = 'urn:li:structuredProperty:io.kill.tier';
const ENTITIES = 10_000;
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,kill${String(i).padStart(5, '0')},PROD)`;

let work: string;
let childScript: string;

beforeAll(async () => {
  // Inside the project so that the bundle finds better-sqlite3 in node_modules.
  work = mkdtempSync(join(here, '.child-'));
  childScript = join(work, 'property-cleanup-child.mjs');
  await build({
    entryPoints: [join(here, '../../fixtures/property-cleanup-child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: childScript,
    external: ['better-sqlite3', 'ajv', 'rfc6902', 'yaml'],
    logLevel: 'warning',
  });
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function open(file: string): Catalog {
  return createCatalog({ adapter: createSqliteAdapter({ filename: file }), superUsers: [ADMIN], jobs: { background: false } });
}

/** Runs the child until it has committed `batches` clean-up batches and claimed the next job, then kills it with SIGKILL. */
function runChildAndKill(file: string, batches: number): Promise<{ batchesSeen: number; pid: number; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, file, '150'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = 0;
    let claimed = 0;
    let killed = false;
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = chunk.split('\n');
      seen += lines.filter((line) => line.startsWith('batch')).length;
      claimed += lines.filter((line) => line.startsWith('claimed')).length;
      if (seen >= batches && claimed > seen && !killed) {
        killed = child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child ended on its own (code ${code}, signal ${signal}): ${stderr}`));
      else resolve({ batchesSeen: seen, pid: child.pid!, killed });
    });
  });
}

describe('hard-delete clean-up of 10k entities', () => {
  it('survives a kill half-way: a new catalog on the same file finishes it on settle()', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-'));
    const file = join(dir, 'catalog.db');
    try {
      const first = open(file);
      await first.properties.create(ADMIN, { qualifiedName: 'io.kill.retention', valueType: 'number', entityTypes: ['dataset'] });
      await first.properties.create(ADMIN, { qualifiedName: 'io.kill.tier', valueType: 'string', entityTypes: ['dataset'] });
      const items = Array.from({ length: ENTITIES }, (_, i) => ({
        urn: dataset(i),
        properties: [
          { propertyUrn: P, values: [{ double: i }] },
          { propertyUrn: Q, values: [{ string: i % 2 ? 'odd' : 'even' }] },
        ],
      }));
      await first.properties.upsertValuesMany(ADMIN, items);
      expect((await first.properties.hardDelete(ADMIN, P)).entitiesToClean).toBe(ENTITIES);
      await first.close();

      const run = await runChildAndKill(file, 3);
      expect(run.killed).toBe(true);

      const inspector = createSqliteAdapter({ filename: file });
      await inspector.open();
      const left = await inspector.countEntitiesWithPropertyValues(P);
      // Killed half-way: some batches were committed, most values are still there.
      expect(left).toBeLessThan(ENTITIES - 3 * 500 + 1);
      expect(left).toBeGreaterThan(0);
      // The continuation is still leased to the dead child (30 s lease): the next start releases it.
      const [held] = await inspector.listJobs();
      expect(held?.lockedBy?.split(':')[1]).toBe(String(run.pid));

      const second = open(file);
      try {
        const report = await second.settle();
        expect(report.failed).toEqual([]);
        expect(report.completed).toBeGreaterThan(0);
        expect(await inspector.countEntitiesWithPropertyValues(P)).toBe(0);
        expect(await inspector.countEntitiesWithPropertyValues(Q)).toBe(ENTITIES);
        expect(await second.listJobs({ includeDead: true })).toEqual([]);
        for (const i of [0, 4_999, 9_999]) {
          const [entity] = await inspector.readEntities([dataset(i)], ['structuredProperties']);
          const urns = (entity?.aspects.structuredProperties?.value.properties as Array<{ propertyUrn: string }>).map((a) => a.propertyUrn);
          expect(urns).toEqual([Q]);
        }
      } finally {
        await inspector.close();
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
