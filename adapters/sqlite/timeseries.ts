import { decodeRowCursor, encodeRowCursor } from '../../src/adapter/cursor';
import type {
  JsonObject,
  TimeseriesIndexRef,
  TimeseriesIndexSize,
  TimeseriesPage,
  TimeseriesQuery,
  TimeseriesRow,
} from '../../src/adapter/types';
import { ident, type SqliteHandle } from './statements';

/*
 * Each timeseries index is its own table, named like the index, with two indexes of its own:
 * `<index>_by_urn (urn, ts)` for one entity's rows and `<index>_by_ts (ts)` for time ranges and
 * truncation. `timeseries_indexes` lists them with their size in pages and their row count.
 *
 * Sizes are measured, never estimated: every write transaction that touches one index (append,
 * batch delete) reads the file's b-tree page count before and after its work, inside the same
 * transaction, and adds the difference to that index. Only that index's three b-trees change in
 * such a transaction, so the figure equals what `dbstat` reports for them, without walking them.
 * Where a transaction also changes other b-trees (a rebuild rewrites the schema, an entity delete
 * touches the entity tables), the index is measured with `dbstat` right there, or marked unknown
 * (NULL) and measured with `dbstat` on the next size read.
 */

const NAMES_OF_BTREES = (table: string): [string, string, string] => [table, `${table}_by_urn`, `${table}_by_ts`];

function createIndexTable(h: SqliteHandle, table: string): void {
  const t = ident(table);
  h.db.exec(`
    CREATE TABLE IF NOT EXISTS ${t} (id INTEGER PRIMARY KEY, urn TEXT NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS ${ident(`${table}_by_urn`)} ON ${t} (urn, ts);
    CREATE INDEX IF NOT EXISTS ${ident(`${table}_by_ts`)} ON ${t} (ts);
  `);
}

interface IndexRow {
  index_name: string;
  entity_type: string;
  aspect: string;
  pages: number | null;
  row_count: number | null;
}

function registered(h: SqliteHandle, indexName: string): IndexRow | undefined {
  return h.stmt('SELECT index_name, entity_type, aspect, pages, row_count FROM timeseries_indexes WHERE index_name = ?').get(indexName) as
    IndexRow | undefined;
}

interface FileShape {
  pageCount: number;
  freeCount: number;
  pageSize: number;
  autoVacuum: number;
}

function fileShape(h: SqliteHandle): FileShape {
  return h
    .stmt(
      `SELECT (SELECT page_count FROM pragma_page_count()) AS pageCount,
              (SELECT freelist_count FROM pragma_freelist_count()) AS freeCount,
              (SELECT page_size FROM pragma_page_size()) AS pageSize,
              (SELECT auto_vacuum FROM pragma_auto_vacuum()) AS autoVacuum`,
    )
    .get() as FileShape;
}

/**
 * Pages of the file that belong to some b-tree: all pages, less the free ones, the pointer-map pages
 * (auto-vacuum files keep one every `usable/5 + 1` pages, starting at page 2) and the lock-byte page.
 */
function btreePages(h: SqliteHandle): number {
  const { pageCount, freeCount, pageSize, autoVacuum } = fileShape(h);
  const lockBytePage = Math.floor(0x40000000 / pageSize) + 1;
  let other = pageCount >= lockBytePage ? 1 : 0;
  if (autoVacuum !== 0 && pageCount >= 2) {
    const pagesPerMap = Math.floor(pageSize / 5) + 1;
    other += Math.floor((pageCount - 2) / pagesPerMap) + 1;
  }
  return pageCount - freeCount - other;
}

function pageSize(h: SqliteHandle): number {
  return (h.stmt('SELECT page_size AS n FROM pragma_page_size()').get() as { n: number }).n;
}

