import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dictionaryOf } from '../../../adapters/sqlite/dictionary';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { pack, unpack } from '../../../adapters/sqlite/packing';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import { createHandle } from '../../../adapters/sqlite/statements';
import { createCatalog, type Catalog } from '../../../src';

const directory = mkdtempSync(join(tmpdir(), 'metacatalog-schema-9-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const ADMIN = 'urn:li:corpuser:admin';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,schema9.t${i},PROD)`;

function open(filename: string, adapter = createSqliteAdapter({ filename })): Catalog {
  let now = 1_700_000_000_000;
  return createCatalog({ adapter, superUsers: [ADMIN], clock: () => (now += 1000), jobs: { background: false } });
}

interface Ref {
  id: number;
  entity_id: number;
  name_id: number;
  version: number;
  created_time: number;
  actor_id: number;
}

/**
 * Turns the file into what schema version 8 wrote: an event whose aspect row was replaced holds a packed
 * copy of its value (as version 8 made it when the row was replaced), taken here from the previous value
 * of the event that replaced the row. Returns how many events got a copy.
 */
function downgradeToVersion8(filename: string): number {
  const db = new Database(filename);
  try {
    const h = createHandle(db);
    const d = dictionaryOf(h);
    let copied = 0;
    db.transaction(() => {
      const refs = db
        .prepare(
          `SELECT c.id, c.entity_id, c.name_id, c.version, c.created_time, c.actor_id FROM change_events c
           WHERE c.flags = 1 AND NOT EXISTS (SELECT 1 FROM aspects a WHERE a.entity_id = c.entity_id AND a.name_id = c.name_id AND a.version = c.version)`,
        )
        .all() as Ref[];
      const successor = db.prepare(
        `SELECT previous_aspect, created_time, actor_id FROM change_events
         WHERE entity_id = ? AND name_id = ? AND version = ? AND id > ? ORDER BY id LIMIT 1`,
      );
      const update = db.prepare('UPDATE change_events SET aspect = ?, flags = 0 WHERE id = ?');
      for (const ref of refs) {
        const next = successor.get(ref.entity_id, ref.name_id, ref.version + 1, ref.id) as {
          previous_aspect: string;
          created_time: number;
          actor_id: number;
        };
        const value = unpack(next.previous_aspect, { modified: { time: next.created_time, actor: d.textOf(next.actor_id) } }, d);
        update.run(pack(value, { modified: { time: ref.created_time, actor: d.textOf(ref.actor_id) } }, d), ref.id);
        copied++;
      }
      db.pragma('user_version = 8');
    })();
    return copied;
  } finally {
    db.close();
  }
}

function raw<T>(filename: string, read: (db: Database.Database) => T): T {
  const db = new Database(filename, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

async function everyEvent(catalog: Catalog) {
  const out = [];
  let after: string | undefined;
  for (;;) {
    const page = await catalog.changes.read(ADMIN, { ...(after ? { after } : {}), limit: 1000 });
    out.push(...page.events);
    after = page.next;
    if (page.events.length < 1000) return out;
  }
}

/** Three values of each of three entities' descriptions, a status, and one aspect deleted. */
async function writeSome(catalog: Catalog, round: string): Promise<void> {
  for (const description of ['one', 'two', 'three'])
    for (let i = 0; i < 3; i++)
      await catalog.entities.upsertAspect(ADMIN, urnOf(i), 'datasetProperties', { name: `t${i}`, description: `${round} ${description}` });
  await catalog.entities.upsertAspect(ADMIN, urnOf(0), 'status', { removed: round === 'b' });
  await catalog.entities.deleteAspect(ADMIN, urnOf(1), 'datasetProperties');
}

describe('SQLite schema version 9: a replaced value is stored once', () => {
  it('opens a version 8 file (events holding copies): the same feed and history, and writes after it', async () => {
    const filename = join(directory, 'old-layout.db');
    const catalog = open(filename);
    let before;
    let history;
    try {
      await writeSome(catalog, 'a');
      before = await everyEvent(catalog);
      history = await catalog.entities.history(ADMIN, urnOf(0), 'datasetProperties');
    } finally {
      await catalog.close();
    }
    // Four replaced rows whose events now read their values from a successor: version 8 held copies.
    expect(downgradeToVersion8(filename)).toBe(4);
    expect(raw(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(8);

    const reopened = open(filename);
    try {
      expect(raw(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
      expect(await everyEvent(reopened)).toEqual(before);
      expect(await reopened.entities.history(ADMIN, urnOf(0), 'datasetProperties')).toEqual(history);
      // The copies stay; the writes after it store replaced values once (the events of the entity that was
      // deleted hold their values, as before).
      await writeSome(reopened, 'b');
      const events = await everyEvent(reopened);
      expect(events.slice(0, before.length)).toEqual(before);
      const descriptions = events
        .filter((e) => e.aspectName === 'datasetProperties' && e.entityUrn === urnOf(2))
        .map((e) => [e.aspect?.description ?? null, e.previousAspectValue?.description ?? null]);
      expect(descriptions).toEqual([
        ['a one', null],
        ['a two', 'a one'],
        ['a three', 'a two'],
        ['b one', 'a three'],
        ['b two', 'b one'],
        ['b three', 'b two'],
      ]);
      expect(
        raw(filename, (db) =>
          db
            .prepare(
              'SELECT COUNT(*) FROM change_events WHERE flags = 0 AND aspect IS NOT NULL AND change_type = 0 AND entity_id IS NOT NULL',
            )
            .pluck()
            .get(),
        ),
      ).toBe(4);
    } finally {
      await reopened.close();
    }

    // Running the migration again (the version number set back) changes nothing.
    const rows = raw(filename, (db) => db.prepare('SELECT * FROM change_events ORDER BY id').all());
    const db = new Database(filename);
    db.pragma('user_version = 8');
    db.close();
    const again = open(filename);
    try {
      await again.entities.get(ADMIN, urnOf(0));
      expect(raw(filename, (db) => db.pragma('user_version', { simple: true }))).toBe(SCHEMA_VERSION);
      expect(raw(filename, (db) => db.prepare('SELECT * FROM change_events ORDER BY id').all())).toEqual(rows);
    } finally {
      await again.close();
    }
  });

  it('keeps every value through replacements, deletions, entity deletion and retention', async () => {
    const filename = join(directory, 'successors.db');
    const adapter = createSqliteAdapter({ filename });
    const catalog = open(filename, adapter);
    try {
      const urn = urnOf(9);
      for (const description of ['v1', 'v2', 'v3', 'v4'])
        await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'nine', description });
      // Deleted and written again: versions start over at 1, the older events still find their own successors.
      await catalog.entities.upsertAspect(ADMIN, urn, 'status', { removed: false });
      await catalog.entities.deleteAspect(ADMIN, urn, 'datasetProperties');
      for (const description of ['w1', 'w2'])
        await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: 'nine', description });
      const shape = (events: Awaited<ReturnType<typeof everyEvent>>) =>
        events
          .filter((e) => e.aspectName === 'datasetProperties')
          .map((e) => [e.changeType, e.aspect?.description ?? null, e.previousAspectValue?.description ?? null]);
      const expected = [
        ['UPSERT', 'v1', null],
        ['UPSERT', 'v2', 'v1'],
        ['UPSERT', 'v3', 'v2'],
        ['UPSERT', 'v4', 'v3'],
        ['DELETE', null, 'v4'],
        ['UPSERT', 'w1', null],
        ['UPSERT', 'w2', 'w1'],
      ];
      expect(shape(await everyEvent(catalog))).toEqual(expected);
      // Only the deleted row's event got a copy.
      expect(
        raw(filename, (db) => db.prepare('SELECT COUNT(*) FROM change_events WHERE aspect IS NOT NULL AND change_type = 0').pluck().get()),
      ).toBe(1);

      // Retention removes the oldest events: a successor is always newer than the event reading from it.
      expect(await adapter.pruneChanges!({ keepEvents: 6, limit: 1000 })).toEqual({ events: 2, versions: 0 });
      expect(shape(await everyEvent(catalog))).toEqual(expected.slice(2));

      await catalog.entities.delete(ADMIN, urn);
      const after = await everyEvent(catalog);
      expect(shape(after).slice(0, -1)).toEqual(expected.slice(2));
      expect(after.every((e) => e.entityUrn === urn)).toBe(true);
      expect(
        raw(filename, (db) => db.prepare('SELECT COUNT(*) FROM change_events WHERE flags <> 0 OR entity_id IS NOT NULL').pluck().get()),
      ).toBe(0);
    } finally {
      await catalog.close();
    }
  });
});
