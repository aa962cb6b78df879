import { hostname } from 'node:os';
import type { Database, Statement } from 'better-sqlite3';
import type { EntityWrite, InitialLoad, JsonObject, StoredAspect } from '../../src/adapter/types';
import { isProcessAlive } from '../../src/adapter/process';
import { CatalogError } from '../../src/errors';
import { ASPECT_ROW_COLUMNS, aspectColumns, aspectRowValues } from './aspects';
import type { Dictionary } from './dictionary';
import { dictionaryOf } from './dictionary';
import { internMetadata, pack, type PackContext } from './packing';
import { forgetKeyIds, prepareSearchDocument, typeKey } from './search-store';
import { terms } from './search-text-queue';
import { ident, type SqliteHandle } from './statements';
import { WalkedJson } from './walked-json';
import { recountValues } from './value-counts';

/**
 * The initial load on SQLite (src/adapter/initial-load.ts; docs/deploy.md): the restore of an export
 * into an empty file, as SQLite's own importers load one. `begin` drops the secondary indexes of the
 * entity, aspect and value tables; each `loadEntities` call is one transaction that appends entity,
 * aspect and value rows in entity order (several rows per INSERT, each distinct system metadata packed
 * once) and parks the full text in search_text_pending; `buildSearch` creates the indexes again over
 * the data (one sorted pass each), fills the FTS5 index in one pass (written per load transaction
 * instead, FTS5 writes a segment per commit and merges them: measured slower) and computes the key
 * statistics and per-value counts once, in one transaction.
 *
 * All or nothing: `begin` writes a marker table (the loading process, the indexes it dropped) in the
 * transaction that drops them, and `complete` drops it. A file opened with the marker present belongs
 * to a load that did not complete: when the loading process is gone (same host, no such process) the
 * open rolls the load back (every row the load may have written is deleted, the indexes are created
 * again: the catalog is empty, as before `begin`), and a load of a process still running is refused
 * with UNAVAILABLE. A failed call and `close()` during a load roll it back too.
 */

const MARKER = 'mc_initial_load';
/** The tables whose secondary indexes wait for the end of the load. */
const DEFERRED = ['entities', 'aspects', 'search_values'];
/** All three flags of a value row (search-store.ts): stored as the flags a row lacks. */
const ALL_FLAGS = 7;
/** Pending full-text rows read at once while the FTS5 index is filled. */
const TEXT_PAGE = 5_000;

/**
 * Rows one multi-row INSERT writes: fewer statement runs (a run costs about as much as the row it writes).
 * 256 against 50: 50,000 datasets loaded 12% faster (five runs alternated, each faster). A power of two, so
 * that the rows left at the end of a call go in statements of 128, 64, … rows: at most nine texts per table.
 */
const ROWS_PER_INSERT = 256;
const ASPECT_COLUMNS = ['entity_id', ...ASPECT_ROW_COLUMNS.split(', ')];
const VALUE_COLUMNS = ['key_id', 'entity_id', 'value', 'removed', 'entity_type', 'flags_off'];

/** Rows of one table written ROWS_PER_INSERT at a time, in the order they come (inside the caller's transaction). */
class RowBatch {
  /**
   * The parameters of one full statement, filled in place: an array emptied after each statement (`length = 0`)
   * gives up its storage and grows it again, step by step, for the next one (garbage for the young generation;
   * pushing 1,536 values that way took 2.3-3.5 times as long as assigning them in place, in a micro-benchmark).
   */
  private readonly values: unknown[];
  private filled = 0;
  private readonly row: string;
  /** The statement per number of rows (ROWS_PER_INSERT and the powers of two below it). */
  private readonly statements = new Map<number, Statement>();

  constructor(
    private readonly h: SqliteHandle,
    private readonly table: string,
    private readonly columns: readonly string[],
  ) {
    this.row = `(${columns.map(() => '?').join(', ')})`;
    this.values = new Array<unknown>(ROWS_PER_INSERT * columns.length).fill(null);
  }

