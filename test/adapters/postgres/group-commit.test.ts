import { afterAll, expect, it } from 'vitest';
import type { StorageAdapter, WriteBatch } from '../../../src/adapter/types';
import { CatalogError } from '../../../src/errors';
import { SchemaPool, withPostgresServer } from '../../support/postgres';

/**
 * Group commit on PostgreSQL: concurrent commits of one adapter share a transaction (seen in the
 * store: rows written by one transaction carry its id in `xmin`), and each still gets its own answer.
 */

const T0 = 1_700_000_000_000;
const ACTOR = 'urn:li:corpuser:a';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`;

/** One aspect of one entity, with its change event, as the unit of work hands it over. */
function write(urn: string, expectVersion: number): WriteBatch {
  const value = { n: expectVersion + 1 };
  const stamp = { time: T0 + expectVersion, actor: ACTOR };
  return {
    entities: [
      {
        urn,
        entityType: 'dataset',
        expectVersion,
        put: [{ name: 'info', value, version: expectVersion + 1, created: { time: T0, actor: ACTOR }, lastModified: stamp }],
      },
    ],
    events: [
      {
        entityUrn: urn,
        entityType: 'dataset',
        aspectName: 'info',
        changeType: 'UPSERT',
        aspect: value,
        previousAspectValue: null,
        created: stamp,
      },
    ],
  };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'committed';
  } catch (error) {
    return error instanceof CatalogError ? error.code : `not a CatalogError: ${String(error)}`;
  }
}

await withPostgresServer('test/adapters/postgres/group-commit.test.ts', 'postgres group commit', () => {
  const schemas = new SchemaPool();
  const adapters: StorageAdapter[] = [];
  afterAll(async () => {
    for (const adapter of adapters) await adapter.close();
    await schemas.end();
  });

  async function open(): Promise<{ adapter: StorageAdapter; schema: string }> {
    const schema = schemas.freshSchema();
    const adapter = schemas.adapter({ schema });
    adapters.push(adapter);
    await adapter.open();
    return { adapter, schema };
  }

  /** The transactions that wrote the entities' rows, one list of URNs per transaction. */
  async function transactions(schema: string): Promise<string[][]> {
    const rows = await schemas.query<{ urns: string[] }>(
      `SELECT array_agg(urn ORDER BY urn) AS urns FROM "${schema}".entities GROUP BY xmin::text ORDER BY min(urn)`,
    );
    return rows.map((r) => r.urns);
  }

  it('commits concurrent writes together: the first alone, the ones that waited for it in one transaction; events dense', async () => {
    const { adapter, schema } = await open();
    const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => outcome(adapter.commit(write(urnOf(i), 0)))));
    expect(outcomes).toEqual(Array.from({ length: 16 }, () => 'committed'));
    const groups = await transactions(schema);
    expect(groups.map((g) => g.length).sort((a, b) => a - b)).toEqual([1, 15]);
    expect(groups.find((g) => g.length === 1)).toEqual([urnOf(0)]);
    const { events } = await adapter.readChanges!({ limit: 100 });
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 16 }, (_, i) => String(i + 1)));
    expect(new Set(events.map((e) => e.entityUrn)).size).toBe(16);
  });

  it('answers each write of a failed group on its own: a CONFLICT fails only its write, the others commit', async () => {
    const { adapter } = await open();
    await adapter.commit(write(urnOf(0), 0));
    const outcomes = await Promise.all([
      outcome(adapter.commit(write(urnOf(1), 0))),
      outcome(adapter.commit(write(urnOf(2), 0))),
      // Stale: urnOf(0) is at version 1.
      outcome(adapter.commit(write(urnOf(0), 0))),
      outcome(adapter.commit(write(urnOf(3), 0))),
    ]);
    expect(outcomes).toEqual(['committed', 'committed', 'CONFLICT', 'committed']);
    const stored = await adapter.readEntities([0, 1, 2, 3].map(urnOf));
    expect(stored.map((e) => [e.urn, e.version])).toEqual([0, 1, 2, 3].map((i) => [urnOf(i), 1]));
    // No event of the refused write.
    const { events } = await adapter.readChanges!({ limit: 100 });
    expect(events.map((e) => e.entityUrn).sort()).toEqual([0, 1, 2, 3].map(urnOf).sort());
  });

  it('never merges two writes of one entity: the second sees the first', async () => {
    const { adapter, schema } = await open();
    const outcomes = await Promise.all([
      outcome(adapter.commit(write(urnOf(9), 0))),
      outcome(adapter.commit(write(urnOf(1), 0))),
      outcome(adapter.commit(write(urnOf(1), 1))),
      outcome(adapter.commit(write(urnOf(2), 0))),
    ]);
    expect(outcomes).toEqual(['committed', 'committed', 'committed', 'committed']);
    expect((await adapter.readEntities([urnOf(1)]))[0]?.version).toBe(2);
    // urnOf(9) alone; then urnOf(1)'s first write (a group stops at a second write of an entity it holds); then the rest.
    // The last group wrote urnOf(1) again, with urnOf(2).
    expect(await transactions(schema)).toEqual([[urnOf(1), urnOf(2)], [urnOf(9)]]);
    expect(await schemas.query(`SELECT urn, version FROM "${schema}".entities ORDER BY urn`)).toEqual([
      { urn: urnOf(1), version: 2 },
      { urn: urnOf(2), version: 1 },
      { urn: urnOf(9), version: 1 },
    ]);
    expect((await adapter.readChanges!({ limit: 100 })).events.map((e) => [e.entityUrn, e.aspect])).toEqual([
      [urnOf(9), { n: 1 }],
      [urnOf(1), { n: 1 }],
      [urnOf(1), { n: 2 }],
      [urnOf(2), { n: 1 }],
    ]);
  });
});
