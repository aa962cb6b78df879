import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { pack, unpack, internMetadata, type Symbols } from '../../../adapters/sqlite/packing';
import { createCatalog, type Catalog } from '../../../src';
import type { JsonObject } from '../../../src/adapter/types';
import { tempDatabases } from '../../support/temp-database';

const tempFile = tempDatabases('compact');

/** An in-memory dictionary for the packing rules alone. */
function symbols(): Symbols & { size(): number } {
  const texts: string[] = [];
  return {
    keys: new Map(),
    shapes: new Map(),
    shapeKeys: new Map(),
    idOf: (text) => {
      const i = texts.indexOf(text);
      return i >= 0 ? i + 1 : texts.push(text);
    },
    textOf: (id) => texts[id - 1]!,
    size: () => texts.length,
  };
}

const stamp = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:alice' };
const created = { time: 1_600_000_000_000, actor: 'urn:li:corpuser:bob' };

describe('packed JSON (the compact SQLite layout)', () => {
  it('reads back exactly what was written, key order included, whatever the strings hold', () => {
    const dict = symbols();
    const documents: JsonObject[] = [
      {
        properties: [
          { propertyUrn: 'urn:li:structuredProperty:a', values: [{ string: 'x' }, { double: -0 }], created, lastModified: stamp },
          {
            propertyUrn: 'urn:li:structuredProperty:b',
            values: [{ string: '\x7f!' }],
            created: stamp,
            lastModified: { actor: stamp.actor, time: stamp.time },
          },
        ],
      },
      { '\x7f': '\x7f', "\x7f'": "\x7f'x", '\x7f1': ['\x7f*', '\x7f!'], 'with space': 'urn:li:corpuser:x', '': null, '12': true, ab: 1.5 },
      { stamp: { time: stamp.time, actor: 'urn:li:corpuser:other' }, nested: { time: stamp.time, actor: stamp.actor, extra: 1 } },
      JSON.parse('{"__proto__": {"polluted": true}, "customProperties": {"__proto__": "x"}}') as JsonObject,
      { long: `urn:li:dataset:${'x'.repeat(400)}`, key: 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)' },
      // Shapes: an array that looks like a packed shape, keys with no id, values left out as JSON leaves them out.
      { list: ['\x7f{1', 'a'], mixed: { 'not an identifier': 1, name: 2 }, gone: undefined, kept: [undefined, 1] } as unknown as JsonObject,
      // Repeats: elements and shaped values equal to the one before, short ones, and strings that look like the mark.
      {
        same: [{ a: 1 }, { a: 1 }, { a: 1 }, 'long text', 'long text', null, null, 1, 1, '\x7f=', '\x7f=', [], []],
        stamps: { first: { created, lastModified: stamp }, second: { created, lastModified: stamp }, third: stamp, fourth: stamp },
        nested: [
          [
            ['x', 'x'],
            ['x', 'x'],
          ],
          [
            ['x', 'x'],
            ['x', 'x'],
          ],
        ],
      },
    ];
    for (const document of documents) {
      const text = pack(document, { modified: stamp, created }, dict);
      const back = unpack(text, { modified: stamp, created }, dict);
      expect(JSON.stringify(back)).toBe(JSON.stringify(document));
      expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
    // Plain JSON (a row written without packing) reads back as it is.
    expect(unpack('{"a":[1,"b"]}', {}, dict)).toEqual({ a: [1, 'b'] });
  });

  it('writes an element equal to the one before it as a repeat, read back as a copy of its own', () => {
    const dict = symbols();
    const urns = ['a', 'b', 'c', 'd', 'e'].map((n) => `urn:li:structuredProperty:${n}`);
    const metadata: JsonObject = {
      propertyStamps: Object.fromEntries(urns.map((urn) => [urn, { created: stamp, lastModified: stamp }])),
      list: [{ x: [1, 2] }, { x: [1, 2] }],
    };
    const text = pack(metadata, { modified: stamp }, dict, internMetadata);
    expect(text.split('\x7f=').length - 1).toBe(5);
    const back = unpack(text, { modified: stamp }, dict) as {
      propertyStamps: Record<string, { created: { time: number } }>;
      list: Array<{ x: number[] }>;
    };
    expect(back).toEqual(metadata);
    back.propertyStamps[urns[0]!]!.created.time = 1;
    back.list[0]!.x.push(3);
    expect(back.propertyStamps[urns[1]!]!.created.time).toBe(stamp.time);
    expect(back.list[1]!.x).toEqual([1, 2]);
    // Each repeat stands for the element before it only: a repeat first in its array is no document.
    expect(() => unpack(`["\x7f="]`, {}, dict)).toThrow('repeat');
  });

  it('writes repeated URNs, keys and the row stamps once, and leaves free text alone', () => {
    const dict = symbols();
    const assignment = (n: number): JsonObject => ({
      propertyUrn: `urn:li:structuredProperty:p${n % 3}`,
      values: [{ string: `free text ${n}` }],
      created: stamp,
      lastModified: stamp,
    });
    const value: JsonObject = { properties: Array.from({ length: 30 }, (_, n) => assignment(n)) };
    const text = pack(value, { modified: stamp }, dict);
    expect(text.length).toBeLessThan(JSON.stringify(value).length / 3);
    expect(text).toContain('free text 29');
    expect(text).not.toContain('urn:li:');
    // properties, propertyUrn, values, string, created, lastModified, three URNs and the shape of an assignment.
    expect(dict.size()).toBe(10);
    const metadata = pack(
      { propertyKeys: { 'urn:li:structuredProperty:p0': '5dad3fa0-cb87-4ba2-b1bf-788566de5df1:20240101000000' }, salt: 'c2VjcmV0' },
      {},
      dict,
      internMetadata,
    );
    expect(metadata).not.toContain('5dad3fa0');
    expect(metadata).toContain('c2VjcmV0');
  });
});

const ADMIN = 'urn:li:corpuser:admin';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,compact.orders,PROD)';

