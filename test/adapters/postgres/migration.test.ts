import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandle } from '../../../adapters/postgres/database';
import { pack, unpack } from '../../../adapters/postgres/packing';
import { createPostgresAdapter } from '../../../adapters/postgres/index';
import { migrate, SCHEMA_VERSION } from '../../../adapters/postgres/schema';
import { storedLower } from '../../../adapters/postgres/search-store';
import { documentVector } from '../../../adapters/postgres/text';
import type { JsonObject, SearchCondition, SearchDocument, SearchRequest, StorageAdapter } from '../../../src/adapter/types';
import { POSTGRES_URL, SchemaPool, withPostgresServer } from '../../support/postgres';

/**
 * Storage rules of the PostgreSQL adapter and the migration of a schema written by the release before
 * compact storage (schema version 2): built with that release's DDL (the first two migrations) and
 * filled as that release wrote rows, then opened by this adapter, read back, searched and written.
 */

const T0 = 1_700_000_000_000;
const ACTOR = 'urn:li:corpuser:a';
const OLD_URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,Old_Table,PROD)';
const UMLAUT_URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,Ärger,PROD)';
const KEY = 'def-1';
const PROPERTY = 'urn:li:structuredProperty:tier';

const doc = (urn: string, tier: string): SearchDocument => ({
  urn,
  entityType: 'dataset',
  removed: false,
  text: { name: 'orders', description: 'daily orders', urnKey: 'orders' },
  fields: { platform: ['urn:li:dataPlatform:hive'], origin: ['PROD'] },
  properties: [{ propertyUrn: PROPERTY, definitionKey: KEY, values: [tier] }],
});

const search = (filter: SearchCondition[][], text?: string): SearchRequest => ({
  entityTypes: ['dataset'],
  includeRemoved: false,
  filter,
  order: 'urn',
  limit: 10,
  ...(text ? { text } : {}),
});
const iequalUrn = (value: string): SearchCondition => ({ field: { kind: 'urn' }, operator: 'IEQUAL', values: [value], negated: false });
const TIER = { kind: 'property', propertyUrn: PROPERTY, definitionKey: KEY, valueKind: 'string' } as const;
const tierIs = (value: string): SearchCondition => ({ field: TIER, operator: 'EQUAL', values: [value], negated: false });
const tierAbove = (value: string): SearchCondition => ({ field: TIER, operator: 'GREATER_THAN', values: [value], negated: false });
const tierSet: SearchCondition = { field: TIER, operator: 'EXISTS', values: [], negated: false };

describe('packed documents and stored lower-casing (no server needed)', () => {
  it('packs JSON text and gives it back exactly, characters JSON escapes included', () => {
    const text = JSON.stringify({ name: 'a "quoted" \\ name', emoji: '😀', nested: { list: [1, 2.5, null, true] }, empty: '' });
    const packed = pack(text);
    expect(packed[0]).toBe(1);
    expect(unpack(packed)).toBe(text);
    // Repetitive documents shrink (the preset dictionary helps small ones too).
    const repetitive = JSON.stringify({
      properties: Array.from({ length: 5 }, (_, i) => ({
        propertyUrn: `urn:li:structuredProperty:p${i}`,
        values: [{ string: 'x' }],
        created: { time: T0, actor: ACTOR },
      })),
    });
    expect(pack(repetitive).length).toBeLessThan(repetitive.length / 3);
  });

  it('refuses a packed document of an unknown format instead of misreading it', () => {
    expect(() => unpack(Buffer.from([9, 1, 2, 3]))).toThrow(/unknown format 9/);
  });

  it('stores a lower-casing only where lower() in the "C" collation cannot compute it', () => {
    expect(storedLower('urn:li:dataPlatform:hive')).toBeNull();
    expect(storedLower('plain')).toBeNull();
    expect(storedLower('Ärger')).toBe('ärger');
    // Characters JavaScript does not change need nothing either.
    expect(storedLower('ß 東京 ABC')).toBeNull();
    expect(storedLower('İstanbul')).toBe('i̇stanbul');
  });
});