  private statement(rows: number): Statement {
    let statement = this.statements.get(rows);
    if (statement === undefined) {
      const sql = `INSERT INTO ${this.table} (${this.columns.join(', ')}) VALUES ${Array(rows).fill(this.row).join(', ')}`;
      this.statements.set(rows, (statement = this.h.stmt(sql)));
    }
    return statement;
  }

  /** Appends one row: its first column's value, then the others'. */
  add(first: unknown, rest: readonly unknown[]): void {
    this.put(first);
    for (let i = 0; i < rest.length; i++) this.put(rest[i]);
  }

  /** Appends rows given one after the other, the table's columns each. */
  addRows(flat: readonly unknown[]): void {
    for (let i = 0; i < flat.length; i++) this.put(flat[i]);
  }

  private put(value: unknown): void {
    this.values[this.filled++] = value;
    if (this.filled === this.values.length) {
      this.statement(ROWS_PER_INSERT).run(this.values);
      this.filled = 0;
    }
  }

  /** Writes the rows left, in statements of the powers of two their number is the sum of. */
  flush(): void {
    let rows = this.filled / this.columns.length;
    let at = 0;
    for (let size = ROWS_PER_INSERT / 2; rows > 0; size /= 2) {
      if (rows < size) continue;
      const end = at + size * this.columns.length;
      this.statement(size).run(this.values.slice(at, end));
      at = end;
      rows -= size;
    }
    this.filled = 0;
  }
}

/** Documents remembered per set of stamps: a few definition-key sets per call; past it the oldest goes. */
const METADATA_PER_STAMPS = 8;

/**
 * Packs system metadata, each distinct document once per call: an export's entities carry the same
 * definition keys and stamps entity after entity (a bulk write stamps them alike). A document is looked
 * up by its row's stamps, which the packed form refers to, then compared with those packed under them
 * (WalkedJson): writing it out as a key cost about 10 µs per entity, more than packing its aspect's
 * value. Made per call and dropped with it.
 */
class MetadataPacker {
  private readonly packed = new Map<string, Array<{ walked: WalkedJson; text: string }>>();

  constructor(private readonly d: Dictionary) {}

  pack(metadata: JsonObject, ctx: Required<PackContext>): string {
    const stamps = `${ctx.created.time}\u0000${ctx.created.actor}\u0000${ctx.modified.time}\u0000${ctx.modified.actor}`;
    let known = this.packed.get(stamps);
    if (known === undefined) this.packed.set(stamps, (known = []));
    for (const entry of known) if (entry.walked.matches(metadata)) return entry.text;
    const text = pack(metadata, ctx, this.d, internMetadata);
    if (known.length === METADATA_PER_STAMPS) known.shift();
    known.push({ walked: new WalkedJson(metadata), text });
    return text;
  }
}

/** An aspect's row as aspects.ts writes it (`aspectColumns`), in INSERT order, its system metadata packed by `metadata`. */
function aspectRow(d: Dictionary, a: StoredAspect, metadata: MetadataPacker): unknown[] {
  return aspectRowValues(aspectColumns(d, a, (m, ctx) => metadata.pack(m, ctx)));
}

/** What a load wrote under one key (search_keys' statistics). */
interface KeyStatistics {
  entities: number;
  /** Documents with more than one value under the key. */
  multi: number;
  /** The entity type of every document, or '*' when they have several. */
  type: string;
}

/** Adds `add` (one document's: a count of 1) to the statistics of `keyId`. */
function addKeyStatistics(stats: Map<number, KeyStatistics>, keyId: number, add: Readonly<KeyStatistics>): void {
  const known = stats.get(keyId);
  if (known === undefined) stats.set(keyId, { ...add });
  else {
    known.entities += add.entities;
    known.multi += add.multi;
    if (known.type !== add.type) known.type = '*';
  }
}

interface Marker {
  owner: string;
  phase: 'entities' | 'search';
  indexes: Array<{ name: string; sql: string }>;
}