function open(filename: string, options: { history?: boolean } = {}): Catalog {
  let now = 1_700_000_000_000;
  return createCatalog({
    adapter: createSqliteAdapter({ filename }),
    superUsers: [ADMIN],
    clock: () => (now += 1000),
    jobs: { background: false },
    ...(options.history === false ? { history: { enabled: false } } : {}),
  });
}

describe('change events of the compact SQLite layout', () => {
  for (const history of [true, false]) {
    it(`keep each event's value after its aspect is replaced, deleted, and its entity hard-deleted (history ${history ? 'on' : 'off'})`, async () => {
      const filename = tempFile();
      const catalog = open(filename, { history });
      try {
        for (const description of ['one', 'two', 'three'])
          await catalog.entities.upsertAspect(ADMIN, URN, 'datasetProperties', { name: 'orders', description });
        await catalog.entities.upsertAspect(ADMIN, URN, 'status', { removed: false });
        // Each value is stored once: no event holds a copy of its own value. The last ones take it from their
        // aspect rows, the older ones from the previous value of the event that replaced their row.
        const raw = new Database(filename, { readonly: true });
        expect(raw.prepare('SELECT flags, aspect IS NULL AS shared FROM change_events ORDER BY id').raw().all()).toEqual([
          [1, 1],
          [1, 1],
          [1, 1],
          [1, 1],
        ]);
        raw.close();
        await catalog.entities.deleteAspect(ADMIN, URN, 'status');
        const expected = [
          ['UPSERT', 'datasetProperties', 'one', null],
          ['UPSERT', 'datasetProperties', 'two', 'one'],
          ['UPSERT', 'datasetProperties', 'three', 'two'],
          ['UPSERT', 'status', undefined, null],
          ['DELETE', 'status', null, undefined],
        ];
        const shape = (events: Awaited<ReturnType<Catalog['changes']['read']>>['events']) =>
          events.map((e) => [
            e.changeType,
            e.aspectName,
            e.aspect === null ? null : e.aspect.description,
            e.previousAspectValue === null ? null : e.previousAspectValue.description,
          ]);
        expect(shape((await catalog.changes.read(ADMIN, { limit: 100 })).events)).toEqual(expected);
        await catalog.entities.delete(ADMIN, URN);
        const after = (await catalog.changes.read(ADMIN, { limit: 100 })).events;
        expect(shape(after)).toEqual([...expected, ['DELETE', 'datasetProperties', null, 'three']]);
        // With the entity gone (and its id free for another), every event holds its URN and its own value.
        const detached = new Database(filename, { readonly: true });
        expect(detached.prepare('SELECT COUNT(*) FROM change_events WHERE flags <> 0 OR entity_id IS NOT NULL').pluck().get()).toBe(0);
        detached.close();
        expect(new Set(after.map((e) => e.entityUrn))).toEqual(new Set([URN]));
        expect(after[2]!.created.actor).toBe(ADMIN);
        // The URN is written again: a new entity (maybe the same row id) does not take the old events.
        await catalog.entities.upsertAspect(ADMIN, URN, 'datasetProperties', { name: 'orders', description: 'four' });
        const again = (await catalog.changes.read(ADMIN, { limit: 100 })).events;
        expect(shape(again).at(-1)).toEqual(['UPSERT', 'datasetProperties', 'four', null]);
        expect(shape(again).slice(0, -1)).toEqual(shape(after));
        const versions = await catalog.entities.history(ADMIN, URN, 'datasetProperties');
        expect(versions.map((v) => v.value.description)).toEqual(['four']);
      } finally {
        await catalog.close();
      }
    });
  }

  it('rolls back the dictionary with a failed commit: ids of a rolled-back write are not reused as if they existed', async () => {
    const filename = tempFile();
    let fail = true;
    const adapter = createSqliteAdapter({
      filename,
      faultInjector: () => {
        if (fail) throw new Error('injected');
      },
    });
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    try {
      await expect(
        catalog.entities.upsertAspect(ADMIN, URN, 'datasetProperties', { name: 'a', customProperties: { brandNewKey: 'x' } }),
      ).rejects.toThrow('injected');
      fail = false;
      await catalog.entities.upsertAspect(ADMIN, URN, 'datasetProperties', { name: 'a', customProperties: { brandNewKey: 'x' } });
      expect((await catalog.entities.get(ADMIN, URN))?.aspects.datasetProperties?.value).toEqual({
        name: 'a',
        customProperties: { brandNewKey: 'x' },
      });
    } finally {
      await catalog.close();
    }
    const reopened = open(filename);
    try {
      expect((await reopened.entities.get(ADMIN, URN))?.aspects.datasetProperties?.value).toEqual({
        name: 'a',
        customProperties: { brandNewKey: 'x' },
      });
    } finally {
      await reopened.close();
    }
  });
});