/** Pages of the index's table and its two indexes, walked by dbstat (slow on big tables: used only when the tracked figure is unknown). */
function measurePages(h: SqliteHandle, table: string): number {
  const [a, b, c] = NAMES_OF_BTREES(table);
  let pages = 0;
  // One btree per call: dbstat only narrows its walk for `name = ?`, not for `IN (...)`.
  for (const name of [a, b, c]) {
    pages += (h.stmt("SELECT COUNT(*) AS n FROM dbstat('main') WHERE name = ?").get(name) as { n: number }).n;
  }
  return pages;
}

/** Runs `work` inside the caller's transaction and adds the b-tree pages and rows it added (or removed) to the index. */
function tracked(h: SqliteHandle, indexName: string, work: () => number): void {
  const before = btreePages(h);
  const rowDelta = work();
  const after = btreePages(h);
  h.stmt('UPDATE timeseries_indexes SET pages = pages + ?, row_count = row_count + ? WHERE index_name = ?').run(
    after - before,
    rowDelta,
    indexName,
  );
}

export function appendTimeseries(h: SqliteHandle, index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): void {
  h.db.transaction(() => appendRows(h, index, rows)).immediate();
}

/** Inside the caller's transaction (a commit's, or `appendTimeseries`'s own): creates the index on first use. */
export function appendRows(h: SqliteHandle, index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): void {
  if (!registered(h, index.indexName)) {
    createIndexTable(h, index.indexName);
    // A fresh table and its two indexes are one root page each.
    h.stmt('INSERT INTO timeseries_indexes (index_name, entity_type, aspect, pages, row_count) VALUES (?, ?, ?, 3, 0)').run(
      index.indexName,
      index.entityType,
      index.aspect,
    );
  }
  const insert = h.stmt(`INSERT INTO ${ident(index.indexName)} (urn, ts, value) VALUES (?, ?, ?)`);
  tracked(h, index.indexName, () => {
    for (const row of rows) insert.run(row.urn, row.timestampMillis, JSON.stringify(row.value));
    return rows.length;
  });
}

export function queryTimeseries(h: SqliteHandle, query: TimeseriesQuery): TimeseriesPage {
  const cursor = query.cursor === undefined ? undefined : decodeRowCursor(query.cursor);
  if (!registered(h, query.indexName)) return { rows: [] };
  // Only the filters that are present, so that the planner can use (urn, ts) or (ts) for each shape.
  const where: string[] = [];
  const bind: Record<string, number | string> = { limit: query.limit + 1 };
  if (query.urn !== undefined) {
    where.push('urn = @urn');
    bind.urn = query.urn;
  }
  if (query.startTimeMillis !== undefined) {
    where.push('ts >= @start');
    bind.start = query.startTimeMillis;
  }
  if (query.endTimeMillis !== undefined) {
    where.push('ts <= @end');
    bind.end = query.endTimeMillis;
  }
  if (cursor) {
    where.push('(ts < @cursorTs OR (ts = @cursorTs AND id < @cursorId))');
    bind.cursorTs = cursor.ts;
    bind.cursorId = cursor.id;
  }
  const rows = h
    .stmt(
      `SELECT id, urn, ts, value FROM ${ident(query.indexName)}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY ts DESC, id DESC LIMIT @limit`,
    )
    .all(bind) as Array<{ id: number; urn: string; ts: number; value: string }>;
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map((r) => ({ urn: r.urn, timestampMillis: r.ts, value: JSON.parse(r.value) as JsonObject })),
    ...(rows.length > query.limit && last ? { nextCursor: encodeRowCursor(last) } : {}),
  };
}

/**
 * Bytes of each index's table and indexes: the tracked page counts (see above) times the page size.
 * Indexes whose count is unknown are measured with dbstat first, in a write transaction so that no
 * writer slips in between the measurement and its record.
 */
