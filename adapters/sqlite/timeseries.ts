import type {
  JsonObject,
  TimeseriesIndexRef,
  TimeseriesIndexSize,
  TimeseriesPage,
  TimeseriesQuery,
  TimeseriesRow,
} from '../../src/adapter/types';
import { CatalogError } from '../../src/core/errors';
import { ident, params, type SqliteHandle } from './statements';

/** Each timeseries index is its own table, named like the index, with its own two indexes. */
function createIndexTable(h: SqliteHandle, table: string): void {
  const t = ident(table);
  h.db.exec(`
    CREATE TABLE IF NOT EXISTS ${t} (id INTEGER PRIMARY KEY, urn TEXT NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS ${ident(`${table}_by_urn`)} ON ${t} (urn, ts);
    CREATE INDEX IF NOT EXISTS ${ident(`${table}_by_ts`)} ON ${t} (ts);
  `);
}

function exists(h: SqliteHandle, index: TimeseriesIndexRef): boolean {
  return h.stmt('SELECT 1 FROM timeseries_indexes WHERE index_name = ?').get(index.indexName) !== undefined;
}

export function appendTimeseries(h: SqliteHandle, index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): void {
  h.db
    .transaction(() => {
      if (!exists(h, index)) {
        createIndexTable(h, index.indexName);
        h.stmt('INSERT INTO timeseries_indexes (index_name, entity_type, aspect) VALUES (?, ?, ?)').run(index.indexName, index.entityType, index.aspect);
      }
      const insert = h.stmt(`INSERT INTO ${ident(index.indexName)} (urn, ts, value) VALUES (?, ?, ?)`);
      for (const row of rows) insert.run(row.urn, row.timestampMillis, JSON.stringify(row.value));
    })
    .immediate();
}

interface Cursor {
  ts: number;
  id: number;
}

function decodeCursor(cursor: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    if (Number.isInteger(parsed.ts) && Number.isInteger(parsed.id)) return parsed;
  } catch {
    // fall through
  }
  throw new CatalogError('INVALID_INPUT', `malformed timeseries cursor "${cursor}"`, { details: [{ path: 'scrollId', message: 'malformed cursor' }] });
}

export function queryTimeseries(h: SqliteHandle, query: TimeseriesQuery): TimeseriesPage {
  if (!exists(h, query)) return { rows: [] };
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const rows = h
    .stmt(
      `SELECT id, urn, ts, value FROM ${ident(query.indexName)}
       WHERE (@p1 IS NULL OR urn = @p1) AND (@p2 IS NULL OR ts >= @p2) AND (@p3 IS NULL OR ts <= @p3)
         AND (@p4 IS NULL OR ts < @p4 OR (ts = @p4 AND id < @p5))
       ORDER BY ts DESC, id DESC LIMIT @p6`,
    )
    .all(
      params(
        query.urn ?? null,
        query.startTimeMillis ?? null,
        query.endTimeMillis ?? null,
        cursor?.ts ?? null,
        cursor?.id ?? null,
        query.limit + 1,
      ),
    ) as Array<{ id: number; urn: string; ts: number; value: string }>;
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map((r) => ({ urn: r.urn, timestampMillis: r.ts, value: JSON.parse(r.value) as JsonObject })),
    ...(rows.length > query.limit && last ? { nextCursor: Buffer.from(JSON.stringify({ ts: last.ts, id: last.id })).toString('base64url') } : {}),
  };
}

/** Bytes measured from the file's pages (dbstat): the table and its indexes. */
export function timeseriesIndexSizes(h: SqliteHandle): TimeseriesIndexSize[] {
  const indexes = h.stmt('SELECT index_name, entity_type, aspect FROM timeseries_indexes ORDER BY index_name').all() as Array<{
    index_name: string;
    entity_type: string;
    aspect: string;
  }>;
  return indexes.map((i) => {
    const names = [i.index_name, `${i.index_name}_by_urn`, `${i.index_name}_by_ts`];
    const size = h
      .stmt("SELECT COALESCE(SUM(pgsize), 0) AS bytes FROM dbstat('main', 1) WHERE name IN (?, ?, ?)")
      .get(...names) as { bytes: number };
    const count = h.stmt(`SELECT COUNT(*) AS n FROM ${ident(i.index_name)}`).get() as { n: number };
    return { indexName: i.index_name, entityType: i.entity_type, aspect: i.aspect, bytes: size.bytes, rows: count.n };
  });
}

export function countTimeseries(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number): { total: number; matching: number } {
  if (!exists(h, index)) return { total: 0, matching: 0 };
  const t = ident(index.indexName);
  const total = (h.stmt(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
  const matching = (h.stmt(`SELECT COUNT(*) AS n FROM ${t} WHERE ts <= ?`).get(endTimeMillis) as { n: number }).n;
  return { total, matching };
}

export function deleteTimeseriesBatch(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number, limit: number): number {
  if (!exists(h, index)) return 0;
  const t = ident(index.indexName);
  return h.db
    .transaction(() => h.stmt(`DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE ts <= ? ORDER BY ts, id LIMIT ?)`).run(endTimeMillis, limit).changes)
    .immediate();
}

/** Copy the kept rows to a fresh table, swap, drop the old one, then give the freed pages back to the file system. */
export function rebuildTimeseriesIndex(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number): number {
  if (!exists(h, index)) return 0;
  const table = index.indexName;
  const fresh = `${table}_rebuild`;
  const removed = h.db
    .transaction(() => {
      const before = (h.stmt(`SELECT COUNT(*) AS n FROM ${ident(table)}`).get() as { n: number }).n;
      h.db.exec(`DROP TABLE IF EXISTS ${ident(fresh)}`);
      h.db.exec(`CREATE TABLE ${ident(fresh)} (id INTEGER PRIMARY KEY, urn TEXT NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL)`);
      h.db.prepare(`INSERT INTO ${ident(fresh)} (id, urn, ts, value) SELECT id, urn, ts, value FROM ${ident(table)} WHERE ts > ?`).run(endTimeMillis);
      const kept = (h.db.prepare(`SELECT COUNT(*) AS n FROM ${ident(fresh)}`).get() as { n: number }).n;
      h.db.exec(`DROP TABLE ${ident(table)}`);
      h.db.exec(`ALTER TABLE ${ident(fresh)} RENAME TO ${ident(table)}`);
      createIndexTable(h, table);
      return before - kept;
    })
    .immediate();
  // Statements prepared against the dropped table are stale; the cache re-prepares by SQL text,
  // and better-sqlite3 re-prepares statements whose schema changed, so nothing else is needed.
  h.db.pragma('incremental_vacuum');
  return removed;
}

/** Inside the caller's transaction: the rows of a deleted entity. */
export function deleteEntityTimeseries(h: SqliteHandle, entityType: string, urn: string): void {
  const indexes = h.stmt('SELECT index_name FROM timeseries_indexes WHERE entity_type = ?').all(entityType) as Array<{ index_name: string }>;
  for (const i of indexes) h.stmt(`DELETE FROM ${ident(i.index_name)} WHERE urn = ?`).run(urn);
}
