import { decodeRowCursor as decodeCursor, encodeRowCursor as encodeCursor } from '../../src/adapter/cursor';
import type {
  JsonObject,
  TimeseriesIndexRef,
  TimeseriesIndexSize,
  TimeseriesPage,
  TimeseriesQuery,
  TimeseriesRow,
} from '../../src/adapter/types';
import { createHash } from 'node:crypto';
import { CatalogError } from '../../src/errors';
import { ident, type PgHandle, type Queryable } from './database';

/** Second key of the advisory lock that serializes creating and rebuilding one index's table. */
const TIMESERIES_LOCK = 0x74736978; // "tsix"

/**
 * Timeseries indexes: one table per index, named like the index, so `pg_total_relation_size` measures
 * it and a truncation by reindex is "copy the kept rows to a new table, swap, drop".
 */
export class TimeseriesStore {
  /** Indexes known to exist (tables are never dropped for good, only swapped). */
  private readonly known = new Set<string>();

  constructor(private readonly h: PgHandle) {}

  private table(indexName: string): string {
    if (!/^[a-z0-9_]{1,63}$/.test(indexName)) {
      // Postgres identifiers are at most 63 bytes.
      throw new CatalogError('INVALID_INPUT', `timeseries index name "${indexName}" cannot be stored: at most 63 characters of [a-z0-9_]`, {
        details: [{ path: 'indexName', message: 'at most 63 characters of [a-z0-9_]' }],
      });
    }
    return `${this.h.s}.${ident(indexName)}`;
  }

  private async exists(index: TimeseriesIndexRef): Promise<boolean> {
    if (this.known.has(index.indexName)) return true;
    const rows = await this.h.query(`SELECT 1 AS found FROM ${this.h.s}.timeseries_indexes WHERE index_name = $1`, [index.indexName]);
    if (rows.length > 0) this.known.add(index.indexName);
    return rows.length > 0;
  }