await withPostgresServer('test/adapters/postgres/migration.test.ts', 'postgres migrations', () => {
  const schemas = new SchemaPool();
  const adapters: StorageAdapter[] = [];
  afterAll(async () => {
    for (const adapter of adapters) await adapter.close();
    await schemas.end();
  });

  /** A schema as the release before compact storage made it and wrote it (one entity with everything). */
  async function releasedSchema(): Promise<string> {
    const schema = schemas.freshSchema();
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      const h = createHandle(pool, schema);
      await migrate(h, 2);
      const s = h.s;
      const [entity] = await h.query<{ id: string }>(
        `INSERT INTO ${s}.entities (urn, entity_type, version) VALUES ($1, 'dataset', 2) RETURNING id`,
        [OLD_URN],
      );
      const id = entity!.id;
      await h.execute(
        `INSERT INTO ${s}.aspects (entity_id, name, value, version, created_time, created_actor, modified_time, modified_actor, system_metadata)
         VALUES ($1, 'datasetProperties', $2, 2, $3, $4, $5, 'urn:li:corpuser:b', $6)`,
        [id, JSON.stringify({ name: 'orders', description: 'daily "orders"' }), T0, ACTOR, T0 + 5, JSON.stringify({ runId: 'r-1' })],
      );
      await h.execute(
        `INSERT INTO ${s}.search_docs (entity_id, urn, entity_type, removed, urn_lower, entity_type_lower) VALUES ($1, $2, 'dataset', false, $3, NULL)`,
        [id, OLD_URN, OLD_URN.toLowerCase()],
      );
      await h.execute(`INSERT INTO ${s}.search_text (entity_id, tsv) VALUES ($1, $2::tsvector)`, [
        id,
        documentVector({ name: 'orders', description: 'daily orders', urnKey: 'old_table' }),
      ]);
      await h.execute(
        `INSERT INTO ${s}.search_fields (field, value, entity_id, value_lower, entity_type, removed, first_of_field) VALUES
         ('platform', 'urn:li:dataPlatform:hive', $1, 'urn:li:dataplatform:hive', 'dataset', false, true)`,
        [id],
      );
      const [key] = await h.query<{ id: number }>(`INSERT INTO ${s}.property_keys (property, def_key) VALUES ($1, $2) RETURNING id`, [
        PROPERTY,
        KEY,
      ]);
      await h.execute(
        `INSERT INTO ${s}.property_values (key_id, str_value, num_value, entity_id, str_lower, entity_type, removed, first_of_key)
         VALUES ($1, 'Gold', NULL, $2, 'gold', 'dataset', false, true)`,
        [key!.id, id],
      );
      await h.execute(`UPDATE ${s}.change_counter SET last_id = 1`);
      await h.execute(
        `INSERT INTO ${s}.change_events (id, entity_urn, entity_type, aspect_name, change_type, aspect, previous_aspect, created_time, created_actor, system_metadata)
         VALUES (1, $1, 'dataset', 'datasetProperties', 'UPSERT', $2::jsonb, $3::jsonb, $4, $5, $6::jsonb)`,
        [OLD_URN, JSON.stringify({ name: 'orders' }), JSON.stringify({ name: 'old' }), T0 + 5, ACTOR, JSON.stringify({ runId: 'r-1' })],
      );
      await h.execute(
        `INSERT INTO ${s}.aspect_versions (urn, name, version, value, created_time, created_actor, modified_time, modified_actor, system_metadata)
         VALUES ($1, 'datasetProperties', 1, $2::jsonb, $3, $4, $3, $4, NULL)`,
        [OLD_URN, JSON.stringify({ name: 'old' }), T0, ACTOR],
      );
    } finally {
      await pool.end();
    }
    return schema;
  }

  /** What a schema holds, its own name written `S`: relations and columns, indexes, constraints, views, functions, triggers, statistics objects, rows per table. */
  async function describeSchema(schema: string): Promise<string[]> {
    const queries = [
      `SELECT c.relname, c.relkind, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
              a.attgenerated, coll.collname, pg_get_expr(d.adbin, d.adrelid)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         LEFT JOIN pg_collation coll ON coll.oid = a.attcollation
         LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        WHERE n.nspname = $1 ORDER BY 1, 3`,
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`,
      `SELECT cl.relname, co.conname, pg_get_constraintdef(co.oid) FROM pg_constraint co
         JOIN pg_namespace n ON n.oid = co.connamespace LEFT JOIN pg_class cl ON cl.oid = co.conrelid WHERE n.nspname = $1 ORDER BY 1, 2`,
      `SELECT viewname, definition FROM pg_views WHERE schemaname = $1 ORDER BY 1`,
      `SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
      `SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1, 2`,
      `SELECT s.stxname, pg_get_statisticsobjdef(s.oid) FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
        WHERE n.nspname = $1 ORDER BY 1`,
    ];
    const lines: string[] = [];
    for (const sql of queries) {
      for (const row of await schemas.query<Record<string, unknown>>(sql, [schema]))
        lines.push(JSON.stringify(Object.values(row)).split(schema).join('S'));
    }
    for (const table of (
      await schemas.query<{ relname: string }>(
        `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1`,
        [schema],
      )
    ).map((r) => r.relname)) {
      const [rows] = await schemas.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${table}"`);
      lines.push(`${table}: ${rows!.n} rows`);
    }
    return lines;
  }

  it('makes a new schema in one transaction, the schema the migrations make one at a time', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    try {
      const whole = schemas.freshSchema();
      const stepwise = schemas.freshSchema();
      await migrate(createHandle(pool, whole));
      const h = createHandle(pool, stepwise);
      for (let version = 1; version <= SCHEMA_VERSION; version++) await migrate(h, version);
      const described = await describeSchema(whole);
      expect(described.length).toBeGreaterThan(50);
      expect(described).toEqual(await describeSchema(stepwise));
      expect(await schemas.query(`SELECT version FROM "${whole}".metacatalog_schema_version`)).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await pool.end();
    }
  });

  describe('a schema of the release before compact storage', () => {
    it('is migrated in place: everything reads back, searches find it, and writes go on', async () => {
      const schema = await releasedSchema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      expect(await schemas.query<{ version: number }>(`SELECT version FROM "${schema}".metacatalog_schema_version`)).toEqual([
        { version: SCHEMA_VERSION },
      ]);

      const [entity] = await adapter.readEntities([OLD_URN]);
      expect(entity).toEqual({
        urn: OLD_URN,
        entityType: 'dataset',
        version: 2,
        aspects: {
          datasetProperties: {
            name: 'datasetProperties',
            value: { name: 'orders', description: 'daily "orders"' },
            version: 2,
            created: { time: T0, actor: ACTOR },
            lastModified: { time: T0 + 5, actor: 'urn:li:corpuser:b' },
            systemMetadata: { runId: 'r-1' },
          },
        },
      });
      // The old document: URN IEQUAL through its stored lower-casing, the property, full text.
      expect((await adapter.search(search([[iequalUrn(OLD_URN.toUpperCase())]]))).hits.map((h) => h.urn)).toEqual([OLD_URN]);
      expect((await adapter.search(search([[tierIs('Gold')]]))).total).toBe(1);
      // A value row from before schema version 5 (not marked as its document's sole value) is counted distinct.
      expect(await adapter.search(search([[tierAbove('A')]]))).toEqual({ total: 1, hits: [{ urn: OLD_URN, entityType: 'dataset' }] });
      expect((await adapter.search(search([[tierSet]]))).total).toBe(1);
      expect((await adapter.search(search([], 'daily'))).total).toBe(1);
      const changes = await adapter.readChanges!({ limit: 10 });
      expect(changes.events).toEqual([
        {
          id: '1',
          entityUrn: OLD_URN,
          entityType: 'dataset',
          aspectName: 'datasetProperties',
          changeType: 'UPSERT',
          aspect: { name: 'orders' },
          previousAspectValue: { name: 'old' },
          created: { time: T0 + 5, actor: ACTOR },
          systemMetadata: { runId: 'r-1' },
        },
      ]);
      expect(
        (await adapter.readAspectVersions!({ urn: OLD_URN, aspectName: 'datasetProperties', limit: 5 })).map((v) => [v.version, v.value]),
      ).toEqual([[1, { name: 'old' }]]);

      // Written again: the new value replaces the old row (packed now), the document moves with it.
      const put = {
        name: 'datasetProperties',
        value: { name: 'orders v3' },
        version: 3,
        created: { time: T0, actor: ACTOR },
        lastModified: { time: T0 + 9, actor: ACTOR },
      };
      await adapter.commit({
        entities: [{ urn: OLD_URN, entityType: 'dataset', expectVersion: 2, put: [put], searchDocument: doc(OLD_URN, 'Silver') }],
        events: [
          {
            entityUrn: OLD_URN,
            entityType: 'dataset',
            aspectName: 'datasetProperties',
            changeType: 'UPSERT',
            aspect: put.value,
            previousAspectValue: { name: 'orders' },
            created: { time: T0 + 9, actor: ACTOR },
          },
        ],
      });
      const [again] = await adapter.readEntities([OLD_URN]);
      expect(again?.version).toBe(3);
      expect(again?.aspects.datasetProperties).toEqual({ ...put, lastModified: { time: T0 + 9, actor: ACTOR } });
      expect((await adapter.search(search([[tierIs('Gold')]]))).total).toBe(0);
      expect((await adapter.search(search([[tierIs('Silver')]]))).hits.map((h) => h.urn)).toEqual([OLD_URN]);
      expect((await adapter.readChanges!({ after: '1', limit: 10 })).events.map((e) => [e.id, e.aspect, e.previousAspectValue])).toEqual([
        ['2', { name: 'orders v3' }, { name: 'orders' }],
      ]);
      const rows = await schemas.query<{ value: string | null; packed: Buffer | null; modified_actor: string | null }>(
        `SELECT value, packed, modified_actor FROM "${schema}".aspects`,
      );
      expect(rows.map((r) => [r.value, r.packed === null ? null : unpack(r.packed), r.modified_actor])).toEqual([
        [null, JSON.stringify(put.value), null],
      ]);
      expect(await schemas.query(`SELECT entity_id FROM "${schema}".search_docs`)).toHaveLength(1);
      // The rewritten value row is marked as the document's only one under its key.
      expect(await schemas.query(`SELECT str_value, first_of_key, sole_of_key FROM "${schema}".property_values`)).toEqual([
        { str_value: 'Silver', first_of_key: true, sole_of_key: true },
      ]);
      expect((await adapter.search(search([[tierAbove('A')]]))).total).toBe(1);
      // The value indexes of schema version 5: one kind of value each, the row scope and flags included.
      const indexes = await schemas.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'property_values' ORDER BY indexname`,
        [schema],
      );
      expect(indexes.map((i) => i.indexname)).toEqual(['property_values_by_entity', 'property_values_num', 'property_values_str']);
      for (const [name, column] of [
        ['property_values_num', 'num_value'],
        ['property_values_str', 'str_value'],
      ] as const) {
        expect(indexes.find((i) => i.indexname === name)?.indexdef).toContain(
          `(key_id, ${column}, entity_id) INCLUDE (removed, first_of_key, sole_of_key, entity_type) WHERE (${column} IS NOT NULL)`,
        );
      }
    });
  });

  it('keeps the rights of a role that could use the tables of the earlier release: it still searches and creates entities', async () => {
    const schema = await releasedSchema();
    const role = `${schema}_user`;
    await schemas.query(`CREATE ROLE "${role}" NOLOGIN`);
    try {
      // What a deployment granted on the earlier release: the tables, no sequence.
      await schemas.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
      await schemas.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
      const owner = schemas.adapter({ schema });
      await owner.open();
      await owner.close();
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c role=${role}` });
      try {
        const adapter = createPostgresAdapter({ pool }, { schema });
        await adapter.open();
        const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,new_one,PROD)';
        await adapter.commit({
          entities: [
            {
              urn,
              entityType: 'dataset',
              expectVersion: 0,
              put: [
                {
                  name: 'info',
                  value: { n: 1 },
                  version: 1,
                  created: { time: T0, actor: ACTOR },
                  lastModified: { time: T0, actor: ACTOR },
                },
              ],
              searchDocument: doc(urn, 'Gold'),
            },
          ],
        });
        expect((await adapter.search(search([]))).hits.map((h) => h.urn)).toEqual([OLD_URN, urn]);
        await adapter.close();
      } finally {
        await pool.end();
      }
    } finally {
      await schemas.query(`DROP OWNED BY "${role}"`);
      await schemas.query(`DROP ROLE "${role}"`);
    }
  });

  describe('a schema of schema version 5 (events and aspects holding their own copies)', () => {
    const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,v5_table,PROD)';
    const stamp = { time: T0, actor: ACTOR };
    const KEYS_METADATA = { propertyKeys: { [PROPERTY]: KEY } };

    /** Written as version 5 wrote rows: the event with its URN and a packed copy, the aspect with packed metadata. */
    async function version5Schema(): Promise<string> {
      const schema = schemas.freshSchema();
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      try {
        const h = createHandle(pool, schema);
        await migrate(h, 5);
        const s = h.s;
        const [entity] = await h.query<{ id: string }>(
          `INSERT INTO ${s}.entities (urn, entity_type, version, removed) VALUES ($1, 'dataset', 1, false) RETURNING id`,
          [URN],
        );
        await h.execute(
          `INSERT INTO ${s}.aspects (entity_id, name, version, created_time, created_actor, packed, packed_metadata)
           VALUES ($1, 'structuredProperties', 1, $2, $3, $4, $5)`,
          [entity!.id, T0, ACTOR, pack(JSON.stringify({ v: 1 })), pack(JSON.stringify(KEYS_METADATA))],
        );
        await h.execute(`UPDATE ${s}.change_counter SET last_id = 1`);
        await h.execute(
          `INSERT INTO ${s}.change_events (id, entity_urn, entity_type, aspect_name, change_type, packed_aspect, created_time, created_actor)
           VALUES (1, $1, 'dataset', 'structuredProperties', 'UPSERT', $2, $3, $4)`,
          [URN, pack(JSON.stringify({ v: 1 })), T0, ACTOR],
        );
      } finally {
        await pool.end();
      }
      return schema;
    }

    const put = (v: number, systemMetadata?: JsonObject) => ({
      name: 'structuredProperties',
      value: { v },
      version: v,
      created: stamp,
      lastModified: { time: T0 + v, actor: ACTOR },
      ...(systemMetadata ? { systemMetadata } : {}),
    });
    const upsert = (urn: string, aspect: JsonObject, previous: JsonObject | null) => ({
      entityUrn: urn,
      entityType: 'dataset',
      aspectName: 'structuredProperties',
      changeType: 'UPSERT' as const,
      aspect,
      previousAspectValue: previous,
      created: stamp,
    });
    const feed = async (adapter: StorageAdapter) =>
      (await adapter.readChanges!({ limit: 50 })).events.map((e) => [
        e.id,
        e.entityUrn,
        e.entityType,
        e.changeType,
        e.aspect,
        e.previousAspectValue,
      ]);

    it('is migrated in place, reads back, and new events refer to the rows they wrote until those change', async () => {
      const schema = await version5Schema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      const [before] = await adapter.readEntities([URN]);
      expect(before?.aspects.structuredProperties).toEqual({ ...put(1, KEYS_METADATA), lastModified: stamp });
      expect(await feed(adapter)).toEqual([['1', URN, 'dataset', 'UPSERT', { v: 1 }, null]]);

      // Version 2 written by this release: the old event keeps its copy; the new one refers to its row and entity.
      const v2 = put(2, KEYS_METADATA);
      await adapter.commit({
        entities: [{ urn: URN, entityType: 'dataset', expectVersion: 1, put: [v2], searchDocument: doc(URN, 'Gold') }],
        events: [upsert(URN, v2.value, { v: 1 })],
      });
      const events = () =>
        schemas.query<{
          id: string;
          entity_urn: string | null;
          entity_id: string | null;
          aspect_version: number | null;
          packed: boolean;
          change_type: string | null;
          created_actor: string | null;
        }>(
          `SELECT id::text, entity_urn, entity_id::text, aspect_version, packed_aspect IS NOT NULL AS packed, change_type, created_actor
           FROM "${schema}".change_events ORDER BY id`,
        );
      const [entityRow] = await schemas.query<{ id: string }>(`SELECT id::text FROM "${schema}".entities`);
      const entityId = entityRow!.id;
      // It also takes its change type and actor from the row.
      expect(await events()).toEqual([
        { id: '1', entity_urn: URN, entity_id: null, aspect_version: null, packed: true, change_type: 'UPSERT', created_actor: ACTOR },
        { id: '2', entity_urn: null, entity_id: entityId, aspect_version: 2, packed: false, change_type: null, created_actor: null },
      ]);
      // The metadata is a shared document now; the row of version 5 held its own.
      expect(
        await schemas.query(`SELECT packed_metadata IS NULL AS own, metadata_id IS NOT NULL AS shared FROM "${schema}".aspects`),
      ).toEqual([{ own: true, shared: true }]);
      expect((await adapter.readEntities([URN]))[0]?.aspects.structuredProperties).toEqual(v2);
      expect(await feed(adapter)).toEqual([
        ['1', URN, 'dataset', 'UPSERT', { v: 1 }, null],
        ['2', URN, 'dataset', 'UPSERT', { v: 2 }, { v: 1 }],
      ]);

      // Replaced (with other metadata): event 2 gets a copy of value 2, the unused document goes.
      const v3 = put(3, { other: true });
      await adapter.commit({
        entities: [{ urn: URN, entityType: 'dataset', expectVersion: 2, put: [v3], searchDocument: doc(URN, 'Gold') }],
        events: [upsert(URN, v3.value, v2.value)],
      });
      expect((await events()).map((e) => [e.id, e.aspect_version, e.packed, e.change_type, e.created_actor])).toEqual([
        ['1', null, true, 'UPSERT', ACTOR],
        ['2', null, true, 'UPSERT', ACTOR],
        ['3', 3, false, null, null],
      ]);
      expect(await schemas.query(`SELECT count(*)::int AS n FROM "${schema}".aspect_metadata`)).toEqual([{ n: 1 }]);
      expect((await adapter.readEntities([URN]))[0]?.aspects.structuredProperties).toEqual(v3);
      expect(await feed(adapter)).toEqual([
        ['1', URN, 'dataset', 'UPSERT', { v: 1 }, null],
        ['2', URN, 'dataset', 'UPSERT', { v: 2 }, { v: 1 }],
        ['3', URN, 'dataset', 'UPSERT', { v: 3 }, { v: 2 }],
      ]);

      // Deleted: every event gets the URN and type, event 3 its value; the document goes with the last row.
      await adapter.commit({
        entities: [{ urn: URN, entityType: 'dataset', expectVersion: 3, deleteEntity: true }],
        events: [
          {
            entityUrn: URN,
            entityType: 'dataset',
            aspectName: 'structuredProperties',
            changeType: 'DELETE',
            aspect: null,
            previousAspectValue: v3.value,
            created: stamp,
          },
        ],
      });
      expect((await events()).map((e) => [e.id, e.entity_urn, e.entity_id, e.aspect_version, e.packed])).toEqual([
        ['1', URN, null, null, true],
        ['2', URN, null, null, true],
        ['3', URN, null, null, true],
        ['4', URN, null, null, false],
      ]);
      expect(await schemas.query(`SELECT count(*)::int AS n FROM "${schema}".aspect_metadata`)).toEqual([{ n: 0 }]);
      expect(await feed(adapter)).toEqual([
        ['1', URN, 'dataset', 'UPSERT', { v: 1 }, null],
        ['2', URN, 'dataset', 'UPSERT', { v: 2 }, { v: 1 }],
        ['3', URN, 'dataset', 'UPSERT', { v: 3 }, { v: 2 }],
        ['4', URN, 'dataset', 'DELETE', null, { v: 3 }],
      ]);
      // The entity type filter reads the type wherever it is kept.
      expect((await adapter.readChanges!({ limit: 50, entityTypes: ['dataset'] })).events).toHaveLength(4);
      expect((await adapter.readChanges!({ limit: 50, entityTypes: ['chart'] })).events).toHaveLength(0);
    });

    it('shares one metadata document among the rows of a commit, keeps it while any row refers to it, and names a recreated entity right', async () => {
      const schema = schemas.freshSchema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      const urns = [0, 1, 2].map((i) => `urn:li:dataset:(urn:li:dataPlatform:hive,shared_${i},PROD)`);
      const v1 = put(1, KEYS_METADATA);
      await adapter.commit({
        entities: urns.map((urn) => ({ urn, entityType: 'dataset', expectVersion: 0, put: [v1] })),
        events: urns.map((urn) => upsert(urn, v1.value, null)),
      });
      expect(await schemas.query(`SELECT count(*)::int AS n FROM "${schema}".aspect_metadata`)).toEqual([{ n: 1 }]);
      // One holder rewritten without metadata: the document stays for the others.
      const bare = put(2);
      await adapter.commit({ entities: [{ urn: urns[0]!, entityType: 'dataset', expectVersion: 1, put: [bare] }] });
      expect(await schemas.query(`SELECT count(*)::int AS n FROM "${schema}".aspect_metadata`)).toEqual([{ n: 1 }]);
      for (const urn of urns.slice(1)) expect((await adapter.readEntities([urn]))[0]?.aspects.structuredProperties).toEqual(v1);
      expect((await adapter.readEntities([urns[0]!]))[0]?.aspects.structuredProperties).toEqual(bare);
      // Written without an event: the event of version 1 got its copy first.
      expect((await feed(adapter)).map((e) => e[4])).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }]);
      // Deleted and created again in one batch: every event still names the URN, the old value kept.
      const again = put(1);
      await adapter.commit({
        entities: [
          { urn: urns[1]!, entityType: 'dataset', expectVersion: 1, deleteEntity: true },
          { urn: urns[1]!, entityType: 'dataset', expectVersion: 0, put: [again] },
        ],
        events: [upsert(urns[1]!, again.value, null)],
      });
      expect((await feed(adapter)).map((e) => [e[1], e[4]])).toEqual([
        [urns[0], { v: 1 }],
        [urns[1], { v: 1 }],
        [urns[2], { v: 1 }],
        [urns[1], { v: 1 }],
      ]);
      expect(await schemas.query(`SELECT count(*)::int AS n FROM "${schema}".aspect_metadata`)).toEqual([{ n: 1 }]);
    });
  });

  describe('a schema of schema version 6 (standard field rows naming their field and type as text)', () => {
    const URN_A = 'urn:li:dataset:(urn:li:dataPlatform:hive,v6_a,PROD)';
    const URN_B = 'urn:li:dataset:(urn:li:dataPlatform:kafka,v6_b,DEV)';
    const fieldIs = (name: string, operator: SearchCondition['operator'], values: string[]): SearchCondition => ({
      field: { kind: 'field', name },
      operator,
      values,
      negated: false,
    });

    /** Written as version 6 wrote rows: two documents with fields, one soft-deleted, one value with a stored lower-casing. */
    async function version6Schema(role?: string): Promise<string> {
      const schema = schemas.freshSchema();
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      try {
        const h = createHandle(pool, schema);
        await migrate(h, 6);
        const s = h.s;
        const ids: string[] = [];
        for (const [urn, removed] of [
          [URN_A, false],
          [URN_B, true],
        ] as const) {
          const [entity] = await h.query<{ id: string }>(
            `INSERT INTO ${s}.entities (urn, entity_type, version, removed) VALUES ($1, 'dataset', 1, $2) RETURNING id::text`,
            [urn, removed],
          );
          ids.push(entity!.id);
          await h.execute(`INSERT INTO ${s}.search_text (entity_id, tsv) VALUES ($1, $2::tsvector)`, [
            entity!.id,
            documentVector({ name: 'orders', description: 'daily orders', urnKey: 'orders' }),
          ]);
        }
        const field = (id: string, name: string, value: string, removed: boolean, first = true) =>
          h.execute(
            `INSERT INTO ${s}.search_fields (field, value, entity_id, value_lower, entity_type, removed, first_of_field)
             VALUES ($1, $2, $3, $4, 'dataset', $5, $6)`,
            [name, value, id, storedLower(value), removed, first],
          );
        await field(ids[0]!, 'platform', 'urn:li:dataPlatform:hive', false);
        await field(ids[0]!, 'origin', 'PROD', false);
        await field(ids[0]!, 'name', 'Ärger', false);
        await field(ids[1]!, 'platform', 'urn:li:dataPlatform:kafka', true);
        await field(ids[1]!, 'origin', 'DEV', true);
        await field(ids[1]!, 'tags', 'a', true);
        await field(ids[1]!, 'tags', 'b', true, false);
        if (role) {
          await h.script(`GRANT USAGE ON SCHEMA ${s} TO "${role}"`);
          await h.script(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO "${role}"`);
          await h.script(`GRANT USAGE ON SEQUENCE ${s}.entities_id_seq TO "${role}"`);
        }
      } finally {
        await pool.end();
      }
      return schema;
    }

    it('is migrated in place: the rows name their field and type by id, and searches and facets answer as before', async () => {
      const schema = await version6Schema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      expect(await schemas.query(`SELECT version FROM "${schema}".metacatalog_schema_version`)).toEqual([{ version: SCHEMA_VERSION }]);
      expect((await schemas.query<{ name: string }>(`SELECT name FROM "${schema}".search_names ORDER BY name`)).map((r) => r.name)).toEqual(
        ['dataset', 'name', 'origin', 'platform', 'tags'],
      );
      const rows = await schemas.query(
        `SELECT e.urn, n.name AS field, t.name AS type, f.value, f.value_lower, f.removed, f.first_of_field
         FROM "${schema}".search_fields f JOIN "${schema}".entities e ON e.id = f.entity_id
         JOIN "${schema}".search_names n ON n.id = f.field_id JOIN "${schema}".search_names t ON t.id = f.type_id
         ORDER BY e.urn, n.name, f.value`,
      );
      expect(rows).toEqual([
        { urn: URN_A, field: 'name', type: 'dataset', value: 'Ärger', value_lower: 'ärger', removed: false, first_of_field: true },
        { urn: URN_A, field: 'origin', type: 'dataset', value: 'PROD', value_lower: null, removed: false, first_of_field: true },
        {
          urn: URN_A,
          field: 'platform',
          type: 'dataset',
          value: 'urn:li:dataPlatform:hive',
          value_lower: null,
          removed: false,
          first_of_field: true,
        },
        { urn: URN_B, field: 'origin', type: 'dataset', value: 'DEV', value_lower: null, removed: true, first_of_field: true },
        {
          urn: URN_B,
          field: 'platform',
          type: 'dataset',
          value: 'urn:li:dataPlatform:kafka',
          value_lower: null,
          removed: true,
          first_of_field: true,
        },
        { urn: URN_B, field: 'tags', type: 'dataset', value: 'a', value_lower: null, removed: true, first_of_field: true },
        { urn: URN_B, field: 'tags', type: 'dataset', value: 'b', value_lower: null, removed: true, first_of_field: false },
      ]);
      const indexes = await schemas.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'search_fields' ORDER BY indexname`,
        [schema],
      );
      expect(indexes.map((i) => i.indexname)).toEqual(['search_fields_by_entity', 'search_fields_by_value']);
      expect(indexes[1]!.indexdef).toContain('(field_id, value, type_id, removed, first_of_field)');

      const urns = async (conditions: SearchCondition[], includeRemoved = false) =>
        (await adapter.search({ ...search([conditions]), includeRemoved })).hits.map((h) => h.urn);
      expect(await urns([fieldIs('origin', 'EQUAL', ['PROD'])])).toEqual([URN_A]);
      expect(await urns([fieldIs('origin', 'EQUAL', ['DEV'])])).toEqual([]);
      expect(await urns([fieldIs('origin', 'EQUAL', ['DEV'])], true)).toEqual([URN_B]);
      expect(await urns([fieldIs('name', 'IEQUAL', ['ÄRGER'])])).toEqual([URN_A]);
      expect((await adapter.search({ ...search([[fieldIs('tags', 'EXISTS', [])]]), includeRemoved: true })).total).toBe(1);
      expect(
        (await adapter.search({ ...search([[fieldIs('platform', 'START_WITH', ['urn:li:dataPlatform:'])]]), includeRemoved: true })).total,
      ).toBe(2);
      // A field or a type no row was ever written with matches nothing.
      expect(await urns([fieldIs('owners', 'EXISTS', [])], true)).toEqual([]);
      expect(
        (await adapter.search({ ...search([[fieldIs('origin', 'EXISTS', [])]]), entityTypes: ['chart'], includeRemoved: true })).total,
      ).toBe(0);
      const facets = await adapter.aggregate({
        entityTypes: ['dataset'],
        includeRemoved: true,
        filter: [],
        facets: [
          { kind: 'field', name: 'origin' },
          { kind: 'field', name: 'tags' },
          { kind: 'field', name: 'owners' },
        ],
        maxValues: 10,
      });
      expect(facets.map((f) => f.buckets)).toEqual([
        [
          { value: 'DEV', count: 1 },
          { value: 'PROD', count: 1 },
        ],
        [
          { value: 'a', count: 1 },
          { value: 'b', count: 1 },
        ],
        [],
      ]);
      // Joined with a filtered scope, the same.
      const scoped = await adapter.aggregate({
        entityTypes: ['dataset'],
        includeRemoved: false,
        filter: [[fieldIs('platform', 'EQUAL', ['urn:li:dataPlatform:hive'])]],
        facets: [{ kind: 'field', name: 'origin' }],
        maxValues: 10,
      });
      expect(scoped[0]!.buckets).toEqual([{ value: 'PROD', count: 1 }]);

      // Rewritten by this release: the old rows go, the new ones name a new type and field by new ids.
      await adapter.commit({
        entities: [
          {
            urn: URN_A,
            entityType: 'dataset',
            expectVersion: 1,
            put: [{ name: 'info', value: {}, version: 1, created: { time: T0, actor: ACTOR }, lastModified: { time: T0, actor: ACTOR } }],
            searchDocument: { ...doc(URN_A, 'Gold'), entityType: 'dataset', fields: { origin: ['QA'], owners: ['urn:li:corpuser:x'] } },
          },
        ],
      });
      expect(await urns([fieldIs('origin', 'EQUAL', ['PROD'])])).toEqual([]);
      expect(await urns([fieldIs('origin', 'EQUAL', ['QA'])])).toEqual([URN_A]);
      expect(await urns([fieldIs('owners', 'EXISTS', [])])).toEqual([URN_A]);
      expect(await schemas.query<{ name: string }>(`SELECT name FROM "${schema}".search_names WHERE name = 'owners'`)).toHaveLength(1);
    });

    it('hands the grants of the old table to the new one and to the dictionary: a role that could write fields still can', async () => {
      const role = `mc_v6_${Math.random().toString(16).slice(2, 10)}`;
      await schemas.query(`CREATE ROLE "${role}" NOLOGIN`);
      try {
        const schema = await version6Schema(role);
        const owner = schemas.adapter({ schema });
        await owner.open();
        await owner.close();
        const privileges = await schemas.query<{ table_name: string; privilege_type: string }>(
          `SELECT table_name, privilege_type FROM information_schema.role_table_grants
           WHERE grantee = $1 AND table_schema = $2 AND table_name IN ('search_fields', 'search_names') ORDER BY 1, 2`,
          [role, schema],
        );
        for (const table of ['search_fields', 'search_names'])
          expect(privileges.filter((p) => p.table_name === table).map((p) => p.privilege_type)).toEqual([
            'DELETE',
            'INSERT',
            'SELECT',
            'UPDATE',
          ]);
        const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c role=${role}` });
        try {
          const adapter = createPostgresAdapter({ pool }, { schema });
          await adapter.open();
          const urn = 'urn:li:chart:(looker,v6_chart)';
          // A new entity type and a new field name: the role adds them to the dictionary.
          await adapter.commit({
            entities: [
              {
                urn,
                entityType: 'chart',
                expectVersion: 0,
                put: [
                  { name: 'info', value: {}, version: 1, created: { time: T0, actor: ACTOR }, lastModified: { time: T0, actor: ACTOR } },
                ],
                searchDocument: { ...doc(urn, 'Gold'), entityType: 'chart', fields: { tool: ['looker'], origin: ['PROD'] } },
              },
            ],
          });
          const found = await adapter.search({ ...search([[fieldIs('tool', 'EQUAL', ['looker'])]]), entityTypes: ['chart'] });
          expect(found.hits.map((h) => h.urn)).toEqual([urn]);
          expect((await adapter.search({ ...search([[fieldIs('origin', 'EQUAL', ['PROD'])]]), entityTypes: [] })).total).toBe(2);
          await adapter.close();
        } finally {
          await pool.end();
        }
      } finally {
        await schemas.query(`DROP OWNED BY "${role}"`);
        await schemas.query(`DROP ROLE "${role}"`);
      }
    });
  });

  describe('storage rules', () => {
    it('keeps the search document on the entity row, a lower-casing only where needed, and drops it with the document', async () => {
      const schema = schemas.freshSchema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      const write = (urn: string, expectVersion: number, searchDocument: SearchDocument | null) => ({
        urn,
        entityType: 'dataset',
        expectVersion,
        put: [
          {
            name: 'info',
            value: { n: expectVersion },
            version: expectVersion + 1,
            created: { time: T0, actor: ACTOR },
            lastModified: { time: T0, actor: ACTOR },
          },
        ],
        searchDocument,
      });
      await adapter.commit({ entities: [write(OLD_URN, 0, doc(OLD_URN, 'Gold')), write(UMLAUT_URN, 0, doc(UMLAUT_URN, 'Gold'))] });
      const stored = await schemas.query<{ urn: string; removed: boolean | null; urn_lower: string | null }>(
        `SELECT urn, removed, urn_lower FROM "${schema}".entities ORDER BY urn`,
      );
      expect(stored).toEqual([
        { urn: OLD_URN, removed: false, urn_lower: null },
        { urn: UMLAUT_URN, removed: false, urn_lower: UMLAUT_URN.toLowerCase() },
      ]);
      for (const urn of [OLD_URN, UMLAUT_URN]) {
        expect((await adapter.search(search([[iequalUrn(urn.toUpperCase())]]))).hits.map((h) => h.urn)).toEqual([urn]);
      }
      expect((await adapter.search(search([[tierIs('Gold')]]))).total).toBe(2);

      // A document dropped (null) leaves the entity without one: no longer searched, still read.
      await adapter.commit({ entities: [write(UMLAUT_URN, 1, null)] });
      expect(await schemas.query(`SELECT urn, removed FROM "${schema}".entities WHERE urn = $1`, [UMLAUT_URN])).toEqual([
        { urn: UMLAUT_URN, removed: null },
      ]);
      expect((await adapter.search(search([]))).hits.map((h) => h.urn)).toEqual([OLD_URN]);
      expect((await adapter.search(search([[tierIs('Gold')]]))).total).toBe(1);
      expect((await adapter.readEntities([UMLAUT_URN]))[0]?.version).toBe(2);
      // And written again: back in the results.
      await adapter.commit({ entities: [write(UMLAUT_URN, 2, { ...doc(UMLAUT_URN, 'Gold'), removed: true })] });
      expect((await adapter.search({ ...search([]), includeRemoved: true })).hits.map((h) => h.urn)).toEqual([OLD_URN, UMLAUT_URN]);
      expect((await adapter.search(search([]))).hits.map((h) => h.urn)).toEqual([OLD_URN]);
    });

    it('registers search names once under concurrent writers, and a fresh adapter spends no dictionary id on names that exist', async () => {
      const schema = schemas.freshSchema();
      const writers = [schemas.adapter({ schema }), schemas.adapter({ schema })];
      adapters.push(...writers);
      for (const w of writers) await w.open();
      const names = Array.from({ length: 12 }, (_, i) => `field${i}`);
      const entity = (urn: string, entityType: string) => ({
        urn,
        entityType,
        expectVersion: 0,
        put: [{ name: 'info', value: {}, version: 1, created: { time: T0, actor: ACTOR }, lastModified: { time: T0, actor: ACTOR } }],
        searchDocument: { ...doc(urn, 'Gold'), entityType, fields: Object.fromEntries(names.map((n) => [n, [`${n}-value`]])) },
      });
      const urnOf = (w: number, i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,names_${w}_${i},PROD)`;
      // Both writers meet every new name (and the new type) at the same moment, several times over.
      await Promise.all(
        writers.map(async (writer, w) => {
          for (let i = 0; i < 4; i++) await writer.commit({ entities: [entity(urnOf(w, i), 'dashboard')] });
        }),
      );
      const dictionary = () => schemas.query<{ id: number; name: string }>(`SELECT id, name FROM "${schema}".search_names ORDER BY name`);
      const before = await dictionary();
      expect(before.map((r) => r.name)).toEqual(['dashboard', ...names].sort());
      expect(new Set(before.map((r) => r.id)).size).toBe(before.length);
      for (const name of names) {
        const found = await writers[0]!.search({
          ...search([[{ field: { kind: 'field', name }, operator: 'EQUAL', values: [`${name}-value`], negated: false }]]),
          entityTypes: ['dashboard'],
        });
        expect(found.total).toBe(8);
      }
      // A new adapter (an empty cache) writing the same names reads their ids: the dictionary's sequence is not spent.
      const lastId = async () =>
        (
          await schemas.query<{ last: number }>(
            `SELECT last_value::int AS last FROM pg_sequences WHERE schemaname = $1 AND sequencename = 'search_names_id_seq'`,
            [schema],
          )
        )[0]!.last;
      const spent = await lastId();
      const fresh = schemas.adapter({ schema });
      adapters.push(fresh);
      await fresh.open();
      await fresh.commit({ entities: [entity(urnOf(9, 0), 'dashboard')] });
      expect(await dictionary()).toEqual(before);
      expect(await lastId()).toBe(spent);
    });

    it("marks a value row sole only when it is its document's one value under the key, and counts ranges by document", async () => {
      const schema = schemas.freshSchema();
      const adapter = schemas.adapter({ schema });
      adapters.push(adapter);
      await adapter.open();
      const withTiers = (urn: string, values: string[]) => ({
        urn,
        entityType: 'dataset',
        expectVersion: 0,
        put: [{ name: 'info', value: {}, version: 1, created: { time: T0, actor: ACTOR }, lastModified: { time: T0, actor: ACTOR } }],
        searchDocument: { ...doc(urn, ''), properties: [{ propertyUrn: PROPERTY, definitionKey: KEY, values }] },
      });
      await adapter.commit({ entities: [withTiers(OLD_URN, ['b', 'c', 'd', 'c']), withTiers(UMLAUT_URN, ['c'])] });
      expect(
        await schemas.query(
          `SELECT e.urn, v.str_value, v.first_of_key, v.sole_of_key FROM "${schema}".property_values v
           JOIN "${schema}".entities e ON e.id = v.entity_id ORDER BY e.urn, v.str_value`,
        ),
      ).toEqual([
        { urn: OLD_URN, str_value: 'b', first_of_key: true, sole_of_key: false },
        { urn: OLD_URN, str_value: 'c', first_of_key: false, sole_of_key: false },
        { urn: OLD_URN, str_value: 'd', first_of_key: false, sole_of_key: false },
        { urn: UMLAUT_URN, str_value: 'c', first_of_key: true, sole_of_key: true },
      ]);
      // Three rows of one document and one of the other match: two documents.
      expect((await adapter.search(search([[tierAbove('a')]]))).total).toBe(2);
      expect((await adapter.search(search([[tierAbove('c')]]))).total).toBe(1);
      expect((await adapter.search(search([[tierSet]]))).total).toBe(2);
    });
  });
});
