import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import { formatKeyIds, parseKeyIds } from '../../../adapters/sqlite/search-store';
import { createCatalog, type Catalog } from '../../../src';
import type { JsonValue } from '../../../src/adapter/types';
import { randomCatalog, randomDocument, randomSearchRequest, seededRandom } from '../../../src/testing/search-catalog';
import { expectSearchLikeReference, WrittenCatalog } from '../../../src/testing/search-random';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-schema-8-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const REPEAT = '\x7f=';

/** The packed text as schema version 7 wrote it: every repeat mark replaced by the element before it. */
function withoutRepeats(text: string): string {
  const expand = (value: JsonValue): JsonValue => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      const out: JsonValue[] = [];
      for (const element of value) out.push(element === REPEAT ? out.at(-1)! : expand(element));
      return out;
    }
    const out: Record<string, JsonValue> = {};
    for (const key of Object.keys(value)) out[key] = expand(value[key]!);
    return out;
  };
  return JSON.stringify(expand(JSON.parse(text) as JsonValue));
}

/** The raw rows this schema version changes the form of. */
function rawRows(filename: string) {
  const db = new Database(filename, { readonly: true });
  try {
    return {
      values: db.prepare('SELECT key_id, entity_id, value, removed, entity_type, flags_off FROM search_values ORDER BY 1, 2, 3').all(),
      keyIds: db.prepare('SELECT entity_id, key_ids FROM entities ORDER BY entity_id').all() as Array<{
        entity_id: number;
        key_ids: string;
      }>,
    };
  } finally {
    db.close();
  }
}

/**
 * Turns a file written by this release into the file schema version 7 would have written: the flags
 * as they were, every key id alone, packed documents without repeat marks. Returns how many packed
 * documents held a repeat mark.
 */