function readMarker(db: Database): Marker | undefined {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(MARKER);
  if (!exists) return undefined;
  const row = db.prepare(`SELECT owner, phase, indexes FROM ${MARKER}`).get() as
    { owner: string; phase: Marker['phase']; indexes: string } | undefined;
  if (!row) return undefined;
  return { owner: row.owner, phase: row.phase, indexes: JSON.parse(row.indexes) as Marker['indexes'] };
}

/** Inside a transaction: every row a load may have written goes, the dropped indexes come back, the marker goes. */
function rollBack(db: Database, marker: Marker | undefined): void {
  db.exec(`
    DELETE FROM entities;
    DELETE FROM aspects;
    DELETE FROM search_values;
    DELETE FROM search_text_pending;
    INSERT INTO search_text (search_text) VALUES ('delete-all');
    DELETE FROM search_value_counts;
    UPDATE search_keys SET entities = 0, multi = 0, entity_type = NULL, value_counts = 0, recheck_at = 0;
    DELETE FROM change_events;
    DELETE FROM aspect_versions;
    DELETE FROM jobs WHERE dedupe_key LIKE 'import:%';
  `);
  // Timeseries tables were empty when the load began: what they hold now is the load's.
  for (const name of db.prepare('SELECT index_name FROM timeseries_indexes').pluck().all() as string[]) {
    db.exec(`DELETE FROM ${ident(name)}`);
  }
  db.exec('UPDATE timeseries_indexes SET pages = NULL, row_count = NULL');
  for (const index of marker?.indexes ?? []) {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(index.name)) db.exec(index.sql);
  }
  db.exec(`DROP TABLE IF EXISTS ${MARKER}`);
}

/**
 * At open, before anything else reads the file: a load that did not complete is rolled back when its
 * process is gone; one still running (or of another host) is refused.
 */
export function recoverInitialLoad(db: Database): void {
  const marker = readMarker(db);
  if (!marker) return;
  const [host, pid] = marker.owner.split(':');
  if (host === hostname() && Number(pid) !== process.pid && !isProcessAlive(Number(pid))) {
    db.transaction(() => rollBack(db, marker)).immediate();
    return;
  }
  throw new CatalogError(
    'UNAVAILABLE',
    `the database is being loaded by an initial load (process ${marker.owner.split(':').slice(0, 2).join(':')}); open it when the load has ended`,
  );
}