  private async lock(tx: Queryable, indexName: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [TIMESERIES_LOCK, `${this.h.schemaName}.${indexName}`]);
  }

  /** The table (named like the index) and its two indexes; inside the caller's transaction. */
  private async createTable(tx: Queryable, indexName: string): Promise<void> {
    const t = `${this.h.s}.${ident(indexName)}`;
    await tx.script(`
      ${tableDefinition(this.h.s, indexName, true)};
      CREATE INDEX IF NOT EXISTS ${ident(relationName(indexName, '_by_urn'))} ON ${t} (urn, ts);
      CREATE INDEX IF NOT EXISTS ${ident(relationName(indexName, '_by_ts'))} ON ${t} (ts);
    `);
  }

  async appendTimeseries(index: TimeseriesIndexRef, rows: readonly TimeseriesRow[]): Promise<void> {
    const existed = await this.exists(index);
    await this.h.transaction((tx) => this.appendIn(tx, index, rows, existed));
    this.known.add(index.indexName);
  }

  /**
   * Appends inside the caller's transaction (a commit's, or `append`'s own), creating the index on first
   * use. The caller remembers the index (`remember`) once its transaction committed: it may still fail.
   */
  async appendIn(tx: Queryable, index: TimeseriesIndexRef, rows: readonly TimeseriesRow[], existed?: boolean): Promise<void> {
    const t = this.table(index.indexName);
    const found =
      existed ??
      (this.known.has(index.indexName) ||
        (await tx.query(`SELECT 1 AS found FROM ${this.h.s}.timeseries_indexes WHERE index_name = $1`, [index.indexName])).length > 0);
    if (!found) {
      await this.lock(tx, index.indexName);
      await this.createTable(tx, index.indexName);
      await tx.execute(
        `INSERT INTO ${this.h.s}.timeseries_indexes (index_name, entity_type, aspect) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [index.indexName, index.entityType, index.aspect],
      );
    }
    if (rows.length === 0) return;
    // Ids follow the order of `rows`: equal times read back newest appended first.
    await tx.execute(
      `INSERT INTO ${t} (urn, ts, value)
       SELECT r.urn, r.ts, r.value FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS r(urn, ts, value, n)
       ORDER BY r.n`,
      [rows.map((r) => r.urn), rows.map((r) => r.timestampMillis), rows.map((r) => JSON.stringify(r.value))],
    );
  }

  /** Indexes a committed transaction appended to: they exist now. */
  remember(indexNames: Iterable<string>): void {
    for (const name of indexNames) this.known.add(name);
  }

  async queryTimeseries(query: TimeseriesQuery): Promise<TimeseriesPage> {
    if (!(await this.exists(query))) return { rows: [] };
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await this.h.query<{ id: string; urn: string; ts: string; value: string }>(
      `SELECT id, urn, ts, value FROM ${this.table(query.indexName)}
       WHERE ($1::text IS NULL OR urn = $1) AND ($2::bigint IS NULL OR ts >= $2) AND ($3::bigint IS NULL OR ts <= $3)
         AND ($4::bigint IS NULL OR ts < $4 OR (ts = $4 AND id < $5::bigint))
       ORDER BY ts DESC, id DESC LIMIT $6`,
      [
        query.urn ?? null,
        query.startTimeMillis ?? null,
        query.endTimeMillis ?? null,
        cursor?.ts ?? null,
        cursor?.id ?? null,
        query.limit + 1,
      ],
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      rows: page.map((r) => ({ urn: r.urn, timestampMillis: Number(r.ts), value: JSON.parse(r.value) as JsonObject })),
      ...(rows.length > query.limit && last ? { nextCursor: encodeCursor({ ts: Number(last.ts), id: Number(last.id) }) } : {}),
    };
  }

  /**
   * Bytes measured by Postgres: `pg_total_relation_size` (the table, its two indexes and its TOAST
   * data) times the share of the table's storage that its live rows fill, each row counted as
   * `pg_column_size(row)` plus its 4-byte line pointer. Postgres keeps the space of deleted rows in the
   * table until it is rewritten (a rebuild) or reused after VACUUM, so the plain relation size would
   * not move when rows are deleted; weighted by the live share, the figure falls at once, as SQLite's
   * does when pages go to its freelist. Counting the live rows is one sequential scan of the index's
   * table per call (an administrative operation).
   */
  async timeseriesIndexSizes(): Promise<TimeseriesIndexSize[]> {
    const indexes = await this.h.query<{ index_name: string; entity_type: string; aspect: string }>(
      `SELECT index_name, entity_type, aspect FROM ${this.h.s}.timeseries_indexes ORDER BY index_name`,
    );
    const out: TimeseriesIndexSize[] = [];
    for (const i of indexes) {
      const t = this.table(i.index_name);
      const [size] = await this.h.query<{ total: string; stored: string; n: string; live: string }>(
        `SELECT pg_total_relation_size($1::regclass) AS total,
           pg_relation_size($1::regclass)
             + COALESCE((SELECT pg_total_relation_size(c.reltoastrelid) FROM pg_class c WHERE c.oid = $1::regclass AND c.reltoastrelid <> 0), 0) AS stored,
           s.n, s.live
         FROM (SELECT count(*) AS n, COALESCE(sum(pg_column_size(r.*) + 4), 0) AS live FROM ${t} r) s`,
        [`${this.h.s}.${ident(i.index_name)}`],
      );
      const total = Number(size?.total ?? 0);
      const stored = Number(size?.stored ?? 0);
      const live = Number(size?.live ?? 0);
      const bytes = stored > 0 ? Math.round(total * Math.min(1, live / stored)) : total;
      out.push({ indexName: i.index_name, entityType: i.entity_type, aspect: i.aspect, bytes, rows: Number(size?.n ?? 0) });
    }
    return out;
  }

  async countTimeseries(index: TimeseriesIndexRef, endTimeMillis: number): Promise<{ total: number; matching: number }> {
    if (!(await this.exists(index))) return { total: 0, matching: 0 };
    const [row] = await this.h.query<{ total: string; matching: string }>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE ts <= $1) AS matching FROM ${this.table(index.indexName)}`,
      [endTimeMillis],
    );
    return { total: Number(row?.total ?? 0), matching: Number(row?.matching ?? 0) };
  }

  async deleteTimeseriesBatch(index: TimeseriesIndexRef, endTimeMillis: number, limit: number): Promise<number> {
    if (!(await this.exists(index))) return 0;
    const t = this.table(index.indexName);
    return this.h.execute(`DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE ts <= $1 ORDER BY ts, id LIMIT $2)`, [
      endTimeMillis,
      limit,
    ]);
  }

  /**
   * Copy the kept rows to a fresh table, drop the old one, rename the fresh one: one transaction, under
   * an exclusive lock on the old table (appends wait, then go to the new table). The dropped table's
   * space goes back to the file system at once.
   */
  async rebuildTimeseriesIndex(index: TimeseriesIndexRef, endTimeMillis: number): Promise<number> {
    if (!(await this.exists(index))) return 0;
    const name = index.indexName;
    const t = this.table(name);
    const freshName = relationName(name, '_rebuild');
    const fresh = `${this.h.s}.${ident(freshName)}`;
    return this.h.transaction(async (tx) => {
      await this.lock(tx, name);
      await tx.script(`LOCK TABLE ${t} IN EXCLUSIVE MODE`);
      const [before] = await tx.query<{ n: string; max_id: string | null }>(`SELECT count(*) AS n, max(id) AS max_id FROM ${t}`);
      await tx.script(`DROP TABLE IF EXISTS ${fresh}; ${tableDefinition(this.h.s, freshName, false)}`);
      const kept = await tx.execute(`INSERT INTO ${fresh} (id, urn, ts, value) SELECT id, urn, ts, value FROM ${t} WHERE ts > $1`, [
        endTimeMillis,
      ]);
      // New rows must keep getting larger ids than every old one (ties in time read newest first).
      if (before?.max_id !== null && before?.max_id !== undefined) {
        await tx.query(`SELECT setval(pg_get_serial_sequence($1, 'id'), $2::bigint)`, [`${this.h.s}.${ident(freshName)}`, before.max_id]);
      }
      await tx.script(`
        DROP TABLE ${t};
        ALTER TABLE ${fresh} RENAME TO ${ident(name)};
        ALTER SEQUENCE ${this.h.s}.${ident(relationName(freshName, '_id_seq'))} RENAME TO ${ident(relationName(name, '_id_seq'))};
        ALTER INDEX ${this.h.s}.${ident(relationName(freshName, '_pkey'))} RENAME TO ${ident(relationName(name, '_pkey'))};
      `);
      await this.createTable(tx, name);
      return Number(before?.n ?? 0) - kept;
    });
  }

  /** Inside the caller's transaction: the rows of deleted entities, in every index of their type. */
  async deleteEntities(tx: Queryable, entities: ReadonlyArray<{ urn: string; entityType: string }>): Promise<void> {
    if (entities.length === 0) return;
    const types = [...new Set(entities.map((e) => e.entityType))];
    const indexes = await tx.query<{ index_name: string; entity_type: string }>(
      `SELECT index_name, entity_type FROM ${this.h.s}.timeseries_indexes WHERE entity_type = ANY($1::text[]) ORDER BY index_name`,
      [types],
    );
    for (const i of indexes) {
      const urns = entities.filter((e) => e.entityType === i.entity_type).map((e) => e.urn);
      await tx.execute(`DELETE FROM ${this.table(i.index_name)} WHERE urn = ANY($1::text[])`, [urns]);
    }
  }
}

/** The table of one index, with its sequence and primary key named after it (so a swap can rename them). */
function tableDefinition(s: string, name: string, ifNotExists: boolean): string {
  return `CREATE TABLE ${ifNotExists ? 'IF NOT EXISTS ' : ''}${s}.${ident(name)} (
    id bigint GENERATED BY DEFAULT AS IDENTITY (SEQUENCE NAME ${s}.${ident(relationName(name, '_id_seq'))}),
    urn text COLLATE "C" NOT NULL,
    ts bigint NOT NULL,
    value text NOT NULL,
    CONSTRAINT ${ident(relationName(name, '_pkey'))} PRIMARY KEY (id)
  )`;
}

/**
 * `base + suffix` when it fits in 63 bytes; otherwise a shortened base with a hash, so that long index
 * names never collide after Postgres cuts them. Tables created here name their sequence and primary
 * key explicitly with it.
 */
function relationName(base: string, suffix: string): string {
  if (base.length + suffix.length <= 63) return `${base}${suffix}`;
  const hash = createHash('sha1').update(base).digest('hex').slice(0, 8);
  return `${base.slice(0, 63 - suffix.length - 9)}_${hash}${suffix}`;
}
