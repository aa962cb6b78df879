import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import type { EntityWrite, SearchDocument, WriteBatch } from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';
import { tempDatabases } from '../../support/temp-database';

const tempFile = tempDatabases('group-commit');

const stamp = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:alice' };
const urnOf = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

function documentOf(name: string, tier: string): SearchDocument {
  return {
    urn: urnOf(name),
    entityType: 'dataset',
    removed: false,
    text: { name, urnKey: name },
    fields: { platform: ['hive'] },
    properties: [{ propertyUrn: `urn:li:structuredProperty:${tier}Only`, definitionKey: 'k1', values: [tier] }],
  };
}

/** A batch writing one aspect of one entity (aspect names new to the file exercise the dictionary). */
function write(name: string, options: { expectVersion?: number; aspect?: string; tier?: string } = {}): WriteBatch {
  const entity: EntityWrite = {
    urn: urnOf(name),
    entityType: 'dataset',
    expectVersion: options.expectVersion ?? 0,
    put: [{ name: options.aspect ?? 'datasetProperties', value: { name }, version: 1, created: stamp, lastModified: stamp }],
    searchDocument: documentOf(name, options.tier ?? 'gold'),
  };
  return { entities: [entity], now: stamp.time };
}

/** What another connection to the file sees as committed. */
function committedUrns(filename: string): string[] {
  const db = new Database(filename, { readonly: true });
  try {
    return db.prepare('SELECT urn FROM entities ORDER BY urn').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/**
 * Every key's statistics (documents holding it, documents with several values) equal what its value rows say,
 * read on another connection; returns the documents per key name.
 */
function expectKeyStatisticsAgree(filename: string): Record<string, number> {
  const db = new Database(filename, { readonly: true });
  try {
    const keys = db
      .prepare(
        `SELECT k.name AS name, k.entities AS entities, k.multi AS multi,
           (SELECT COUNT(*) FROM (SELECT entity_id FROM search_values v WHERE v.key_id = k.id GROUP BY entity_id)) AS rowsEntities,
           (SELECT COUNT(*) FROM (SELECT entity_id FROM search_values v WHERE v.key_id = k.id GROUP BY entity_id HAVING COUNT(*) > 1)) AS rowsMulti
         FROM search_keys k`,
      )
      .all() as Array<{ name: string; entities: number; multi: number; rowsEntities: number; rowsMulti: number }>;
    for (const key of keys)
      expect({ entities: key.entities, multi: key.multi }, key.name).toEqual({ entities: key.rowsEntities, multi: key.rowsMulti });
    return Object.fromEntries(keys.map((k) => [k.name, k.entities]));
  } finally {
    db.close();
  }
}

describe('SQLite group commit', () => {
  it('commits concurrent batches in one transaction, acknowledging none before it committed, and a failing batch fails alone', async () => {
    const filename = tempFile();
    const seenWhileApplying: Array<{ urn: string; committed: string[]; settled: string[] }> = [];
    const settled: string[] = [];
    const adapter = createSqliteAdapter({
      filename,
      durability: 'full',
      faultInjector: ({ urn }) => {
        if (urn === urnOf('faulty')) throw new Error('planted fault');
        seenWhileApplying.push({ urn, committed: committedUrns(filename), settled: [...settled] });
      },
    });
    await adapter.open();
    await adapter.commit(write('existing'));
    seenWhileApplying.length = 0;

    // Issued together, as concurrent requests would: one group.
    const names = ['first', 'conflicting', 'faulty', 'last'] as const;
    const batches: Record<(typeof names)[number], WriteBatch> = {
      first: write('first'),
      // The entity exists at version 1: CONFLICT. Its aspect name and property key are new to the file.
      conflicting: write('existing', { expectVersion: 0, aspect: 'onlyInTheConflict', tier: 'silver' }),
      faulty: write('faulty', { aspect: 'onlyInTheFault', tier: 'bronze' }),
      last: write('last'),
    };
    const results = await Promise.allSettled(
      names.map((name) =>
        adapter.commit(batches[name]).finally(() => {
          settled.push(name);
        }),
      ),
    );

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    const conflict = (results[1] as PromiseRejectedResult).reason as unknown;
    expect(conflict).toBeInstanceOf(CatalogError);
    expect((conflict as CatalogError).code).toBe('CONFLICT');
    expect(((results[2] as PromiseRejectedResult).reason as Error).message).toBe('planted fault');

    // While the last batch of the group was being written, the first one was written too but neither
    // committed (another connection did not see it) nor acknowledged: they share one commit, one sync.
    expect(seenWhileApplying.map((s) => s.urn)).toEqual([urnOf('first'), urnOf('last')]);
    const atLast = seenWhileApplying[1]!;
    expect(atLast.committed).toEqual([urnOf('existing')]);
    expect(atLast.settled).toEqual([]);

    // Once acknowledged, every successful batch is committed; nothing of the failed ones is.
    expect(committedUrns(filename)).toEqual([urnOf('existing'), urnOf('first'), urnOf('last')].sort());
    const [existing] = await adapter.readEntities([urnOf('existing')]);
    expect(existing!.version).toBe(1);
    expect(Object.keys(existing!.aspects)).toEqual(['datasetProperties']);
    const silver = await adapter.search({
      entityTypes: [],
      includeRemoved: false,
      filter: [
        [
          {
            field: { kind: 'property', propertyUrn: 'urn:li:structuredProperty:silverOnly', definitionKey: 'k1', valueKind: 'string' },
            operator: 'EQUAL',
            values: ['silver'],
            negated: false,
          },
        ],
      ],
      order: 'urn',
      limit: 10,
    });
    expect(silver.total).toBe(0);
    // The key statistics are written once for the group: they count the batches that committed, not the failed ones.
    const perKey = expectKeyStatisticsAgree(filename);
    expect(perKey['urn:li:structuredProperty:goldOnly']).toBe(3);
    expect(perKey['urn:li:structuredProperty:bronzeOnly'] ?? 0).toBe(0);

    // The names and keys the failed batches introduced were rolled back with them: using them again works.
    await adapter.commit(write('afterwards', { aspect: 'onlyInTheConflict', tier: 'silver' }));
    const [afterwards] = await adapter.readEntities([urnOf('afterwards')]);
    expect(afterwards!.aspects.onlyInTheConflict!.value).toEqual({ name: 'afterwards' });
    // A failed batch last in its group: what it collected for the statistics is written neither with the group nor later.
    const lastFails = await Promise.allSettled([adapter.commit(write('second')), adapter.commit(write('faulty'))]);
    expect(lastFails.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    await adapter.commit(write('third'));
    expect(expectKeyStatisticsAgree(filename)['urn:li:structuredProperty:goldOnly']).toBe(5);
    await adapter.close();

    const reopened = createSqliteAdapter({ filename });
    await reopened.open();
    const all = await reopened.readEntities([urnOf('first'), urnOf('last'), urnOf('afterwards'), urnOf('faulty')]);
    expect(all.map((e) => e.urn).sort()).toEqual([urnOf('afterwards'), urnOf('first'), urnOf('last')].sort());
    await reopened.close();
  });

  it('commits what is queued when the adapter closes', async () => {
    const filename = tempFile();
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const pending = adapter.commit(write('queued'));
    await adapter.close();
    await expect(pending).resolves.toBeUndefined();
    expect(committedUrns(filename)).toEqual([urnOf('queued')]);
  });
});