export function timeseriesIndexSizes(h: SqliteHandle): TimeseriesIndexSize[] {
  const list = () =>
    h.stmt('SELECT index_name, entity_type, aspect, pages, row_count FROM timeseries_indexes ORDER BY index_name').all() as IndexRow[];
  let indexes = list();
  if (indexes.some((i) => i.pages === null || i.row_count === null)) {
    h.db
      .transaction(() => {
        for (const i of list()) {
          if (i.pages !== null && i.row_count !== null) continue;
          const pages = measurePages(h, i.index_name);
          const rows = (h.stmt(`SELECT COUNT(*) AS n FROM ${ident(i.index_name)}`).get() as { n: number }).n;
          h.stmt('UPDATE timeseries_indexes SET pages = ?, row_count = ? WHERE index_name = ?').run(pages, rows, i.index_name);
        }
      })
      .immediate();
    indexes = list();
  }
  const size = pageSize(h);
  return indexes.map((i) => ({
    indexName: i.index_name,
    entityType: i.entity_type,
    aspect: i.aspect,
    bytes: (i.pages ?? 0) * size,
    rows: i.row_count ?? 0,
  }));
}

export function countTimeseries(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number): { total: number; matching: number } {
  const known = registered(h, index.indexName);
  if (!known) return { total: 0, matching: 0 };
  const t = ident(index.indexName);
  const total = known.row_count ?? (h.stmt(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
  const matching = (h.stmt(`SELECT COUNT(*) AS n FROM ${t} WHERE ts <= ?`).get(endTimeMillis) as { n: number }).n;
  return { total, matching };
}

/** Oldest rows first, so that a batch interrupted by a crash leaves the remaining ones for the next. */
export function deleteTimeseriesBatch(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number, limit: number): number {
  const t = ident(index.indexName);
  return h.db
    .transaction(() => {
      if (!registered(h, index.indexName)) return 0;
      const remove = h.stmt(`DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE ts <= ? ORDER BY ts, id LIMIT ?)`);
      let removed = 0;
      tracked(h, index.indexName, () => {
        removed = remove.run(endTimeMillis, limit).changes;
        return -removed;
      });
      return removed;
    })
    .immediate();
}

/** Copy the kept rows to a fresh table, swap, drop the old one, then give the freed pages back to the file system. */
export function rebuildTimeseriesIndex(h: SqliteHandle, index: TimeseriesIndexRef, endTimeMillis: number): number {
  const table = index.indexName;
  const fresh = `${table}_rebuild`;
  const removed = h.db
    .transaction(() => {
      const known = registered(h, table);
      if (!known) return 0;
      const before = (h.stmt(`SELECT COUNT(*) AS n FROM ${ident(table)}`).get() as { n: number }).n;
      h.db.exec(`DROP TABLE IF EXISTS ${ident(fresh)}`);
      h.db.exec(`CREATE TABLE ${ident(fresh)} (id INTEGER PRIMARY KEY, urn TEXT NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL)`);
      // In id order: appends into the fresh table's b-tree stay sequential.
      h.db
        .prepare(`INSERT INTO ${ident(fresh)} (id, urn, ts, value) SELECT id, urn, ts, value FROM ${ident(table)} WHERE ts > ? ORDER BY id`)
        .run(endTimeMillis);
      const kept = (h.db.prepare(`SELECT COUNT(*) AS n FROM ${ident(fresh)}`).get() as { n: number }).n;
      h.db.exec(`DROP TABLE ${ident(table)}`);
      h.db.exec(`ALTER TABLE ${ident(fresh)} RENAME TO ${ident(table)}`);
      createIndexTable(h, table);
      // The schema changed too, so the page delta is not this index's alone: measure the new b-trees.
      h.stmt('UPDATE timeseries_indexes SET pages = ?, row_count = ? WHERE index_name = ?').run(measurePages(h, table), kept, table);
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
  const indexes = h.stmt('SELECT index_name FROM timeseries_indexes WHERE entity_type = ?').all(entityType) as Array<{
    index_name: string;
  }>;
  for (const i of indexes) {
    const removed = h.stmt(`DELETE FROM ${ident(i.index_name)} WHERE urn = ?`).run(urn).changes;
    // Other b-trees change in the same transaction: the size is measured again on the next read.
    if (removed > 0)
      h.stmt('UPDATE timeseries_indexes SET pages = NULL, row_count = row_count - ? WHERE index_name = ?').run(removed, i.index_name);
  }
}
