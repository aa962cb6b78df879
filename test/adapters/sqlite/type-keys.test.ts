import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import type { SearchRequest, StorageAdapter, WriteBatch } from '../../../src/adapter/types';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-type-keys-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const stamp = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:alice' };
const TEAM = 'urn:li:structuredProperty:team';

/** Entities of two types with values under the same property key (so no scope implies the type). */
function batch(): WriteBatch {
  const entities = [];
  for (let i = 0; i < 12; i++) {
    const entityType = i % 3 === 0 ? 'chart' : 'dataset';
    const urn = `urn:li:${entityType}:(e${String(i).padStart(2, '0')})`;
    entities.push({
      urn,
      entityType,
      expectVersion: 0,
      put: [{ name: 'status', value: { removed: false }, version: 1, created: stamp, lastModified: stamp }],
      searchDocument: {
        urn,
        entityType,
        removed: false,
        text: { urnKey: `e${i}` },
        fields: { platform: [i % 2 ? 'hive' : 'kafka'] },
        properties: [{ propertyUrn: TEAM, definitionKey: 'k1', values: [i % 4 === 0 ? 'core' : 'edge', i] }],
      },
    });
  }
  return { entities, now: stamp.time };
}

/** Questions whose answers depend on the type of each value row. */
const questions: SearchRequest[] = [['chart'], ['dataset'], ['chart', 'dataset'], ['corpuser']].flatMap((entityTypes) => [
  {
    entityTypes,
    includeRemoved: false,
    filter: [
      [
        {
          field: { kind: 'property', propertyUrn: TEAM, definitionKey: 'k1', valueKind: 'string' },
          operator: 'EQUAL',
          values: ['edge'],
          negated: false,
        },
      ],
    ],
    order: 'urn',
    limit: 50,
  },
  {
    entityTypes,
    includeRemoved: false,
    filter: [
      [
        {
          field: { kind: 'property', propertyUrn: TEAM, definitionKey: 'k1', valueKind: 'number' },
          operator: 'GREATER_THAN',
          values: [3],
          negated: false,
        },
        { field: { kind: 'entityType' }, operator: 'START_WITH', values: ['da'], negated: false },
      ],
    ],
    order: 'urn',
    limit: 50,
  },
]);

async function answers(adapter: StorageAdapter): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of questions) {
    const found = await adapter.search(q);
    out.push([found.total, found.hits.map((h) => h.urn)]);
  }
  const [facet] = await adapter.aggregate({
    entityTypes: ['dataset'],
    includeRemoved: false,
    filter: [],
    facets: [{ kind: 'property', propertyUrn: TEAM, definitionKey: 'k1', valueKind: 'string' }],
    maxValues: 10,
  });
  out.push(facet!.buckets);
  return out;
}

describe('SQLite value rows', () => {
  it('hold the entity type as a dictionary key, and a file with type names is migrated in place to the same answers', async () => {
    const filename = join(directory, 'types.db');
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    await adapter.commit(batch());
    const expected = await answers(adapter);
    await adapter.close();
    // Sanity of the questions themselves: the type scope and the type condition both narrow.
    expect(expected[0]).toEqual([3, ['urn:li:chart:(e03)', 'urn:li:chart:(e06)', 'urn:li:chart:(e09)']]);
    expect(expected[6]).toEqual([0, []]);

    const raw = new Database(filename);
    const typeOfRows = () => raw.prepare('SELECT DISTINCT entity_type FROM search_values ORDER BY 1').pluck().all() as string[];
    const keys = typeOfRows();
    expect(keys.every((k) => /^[0-9]+$/.test(k))).toBe(true);
    expect(keys.map((k) => raw.prepare('SELECT text FROM dictionary WHERE id = ?').pluck().get(Number(k))).sort()).toEqual([
      'chart',
      'dataset',
    ]);
    // The layout of schema version 5: type names on the value rows.
    raw.exec(`UPDATE search_values SET entity_type = (SELECT text FROM dictionary WHERE CAST(id AS TEXT) = search_values.entity_type)`);
    raw.pragma('user_version = 5');
    expect(typeOfRows()).toEqual(['chart', 'dataset']);
    raw.close();

    const migrated = createSqliteAdapter({ filename });
    await migrated.open();
    expect(await answers(migrated)).toEqual(expected);
    await migrated.close();
    const after = new Database(filename, { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(after.prepare('SELECT DISTINCT entity_type FROM search_values ORDER BY 1').pluck().all()).toEqual(keys);
      // The key statistics keep type names.
      const kept = after.prepare('SELECT DISTINCT entity_type FROM search_keys').pluck().all() as Array<string | null>;
      expect(kept).toContain('*');
      expect(kept.every((t) => t === null || t === '*' || /^[A-Za-z]/.test(t))).toBe(true);
    } finally {
      after.close();
    }
  });
});