/** The initial load of one adapter's connection. */
export function createSqliteInitialLoad(
  handle: () => SqliteHandle,
  /** The adapter's `synchronous` setting, restored for the transaction that completes the load. */
  synchronous: 'FULL' | 'NORMAL',
  /** Called once the load has completed or been rolled back: the connection's steady settings again (the WAL synced off the event loop). */
  steady: () => void = () => undefined,
): InitialLoad & {
  /**
   * Whether a commit must wait: this adapter is loading entities, or another connection's load is in
   * progress (its marker is in the file; the schema version says when to look again).
   */
  blocksCommits(): boolean;
  /** At close: a load not completed is rolled back. */
  closing(): void;
} {
  let owner: string | undefined;
  let lastUrn = '';
  let building = false;
  /** Per key, what the committed load calls wrote under it: its statistics without reading the rows again. */
  let keyStats = new Map<number, KeyStatistics>();
  /** Whether another connection's load was in progress when the schema had version `seenSchema`. */
  let seenSchema = -1;
  let othersLoad = false;

  function write<T>(fn: (h: SqliteHandle) => T): T {
    const h = handle();
    const dictionary = dictionaryOf(h);
    let result: T;
    try {
      result = h.db.transaction(() => fn(h)).immediate();
    } catch (error) {
      dictionary.rolledBack();
      forgetKeyIds(h);
      throw error;
    } finally {
      // Cached statistics and definitions follow this connection's commits.
      h.commits++;
    }
    dictionary.committed();
    return result;
  }

  function marker(h: SqliteHandle): Marker {
    const found = readMarker(h.db);
    if (!found || found.owner !== owner) throw new Error('internal: the initial load lost its marker');
    return found;
  }

  /**
   * While the load's rows are written nothing of them needs to survive a power loss on its own (the
   * marker, committed with the adapter's setting, rolls them all back): WAL commits are not synced one
   * by one (`synchronous = NORMAL`: never a corrupt file, at most the last commits lost). The
   * transaction that completes or rolls back the load is synced as the adapter says.
   */
  function syncEachCommit(on: boolean): void {
    handle().db.pragma(`synchronous = ${on ? synchronous : 'NORMAL'}`);
  }

  function abandonNow(): void {
    if (owner === undefined) return;
    syncEachCommit(true);
    write((h) => rollBack(h.db, readMarker(h.db)));
    steady();
    ownedBy(undefined);
  }

  /** A load of `who` starts with nothing written (undefined: no load of this connection). */
  function ownedBy(who: string | undefined): void {
    owner = who;
    lastUrn = '';
    building = false;
    keyStats = new Map();
  }

  return {
    blocksCommits() {
      if (owner !== undefined) return !building;
      const h = handle();
      // A cached statement: `pragma()` would prepare one per commit.
      const version = h.stmt('PRAGMA schema_version').pluck().get() as number;
      if (version !== seenSchema) {
        seenSchema = version;
        othersLoad = readMarker(h.db) !== undefined;
      }
      return othersLoad;
    },
    async begin() {
      if (owner !== undefined) return;
      const me = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
      write((h) => {
        const db = h.db;
        if (readMarker(db)) throw new CatalogError('UNAVAILABLE', 'another initial load of this database is in progress');
        const holds = (sql: string): boolean => db.prepare(sql).get() !== undefined;
        let stored =
          holds('SELECT 1 FROM entities LIMIT 1') ||
          holds('SELECT 1 FROM change_events LIMIT 1') ||
          holds('SELECT 1 FROM aspect_versions LIMIT 1');
        for (const name of db.prepare('SELECT index_name FROM timeseries_indexes').pluck().all() as string[])
          stored ||= holds(`SELECT 1 FROM ${ident(name)} LIMIT 1`);
        if (stored)
          throw new CatalogError(
            'CONFLICT',
            'an initial load needs an empty catalog: this one holds entities, change events or timeseries rows',
          );
        const indexes = db
          .prepare(
            `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${DEFERRED.map(() => '?').join(', ')})`,
          )
          .all(...DEFERRED) as Marker['indexes'];
        db.exec(`CREATE TABLE ${MARKER} (owner TEXT NOT NULL, phase TEXT NOT NULL, indexes TEXT NOT NULL)`);
        db.prepare(`INSERT INTO ${MARKER} (owner, phase, indexes) VALUES (?, 'entities', ?)`).run(me, JSON.stringify(indexes));
        for (const index of indexes) db.exec(`DROP INDEX ${ident(index.name)}`);
      });
      ownedBy(me);
      syncEachCommit(false);
    },
    async loadEntities(writes: readonly EntityWrite[]) {
      if (owner === undefined) throw new Error('internal: loadEntities outside an initial load');
      if (writes.length === 0) return;
      // This call's statistics, added to the load's once its transaction has committed.
      const callStats = new Map<number, KeyStatistics>();
      const last = write((h) => {
        if (marker(h).phase !== 'entities') throw new Error('internal: entities loaded after the search structures were built');
        const d = dictionaryOf(h);
        const insertEntity = h.stmt('INSERT INTO entities (urn, entity_type, version, removed, key_ids) VALUES (?, ?, 1, ?, ?)');
        const aspects = new RowBatch(h, 'aspects', ASPECT_COLUMNS);
        const values = new RowBatch(h, 'search_values', VALUE_COLUMNS);
        const insertText = h.stmt(
          'INSERT INTO search_text_pending (entity_id, name, description, urn_key, deleted) VALUES (?, ?, ?, ?, 0)',
        );
        const metadata = new MetadataPacker(d);
        // The call's value rows per key, written key after key: each key's rows then go one after the other
        // into its range of the table (entity ids only grow) instead of ten places in turn, entity by entity.
        // 465,000 rows (50,000 datasets): 540-610 against 835-1,030 ms of inserts, three runs each.
        const byKey = new Map<number, unknown[]>();
        let previous = lastUrn;
        for (const w of writes) {
          if (!(w.urn > previous)) {
            throw new CatalogError(
              'INVALID_INPUT',
              `an initial load takes entities in URN order, each once (as an export writes them): ${w.urn} comes after ${previous}`,
            );
          }
          previous = w.urn;
          const doc = w.searchDocument ?? undefined;
          const prepared = doc ? prepareSearchDocument(h, doc) : undefined;
          const id = Number(insertEntity.run(w.urn, w.entityType, prepared?.removed ?? null, prepared?.keyIds ?? '').lastInsertRowid);
          for (const a of w.put ?? []) aspects.add(id, aspectRow(d, a, metadata));
          if (!doc || !prepared) continue;
          const type = prepared.values.size ? typeKey(h, doc.entityType) : '';
          const document: KeyStatistics = { entities: 1, multi: 0, type: doc.entityType };
          for (const [keyId, flagged] of prepared.values) {
            let rows = byKey.get(keyId);
            if (rows === undefined) byKey.set(keyId, (rows = []));
            for (const [value, flags] of flagged) rows.push(keyId, id, value, prepared.removed, type, ALL_FLAGS ^ flags);
            document.multi = flagged.length > 1 ? 1 : 0;
            addKeyStatistics(callStats, keyId, document);
          }
          insertText.run(id, doc.text.name ?? '', doc.text.description ?? '', doc.text.urnKey);
        }
        aspects.flush();
        for (const keyId of [...byKey.keys()].sort((a, b) => a - b)) values.addRows(byKey.get(keyId)!);
        values.flush();
        return previous;
      });
      lastUrn = last;
      for (const [keyId, stats] of callStats) addKeyStatistics(keyStats, keyId, stats);
    },
    async buildSearch() {
      if (owner === undefined) throw new Error('internal: buildSearch outside an initial load');
      write((h) => {
        const found = marker(h);
        if (found.phase === 'search') return;
        const db = h.db;
        // The indexes over the data, each built in one sorted pass.
        for (const index of found.indexes) db.exec(index.sql);
        // Full text in one pass, in entity order.
        const insert = h.stmt('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)');
        // A page at a time (a statement cannot write while another one iterates on the connection).
        const page = h
          .stmt('SELECT entity_id, name, description, urn_key FROM search_text_pending WHERE entity_id > ? ORDER BY entity_id LIMIT ?')
          .raw(true);
        for (let after = 0; ;) {
          const rows = page.all(after, TEXT_PAGE) as Array<[number, string | null, string | null, string | null]>;
          for (const row of rows) insert.run(row[0], terms(row[1]), terms(row[2]), terms(row[3]));
          if (rows.length < TEXT_PAGE) break;
          after = rows[rows.length - 1]![0];
        }
        db.exec('DELETE FROM search_text_pending');
        // Key statistics, counted as the rows were written: documents, documents with several values, their entity type.
        const setStatistics = h.stmt('UPDATE search_keys SET entities = ?, multi = ?, entity_type = ? WHERE id = ?');
        for (const [keyId, stats] of keyStats) {
          setStatistics.run(stats.entities, stats.multi, stats.type, keyId);
          recountValues(h, keyId, stats.entities);
        }
        // Planner statistics for the new tables (approximate: analysis_limit is set at open, connection.ts).
        db.exec('ANALYZE');
        db.prepare(`UPDATE ${MARKER} SET phase = 'search'`).run();
      });
      building = true;
    },
    async complete() {
      if (owner === undefined) return;
      syncEachCommit(true);
      write((h) => {
        if (marker(h).phase !== 'search') throw new Error('internal: an initial load completed before its search structures were built');
        h.db.exec(`DROP TABLE ${MARKER}`);
      });
      steady();
      ownedBy(undefined);
      // The parked full-text rows left free pages: the file gives them back (auto_vacuum is incremental).
      handle().db.pragma('incremental_vacuum');
    },
    async abandon() {
      abandonNow();
    },
    closing() {
      abandonNow();
    },
  };
}
