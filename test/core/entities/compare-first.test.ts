import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type StorageAdapter } from '../../../src/index';

/**
 * The re-ingest of unchanged proposals compares before it plans: on an adapter with `matchAspects`
 * (SQLite) a call whose every proposal holds its value already reads no entity and commits nothing; a
 * call with one changed aspect among unchanged ones reads and writes that entity alone. An adapter without it
 * (memory) gives the same answers through its unit of work.
 */

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:io.compare.tier';
const COUNT = 50;
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,compare.t${i},PROD)`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function proposals(description: (i: number) => string = (i) => `table ${i}`): unknown[] {
  return Array.from({ length: COUNT }, (_, i) => [
    {
      entityUrn: urnOf(i),
      changeType: 'UPSERT',
      aspectName: 'datasetProperties',
      aspect: { json: { name: `t${i}`, description: description(i) } },
    },
    {
      entityUrn: urnOf(i),
      changeType: 'UPSERT',
      aspectName: 'structuredProperties',
      aspect: { json: { properties: [{ propertyUrn: TIER, values: [{ string: i % 2 ? 'gold' : 'silver' }] }] } },
    },
    { entityUrn: urnOf(i), changeType: 'UPSERT', aspectName: 'status', aspect: { json: { removed: false } } },
  ]).flat();
}

/** The adapter with its calls counted, and the datasets it was asked to read. */
function counted(adapter: StorageAdapter) {
  const calls = { readEntities: 0, commit: 0, matchAspects: 0 };
  const datasetsRead: string[] = [];
  const wrapped = new Proxy(adapter, {
    get(target, name, receiver) {
      const member = Reflect.get(target, name, receiver) as unknown;
      if (typeof name !== 'string' || !(name in calls) || typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        calls[name as keyof typeof calls]++;
        if (name === 'readEntities') datasetsRead.push(...(args[0] as string[]).filter((urn) => urn.startsWith('urn:li:dataset:')));
        return (member as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { wrapped, calls, datasetsRead };
}

const stores: Record<string, () => StorageAdapter> = {
  memory: () => createMemoryAdapter(),
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), 'mc-compare-first-'));
    dirs.push(dir);
    return createSqliteAdapter({ filename: join(dir, 'catalog.db') });
  },
};

describe('applyProposals compares unchanged proposals before it plans', () => {
  for (const [kind, make] of Object.entries(stores)) {
    it(`${kind}: an unchanged call writes nothing; one changed aspect among unchanged ones is written alone`, async () => {
      const { wrapped, calls, datasetsRead } = counted(make());
      const catalog = createCatalog({ adapter: wrapped, superUsers: [ADMIN], jobs: { background: false } });
      try {
        await catalog.properties.create(ADMIN, { qualifiedName: 'io.compare.tier', valueType: 'string', entityTypes: ['dataset'] });
        await catalog.entities.applyProposals(ADMIN, proposals());
        const versionsOf = async (i: number) =>
          Object.fromEntries(Object.entries((await catalog.entities.get(ADMIN, urnOf(i)))!.aspects).map(([n, a]) => [n, a.version]));
        const before = await versionsOf(7);
        const { events } = await catalog.changes.read(ADMIN, { limit: 1000 });

        calls.readEntities = calls.commit = calls.matchAspects = 0;
        datasetsRead.length = 0;
        const outcomes = await catalog.entities.applyProposals(ADMIN, proposals());
        expect(outcomes).toHaveLength(3 * COUNT);
        expect(calls.commit).toBe(0);
        // No dataset is read (the structured property definitions may be).
        if (wrapped.matchAspects) expect([calls.matchAspects, datasetsRead.length]).toEqual([1, 0]);
        expect((await catalog.changes.read(ADMIN, { limit: 1000 })).events).toHaveLength(events.length);
        expect(await versionsOf(7)).toEqual(before);

        // One description changed: the chunk goes through its unit of work, and only that aspect gets a version and an event.
        calls.commit = 0;
        datasetsRead.length = 0;
        await catalog.entities.applyProposals(
          ADMIN,
          proposals((i) => (i === 7 ? 'renamed' : `table ${i}`)),
        );
        expect(calls.commit).toBe(1);
        // With the compare, the unit of work reads only the entity that changes.
        if (wrapped.matchAspects) expect(datasetsRead).toEqual([urnOf(7)]);
        const after = (await catalog.changes.read(ADMIN, { limit: 1000 })).events;
        expect(after.slice(events.length).map((e) => [e.entityUrn, e.aspectName])).toEqual([[urnOf(7), 'datasetProperties']]);
        expect(await versionsOf(7)).toEqual({ ...before, datasetProperties: before.datasetProperties! + 1 });
        expect((await catalog.entities.get(ADMIN, urnOf(7)))!.aspects.datasetProperties!.value).toEqual({
          name: 't7',
          description: 'renamed',
        });
      } finally {
        await catalog.close();
      }
    });
  }
});
