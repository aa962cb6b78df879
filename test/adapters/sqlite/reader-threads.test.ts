import { readdirSync, readlinkSync, renameSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { sqliteAdapterInternals } from '../../../adapters/sqlite/internals';
import type { AggregateRequest, SearchRequest, WriteBatch } from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';
import { tempDatabases } from '../../support/temp-database';

const newFile = tempDatabases('reader-threads');

const STAMP = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:admin' };
const PLATFORMS = ['hive', 'kafka', 'snowflake'];
const urnOf = (name: string, platform = 'hive') => `urn:li:dataset:(urn:li:dataPlatform:${platform},readers.${name},PROD)`;

function put(names: readonly string[]): WriteBatch {
  return {
    entities: names.map((name, i) => {
      const platform = PLATFORMS[(name.length + i) % PLATFORMS.length]!;
      const urn = urnOf(name, platform);
      return {
        urn,
        entityType: 'dataset',
        expectVersion: 0,
        put: [{ name: 'datasetProperties', value: { name }, version: 1, created: STAMP, lastModified: STAMP }],
        searchDocument: {
          urn,
          entityType: 'dataset',
          removed: false,
          text: { name, description: `the ${name} table of ${platform}`, urnKey: name },
          fields: { platform: [platform] },
          properties: [],
        },
      };
    }),
    now: STAMP.time,
  };
}

const platform = (value: string) => [
  [{ field: { kind: 'field' as const, name: 'platform' }, operator: 'EQUAL' as const, values: [value], negated: false }],
];

const SEARCHES: SearchRequest[] = [
  { entityTypes: ['dataset'], filter: [], includeRemoved: false, order: 'urn', limit: 7 },
  { entityTypes: ['dataset'], filter: platform('kafka'), includeRemoved: false, order: 'urn', limit: 5, offset: 3 },
  { entityTypes: [], text: 'table', filter: platform('hive'), includeRemoved: false, order: 'relevance', limit: 4 },
  { entityTypes: [], text: 'ord*', filter: [], includeRemoved: false, order: 'urn', limit: 10 },
];
const AGGREGATE: AggregateRequest = {
  entityTypes: ['dataset'],
  filter: [],
  includeRemoved: false,
  facets: [{ kind: 'field', name: 'platform' }],
  maxValues: 10,
};

/** The descriptors of this process open on `file` (its connections, whatever thread holds them). */
function openDescriptors(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe('SQLite searches on reader threads', () => {
  it('answer as the host connection does, and see every write acknowledged before them', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename, readerThreads: 2 });
    const onHost = createSqliteAdapter({ filename, readerThreads: 0 });
    await adapter.open();
    await onHost.open();
    try {
      // None until the first search: a process that never searches (most CLI commands) starts none.
      expect(sqliteAdapterInternals(adapter).readerThreads()).toHaveLength(0);
      await adapter.commit(put(Array.from({ length: 60 }, (_, i) => `orders_${i}`)));
      expect((await adapter.search(SEARCHES[0]!)).total).toBeGreaterThan(0);
      expect(sqliteAdapterInternals(adapter).readerThreads()).toHaveLength(2);
      expect(sqliteAdapterInternals(onHost).readerThreads()).toHaveLength(0);
      for (const request of SEARCHES) {
        const [threaded, hosted] = await Promise.all([adapter.search(request), onHost.search(request)]);
        expect(threaded.total, JSON.stringify(request)).toBeGreaterThan(0);
        expect({ ...threaded, changeToken: undefined }).toEqual({ ...hosted, changeToken: undefined });
      }
      expect(await adapter.aggregate(AGGREGATE)).toEqual(await onHost.aggregate(AGGREGATE));

      // Concurrent writers, each finding its own write (by its filter and by its text) once acknowledged.
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const name = `fresh_${i}`;
          await adapter.commit(put([name]));
          const byText = await adapter.search({ entityTypes: [], text: name, filter: [], includeRemoved: false, order: 'urn', limit: 5 });
          expect(byText.hits.map((hit) => hit.urn)).toEqual([expect.stringContaining(`readers.${name},`)]);
          const all = await adapter.search({ entityTypes: ['dataset'], filter: [], includeRemoved: false, order: 'urn', limit: 0 });
          expect(all.total).toBeGreaterThanOrEqual(61);
        }),
      );
      const all = await adapter.search({ entityTypes: ['dataset'], filter: [], includeRemoved: false, order: 'urn', limit: 0 });
      expect(all.total).toBe(80);
      // The answer carries the host connection's change token when nothing was committed meanwhile.
      expect(all.changeToken).toBe(await adapter.changeToken!());
    } finally {
      await onHost.close();
      await adapter.close();
    }
  });

  it('fails the reads of a thread that stopped with UNAVAILABLE, and starts another for the next read', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename, readerThreads: 1 });
    await adapter.open();
    try {
      await adapter.commit(put(['a', 'b', 'c']));
      const internals = sqliteAdapterInternals(adapter);
      expect((await adapter.search(SEARCHES[0]!)).total).toBe(3);
      const [first] = internals.readerThreads();
      expect(first).toBeDefined();
      // Terminated before the read is sent: the read reaches a thread that never answers.
      const stopping = first!.terminate();
      const read = adapter.search(SEARCHES[0]!);
      await expect(read).rejects.toThrow(/reader thread stopped while answering this read/);
      await expect(read).rejects.toBeInstanceOf(CatalogError);
      await stopping;
      const again = await adapter.search(SEARCHES[0]!);
      expect(again.total).toBe(3);
      const [second] = internals.readerThreads();
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
    } finally {
      await adapter.close();
    }
  });

  it('a thread that cannot open the file fails its reads with UNAVAILABLE; the next read starts another', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename, readerThreads: 1 });
    await adapter.open();
    try {
      await adapter.commit(put(['a', 'b']));
      // The file is elsewhere when the first search starts the thread: the host's connection keeps working.
      renameSync(filename, `${filename}.away`);
      const read = adapter.search(SEARCHES[0]!);
      await expect(read).rejects.toBeInstanceOf(CatalogError);
      await expect(read).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/reader thread could not open/) });
      renameSync(`${filename}.away`, filename);
      expect((await adapter.search(SEARCHES[0]!)).total).toBe(2);
      expect(sqliteAdapterInternals(adapter).readerThreads()).toHaveLength(1);
    } finally {
      await adapter.close();
    }
  });

  it('close waits for the reads in flight and closes every connection of the threads', async () => {
    const filename = newFile();
    const adapter = createSqliteAdapter({ filename, readerThreads: 2 });
    await adapter.open();
    await adapter.commit(put(['x', 'y']));
    // Two searches at once start the two readers, one each (a read goes to the thread with the fewest in flight).
    for (const answer of await Promise.all([adapter.search(SEARCHES[0]!), adapter.search(SEARCHES[0]!)])) expect(answer.total).toBe(2);
    expect(openDescriptors(filename)).toBeGreaterThanOrEqual(4); // the host, the commit thread and two readers
    const reads = Array.from({ length: 6 }, () => adapter.search(SEARCHES[0]!));
    await adapter.close();
    for (const read of reads) expect((await read).total).toBe(2);
    expect(sqliteAdapterInternals(adapter).readerThreads()).toEqual([]);
    expect(openDescriptors(filename)).toBe(0);
    await expect(adapter.search(SEARCHES[0]!)).rejects.toThrow(/closed/);
  });

  it('has none in memory or with readerThreads 0, and refuses a count out of range', async () => {
    const memory = createSqliteAdapter({ filename: ':memory:' });
    await memory.open();
    expect(sqliteAdapterInternals(memory).readerThreads()).toEqual([]);
    await memory.commit(put(['m']));
    expect((await memory.search(SEARCHES[0]!)).total).toBe(1);
    await memory.close();
    for (const readerThreads of [-1, 1.5, 17, Number.NaN]) {
      expect(() => createSqliteAdapter({ filename: newFile(), readerThreads })).toThrow(/readerThreads must be an integer from 0 to 16/);
    }
  });
});