function downgradeToVersion7(filename: string): number {
  const db = new Database(filename);
  try {
    let repeated = 0;
    db.transaction(() => {
      db.exec('UPDATE search_values SET flags_off = 7 - flags_off; ALTER TABLE search_values RENAME COLUMN flags_off TO flags');
      const keyIds = db.prepare('UPDATE entities SET key_ids = ? WHERE entity_id = ?');
      for (const row of db.prepare('SELECT entity_id, key_ids FROM entities').all() as Array<{ entity_id: number; key_ids: string }>) {
        const ids = [...parseKeyIds(row.key_ids)].map(([id, several]) => (several ? `${id}*` : String(id)));
        keyIds.run(ids.join(' '), row.entity_id);
      }
      // Each table with its key: aspect_versions is keyed by entity, aspect and version (schema version 10).
      const packed: Array<[string, string[], string[]]> = [
        ['aspects', ['value', 'system_metadata'], ['id']],
        ['aspect_versions', ['value', 'system_metadata'], ['entity_id', 'name_id', 'version']],
        ['change_events', ['aspect', 'previous_aspect', 'system_metadata'], ['id']],
      ];
      for (const [table, columns, key] of packed) {
        const where = `(${key.join(', ')}) = (${key.map(() => '?').join(', ')})`;
        for (const column of columns) {
          const update = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${where}`);
          const rows = db.prepare(`SELECT ${key.join(', ')}, ${column} AS text FROM ${table} WHERE ${column} IS NOT NULL`).all() as Array<{
            text: string;
            [column: string]: unknown;
          }>;
          for (const row of rows) {
            const old = withoutRepeats(row.text);
            if (old !== row.text) {
              repeated++;
              update.run(old, ...key.map((k) => row[k]));
            }
          }
        }
      }
      db.pragma('user_version = 7');
    })();
    return repeated;
  } finally {
    db.close();
  }
}

function userVersion(filename: string): number {
  const db = new Database(filename, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

describe('SQLite schema version 8', () => {
  it('writes key ids as ranges and reads both forms', () => {
    const keys = new Map<number, boolean>([
      [9, false],
      [1, false],
      [2, false],
      [3, false],
      [5, true],
      [6, true],
      [7, true],
      [8, false],
      [12, false],
      [13, false],
      [20, true],
    ]);
    expect(formatKeyIds(keys)).toBe('1-3 5-7* 8 9 12 13 20*');
    expect(parseKeyIds(formatKeyIds(keys))).toEqual(new Map([...keys].sort((a, b) => a[0] - b[0])));
    expect(parseKeyIds('3 1* 2')).toEqual(
      new Map([
        [3, false],
        [1, true],
        [2, false],
      ]),
    );
    expect(formatKeyIds(new Map())).toBe('');
    expect(parseKeyIds('')).toEqual(new Map());
  });

  it('migrates search values of a version 7 file: the same answers, rows and key lists, and writes after it', async () => {
    const filename = join(directory, 'values.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const written = new WrittenCatalog(adapter);
    try {
      await written.put(randomCatalog(81, 220));
    } finally {
      await adapter.close();
    }
    const before = rawRows(filename);
    // Several values under a key, and ranges, are both in the data.
    expect(before.keyIds.some((r) => r.key_ids.includes('*'))).toBe(true);
    expect(before.keyIds.some((r) => r.key_ids.includes('-'))).toBe(true);
    downgradeToVersion7(filename);
    expect(userVersion(filename)).toBe(7);
    const again = createSqliteAdapter({ filename });
    await again.open();
    try {
      expect(userVersion(filename)).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(8);
      expect(rawRows(filename)).toEqual(before);
      const catalog = new WrittenCatalog(again);
      for (const d of written.list) catalog.versions.set(d.urn, written.versions.get(d.urn)!);
      for (const d of written.list) catalog.documents.set(d.urn, d);
      const random = seededRandom(82);
      for (let i = 0; i < 150; i++) await expectSearchLikeReference(expect, again, catalog.list, randomSearchRequest(random, catalog.list));
      // Rewritten documents clear the rows their migrated key lists name.
      await catalog.put(
        catalog.list.slice(0, 70).map((d, i) => ({ ...randomDocument(random, 500 + i), urn: d.urn, entityType: d.entityType })),
      );
      await catalog.deleteEntities(catalog.list.slice(70, 80).map((d) => d.urn));
      await catalog.dropDocuments(catalog.list.slice(80, 90).map((d) => d.urn));
      for (let i = 0; i < 150; i++) await expectSearchLikeReference(expect, again, catalog.list, randomSearchRequest(random, catalog.list));
      const after = rawRows(filename);
      const rows = new Map<number, Map<number, number>>();
      for (const v of after.values as Array<{ key_id: number; entity_id: number }>) {
        const keys = rows.get(v.entity_id) ?? new Map<number, number>();
        keys.set(v.key_id, (keys.get(v.key_id) ?? 0) + 1);
        rows.set(v.entity_id, keys);
      }
      for (const { entity_id, key_ids } of after.keyIds) {
        const expected = new Map([...(rows.get(entity_id) ?? new Map<number, number>())].map(([k, n]) => [k, n > 1] as const));
        expect({ entity_id, keys: parseKeyIds(key_ids) }).toEqual({ entity_id, keys: expected });
      }
    } finally {
      await again.close();
    }
    // Migrating again (the version number set back) changes nothing.
    const db = new Database(filename);
    db.pragma('user_version = 7');
    db.close();
    const third = createSqliteAdapter({ filename });
    const settled = rawRows(filename);
    await third.open();
    await third.close();
    expect(rawRows(filename)).toEqual(settled);
  });

  it('migrates packed documents of a version 7 file: entities, history and change feed read back the same', async () => {
    const ADMIN = 'urn:li:corpuser:admin';
    const filename = join(directory, 'packed.db');
    let now = 1_700_000_000_000;
    const open = (): Catalog =>
      createCatalog({
        adapter: createSqliteAdapter({ filename }),
        superUsers: [ADMIN],
        clock: () => (now += 1000),
        jobs: { background: false },
      });
    const urns = Array.from({ length: 12 }, (_, i) => `urn:li:dataset:(urn:li:dataPlatform:hive,schema8.t${i},PROD)`);
    const names = ['tier', 'team', 'score'];
    const read = async (catalog: Catalog) => ({
      entities: await Promise.all(urns.map((urn) => catalog.entities.get(ADMIN, urn))),
      history: await Promise.all(urns.slice(0, 3).map((urn) => catalog.entities.history(ADMIN, urn, 'structuredProperties'))),
      changes: (await catalog.changes.read(ADMIN, { limit: 1000 })).events,
      search: await catalog.search.search(ADMIN, {
        types: ['DATASET'],
        query: '*',
        count: 50,
        orFilters: [{ and: [{ field: 'structuredProperties.schema8.score', values: ['3'], condition: 'GREATER_THAN' }] }],
      }),
    });
    const first = open();
    let expected: Awaited<ReturnType<typeof read>>;
    try {
      for (const name of names) {
        await first.properties.create(ADMIN, {
          qualifiedName: `schema8.${name}`,
          valueType: name === 'score' ? 'number' : 'string',
          entityTypes: ['dataset'],
          cardinality: name === 'team' ? 'MULTIPLE' : 'SINGLE',
        });
      }
      const assignment = (i: number, round: number) => [
        { propertyUrn: 'urn:li:structuredProperty:schema8.tier', values: [{ string: round ? 'gold' : 'silver' }] },
        { propertyUrn: 'urn:li:structuredProperty:schema8.team', values: [{ string: 'a' }, { string: `t${i % 3}` }] },
        { propertyUrn: 'urn:li:structuredProperty:schema8.score', values: [{ double: i + round }] },
      ];
      await first.entities.upsertMany(
        ADMIN,
        urns.map((urn, i) => ({ urn, aspects: { structuredProperties: { properties: assignment(i, 0) } } })),
      );
      // Replaced rows: the events and kept versions of the first round hold copies of them.
      for (const [i, urn] of urns.slice(0, 4).entries())
        await first.entities.upsertAspect(ADMIN, urn, 'structuredProperties', { properties: assignment(i, 1) });
      await first.entities.delete(ADMIN, urns[11]!);
      expected = await read(first);
    } finally {
      await first.close();
    }
    expect(expected.search.total).toBeGreaterThan(3);
    expect(downgradeToVersion7(filename)).toBeGreaterThan(10);
    const second = open();
    try {
      expect(await read(second)).toEqual(expected);
      expect(userVersion(filename)).toBe(SCHEMA_VERSION);
      await second.entities.upsertAspect(ADMIN, urns[5]!, 'structuredProperties', { properties: [] });
      const changed = await read(second);
      expect(changed.entities[5]?.aspects.structuredProperties?.value).toEqual({ properties: [] });
      expect(changed.changes.slice(0, expected.changes.length)).toEqual(expected.changes);
    } finally {
      await second.close();
    }
  });
});
