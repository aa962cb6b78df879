import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { sqliteAdapterInternals } from '../../../adapters/sqlite/internals';
import type { WriteBatch } from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';
import { tempDatabases } from '../../support/temp-database';

const newFile = tempDatabases('commit-thread');

const STAMP = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:admin' };
const urnOf = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,thread.${name},PROD)`;

function put(names: readonly string[], expectVersion = 0): WriteBatch {
  return {
    entities: names.map((name) => ({
      urn: urnOf(name),
      entityType: 'dataset',
      expectVersion,
      put: [
        { name: 'datasetProperties', value: { name, tags: ['a', 'b'] }, version: expectVersion + 1, created: STAMP, lastModified: STAMP },
      ],
      searchDocument: {
        urn: urnOf(name),
        entityType: 'dataset',
        removed: false,
        text: { name, urnKey: name },
        fields: { platform: ['hive'] },
        properties: [],
      },
    })),
    events: names.map((name) => ({
      entityUrn: urnOf(name),
      entityType: 'dataset',
      aspectName: 'datasetProperties',
      changeType: 'UPSERT' as const,
      aspect: { name },
      previousAspectValue: null,
      created: STAMP,
    })),
    now: STAMP.time,
  };
}

describe('SQLite commits on the commit thread', () => {
  it('commits on its own connection: the host connection writes nothing, and reads every acknowledged write at once', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const internals = sqliteAdapterInternals(adapter);
    try {
      expect(internals.commitPlace()).toBe('thread');
      expect(internals.commitThread()).toBeDefined();
      const before = internals.hostConnectionChanges();
      // Concurrent writers (one group or several), each reading its own write right after its acknowledgement.
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          await adapter.commit(put([`c${i}`]));
          const [read] = await adapter.readEntities([urnOf(`c${i}`)]);
          expect(read?.aspects.datasetProperties?.value).toEqual({ name: `c${i}`, tags: ['a', 'b'] });
        }),
      );
      // A conflict crosses the thread as a CatalogError, and only its batch fails.
      const results = await Promise.allSettled([adapter.commit(put(['c1'])), adapter.commit(put(['d1']))]);
      expect(results[0].status).toBe('rejected');
      const conflict = (results[0] as PromiseRejectedResult).reason as unknown;
      expect(conflict).toBeInstanceOf(CatalogError);
      expect((conflict as CatalogError).code).toBe('CONFLICT');
      expect(results[1].status).toBe('fulfilled');
      await adapter.commit(put(['c2'], 1));
      expect((await adapter.readEntities([urnOf('c2')]))[0]!.version).toBe(2);
      // Searches, the change feed and the change token follow the thread's commits.
      const found = await adapter.search({ entityTypes: ['dataset'], includeRemoved: false, filter: [], order: 'urn', limit: 100 });
      expect(found.total).toBe(41);
      const page = await adapter.readChanges!({ limit: 1_000 });
      expect(page.events.length).toBe(42);
      const token = await adapter.changeToken!();
      await adapter.commit(put(['e1']));
      expect(await adapter.changeToken!()).not.toBe(token);
      // Not one row was written through the host's connection.
      expect(internals.hostConnectionChanges()).toBe(before);
    } finally {
      await adapter.close();
    }
    const check = new Database(filename, { readonly: true });
    try {
      expect(check.prepare('SELECT COUNT(*) FROM entities').pluck().get()).toBe(42);
    } finally {
      check.close();
    }
  });

  it('hands the thread of a closed adapter to the next adapter of the process, which commits to its own file', async () => {
    const first = newFile();
    const a = createSqliteAdapter({ filename: first });
    await a.open();
    const thread = sqliteAdapterInternals(a).commitThread();
    await a.commit(put(['first']));
    await a.close();
    const second = newFile();
    const b = createSqliteAdapter({ filename: second });
    await b.open();
    try {
      const internals = sqliteAdapterInternals(b);
      expect(internals.commitThread()).toBe(thread);
      const before = internals.hostConnectionChanges();
      await b.commit(put(['second']));
      expect((await b.readEntities([urnOf('second')]))[0]?.version).toBe(1);
      expect(internals.hostConnectionChanges()).toBe(before);
    } finally {
      await b.close();
    }
    const count = (file: string, name: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare('SELECT COUNT(*) FROM entities WHERE urn = ?').pluck().get(urnOf(name));
      } finally {
        db.close();
      }
    };
    expect([count(first, 'first'), count(first, 'second'), count(second, 'first'), count(second, 'second')]).toEqual([1, 0, 0, 1]);
  });

  it('stays on the host thread where it cannot apply: in memory, with a fault injector, or turned off', async () => {
    const cases = [
      [createSqliteAdapter({ filename: ':memory:' }), 'host'],
      [createSqliteAdapter({ filename: newFile(), faultInjector: () => undefined }), 'host, WAL synced off the event loop'],
      [createSqliteAdapter({ filename: newFile(), syncOffEventLoop: false }), 'host'],
      [createSqliteAdapter({ filename: newFile(), durability: 'normal' }), 'thread'],
    ] as const;
    for (const [adapter, place] of cases) {
      await adapter.open();
      try {
        expect(sqliteAdapterInternals(adapter).commitPlace()).toBe(place);
        await adapter.commit(put(['x']));
        expect((await adapter.readEntities([urnOf('x')])).length).toBe(1);
      } finally {
        await adapter.close();
      }
    }
  });

  it('rejects the writes in flight when the thread dies, clearly, and commits later writes on a new thread', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const internals = sqliteAdapterInternals(adapter);
    try {
      const names = Array.from({ length: 1_000 }, (_, i) => `big${i}`);
      const inFlight = adapter.commit(put(names));
      // The group is sent on the next turn of the event loop; the thread is stopped right after.
      await new Promise((resolve) => setImmediate(resolve));
      const first = internals.commitThread()!;
      await first.terminate();
      const error = await inFlight.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CatalogError);
      expect((error as CatalogError).code).toBe('UNAVAILABLE');
      expect((error as CatalogError).message).toMatch(/commit thread stopped/);
      // All of the batch or none of it.
      expect([0, names.length]).toContain((await adapter.readEntities(names.map(urnOf))).length);
      await adapter.commit(put(['after']));
      expect(internals.commitThread()).toBeDefined();
      expect(internals.commitThread()).not.toBe(first);
      expect((await adapter.readEntities([urnOf('after')])).length).toBe(1);
    } finally {
      await adapter.close();
    }
  });

  it('starts its built thread in a host run as `node --input-type=module -e` (whose options a worker inherits)', () => {
    const built = join(fileURLToPath(new URL('../../../', import.meta.url)), 'dist/adapters/sqlite.js');
    if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
    const script = `
      import workerThreads from 'node:worker_threads';
      import { syncBuiltinESMExports } from 'node:module';
      const seen = [];
      workerThreads.Worker = class extends workerThreads.Worker {
        constructor(program, options) {
          super(program, options);
          this.on('error', (error) => seen.push('error: ' + error.message));
          this.on('message', (message) => { if (message.type === 'ready') seen.push('ready'); });
        }
      };
      syncBuiltinESMExports();
      const { createSqliteAdapter } = await import(${JSON.stringify(pathToFileURL(built).href)});
      const adapter = createSqliteAdapter({ filename: ${JSON.stringify(newFile())}, readerThreads: 1 });
      await adapter.open();
      // The reader thread starts with the first search.
      await adapter.search({ entityTypes: [], filter: [], includeRemoved: false, order: 'urn', limit: 1 });
      await adapter.close();
      console.log(JSON.stringify(seen));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    // The commit thread and the reader thread (read-pool.ts), started the same way.
    expect(JSON.parse(child.stdout)).toEqual(['ready', 'ready']);
  });
});
