import { createHash } from 'node:crypto';
import type { PoolClient, QueryResultRow } from 'pg';
import type { EntityWrite, InitialLoad, SearchDocument } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { ident, translateError, type PgHandle, type Queryable } from './database';
import type { Stores } from './entities';
import { Packer } from './packing';
import { storedLower } from './search-store';
import { documentVector } from './text';
import { TimeseriesStore } from './timeseries';

/**
 * The initial load on PostgreSQL (src/adapter/initial-load.ts; docs/deploy.md), as `pg_restore` loads
 * a dump: one transaction on one connection of the pool. `begin` takes the catalog's tables in ACCESS
 * EXCLUSIVE mode, checks that the catalog is empty and drops the secondary indexes of the entity,
 * aspect and search tables (those that back a constraint stay); each `loadEntities` call draws the
 * entities' ids and writes their rows with `COPY ... FROM STDIN` (pg-copy-streams); `buildSearch`
 * creates the indexes again over the data and runs `ANALYZE`; the records after the entities
 * (timeseries rows, kept versions, change events, jobs) are written by the adapter's ordinary commit
 * through the same connection, each as a savepoint; `complete` commits.
 *
 * All or nothing: DDL is transactional in PostgreSQL, so until `complete` a crash of the process, a
 * lost connection, a failed call or `close()` rolls the whole load back (the server does it when the
 * connection ends): the catalog is empty again, its indexes as before. What survives a rolled-back
 * load is harmless: ids drawn from sequences, and names and property keys registered in the schema's
 * dictionaries (as after any failed commit). Other processes using the same schema wait for the load
 * to end (their statements queue behind its locks); catalogs in other schemas are not touched.
 */

/** The tables whose secondary indexes wait for the end of the load, and that the load locks. */
const DEFERRED = ['entities', 'aspects', 'search_text', 'search_fields', 'property_values'];
const LOCKED = [...DEFERRED, 'aspect_metadata', 'change_events', 'aspect_versions'];
/** Memory for each index build at the end of a load (the server's default is 64 MB). */
const INDEX_BUILD_MEMORY = '256MB';
/** Entities whose rows are made between two turns of the event loop (the previous COPY goes on meanwhile). */
const YIELD_EVERY = 100;
/** Metadata documents remembered across the calls of a load (digest → id); others are looked up. */
const MAX_KNOWN_METADATA = 10_000;

type CopyFrom = (sql: string) => NodeJS.WritableStream & { on(event: 'finish' | 'error', listener: (error?: Error) => void): unknown };

/** pg-copy-streams, loaded on the first load: an optional dependency that ordinary use of the adapter does not need. */
async function copyFromModule(): Promise<CopyFrom> {
  try {
    const mod = (await import('pg-copy-streams')) as unknown as { from?: CopyFrom; default?: { from: CopyFrom } };
    const from = mod.from ?? mod.default?.from;
    if (!from) throw new Error('pg-copy-streams has no `from`');
    return from;
  } catch (error) {
    throw new CatalogError('UNAVAILABLE', 'an initial load on PostgreSQL needs the pg-copy-streams package: npm install pg-copy-streams', {
      cause: error,
    });
  }
}

/** A value in COPY's text format. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (Buffer.isBuffer(value)) return `\\\\x${value.toString('hex')}`;
  const text = String(value);
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]!) : text;
}
const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Rows of one table in COPY's text format. */
class CopyRows {
  private readonly lines: string[] = [];

  constructor(
    readonly table: string,
    readonly columns: readonly string[],
  ) {}

  add(...values: unknown[]): void {
    let line = field(values[0]);
    for (let i = 1; i < values.length; i++) line += `\t${field(values[i])}`;
    this.lines.push(line);
  }

  get size(): number {
    return this.lines.length;
  }

  text(): string {
    return this.lines.length ? `${this.lines.join('\n')}\n` : '';
  }
}

/** Statements on the load's one connection, one at a time; `transaction` is a savepoint inside the load. */
function loadHandle(h: PgHandle, client: PoolClient): PgHandle {
  let chain: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const raw: Queryable = {
    async query<R extends QueryResultRow>(sql: string, values: readonly unknown[] = []) {
      try {
        return (await client.query<R>(sql, [...values])).rows;
      } catch (error) {
        throw translateError(error);
      }
    },
    async execute(sql, values = []) {
      try {
        return (await client.query(sql, [...values])).rowCount ?? 0;
      } catch (error) {
        throw translateError(error);
      }
    },
    async queryPlannedEachTime<R extends QueryResultRow>(sql: string, values: readonly unknown[] = []) {
      return raw.query<R>(sql, values);
    },
    async script(sql) {
      try {
        await client.query(sql);
      } catch (error) {
        throw translateError(error);
      }
    },
  };
  return {
    pool: h.pool,
    s: h.s,
    schemaName: h.schemaName,
    query: (sql, values) => exclusive(() => raw.query(sql, values)),
    execute: (sql, values) => exclusive(() => raw.execute(sql, values)),
    queryPlannedEachTime: (sql, values) => exclusive(() => raw.queryPlannedEachTime(sql, values)),
    script: (sql) => exclusive(() => raw.script(sql)),
    transaction: (work) =>
      exclusive(async () => {
        await client.query('SAVEPOINT metacatalog_load_commit');
        try {
          const result = await work(raw);
          await client.query('RELEASE SAVEPOINT metacatalog_load_commit');
          return result;
        } catch (error) {
          await client.query('ROLLBACK TO SAVEPOINT metacatalog_load_commit');
          throw translateError(error);
        }
      }),
  };
}

interface Load {
  client: PoolClient;
  handle: PgHandle;
  stores: Stores;
  copyFrom: CopyFrom;
  indexes: Array<{ name: string; sql: string }>;
  entitySequence: string;
  metadataSequence: string;
  /** Metadata documents written or found during the load: digest (hex) → id. */
  metadata: Map<string, string>;
  /** Whether `metadata` holds every document of the table (then a digest it lacks is a new document). */
  metadataComplete: boolean;
  /** The previous call's COPY statements, still running on the server while the next chunk is prepared. */
  pending: Promise<void>;
  /** What made them fail: the load can only be rolled back. */
  failure?: unknown;
  lastUrn: string;
  phase: 'entities' | 'rest';
  /** Set when the connection fails: the load can only be rolled back. */
  broken?: Error;
  onError: (error: Error) => void;
}

/** The initial load of one adapter: `active()` is the load's handle and stores while one runs. */
export function createPostgresInitialLoad(
  h: () => PgHandle,
  stores: () => Stores,
): InitialLoad & {
  /** The connection and stores every statement of the adapter uses while a load runs. */
  active(): { handle: PgHandle; stores: Stores; loadingEntities: boolean } | undefined;
  /** At close: a load not completed is rolled back. */
  closing(): Promise<void>;
} {
  let load: Load | undefined;

  async function end(sql: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    const current = load;
    if (!current) return;
    load = undefined;
    let broken = current.broken;
    try {
      if (!broken) await current.client.query(sql);
    } catch (error) {
      broken = error instanceof Error ? error : new Error(String(error));
      if (sql === 'COMMIT') throw translateError(error);
    } finally {
      current.client.off('error', current.onError);
      // A connection that failed is destroyed (the server rolls its transaction back), never pooled again.
      current.client.release(broken);
    }
  }

  async function copy(current: Load, rows: CopyRows): Promise<void> {
    if (rows.size === 0) return;
    const stream = current.client.query(
      current.copyFrom(`COPY ${current.handle.s}.${ident(rows.table)} (${rows.columns.join(', ')}) FROM STDIN`) as never,
    ) as unknown as ReturnType<CopyFrom>;
    await new Promise<void>((resolve, reject) => {
      stream.on('finish', () => resolve());
      stream.on('error', (error) => reject(translateError(error)));
      stream.end(rows.text());
    });
  }

  /** Ids from a sequence, on another connection (sequences are not transactional): the load's may still be copying. */
  async function ids(sequence: string, count: number): Promise<string[]> {
    if (count === 0) return [];
    const rows = await h().query<{ id: string }>('SELECT nextval($1::regclass)::text AS id FROM generate_series(1, $2)', [sequence, count]);
    return rows.map((r) => r.id);
  }

  /** Waits for the previous call's COPY statements; their failure fails this call (and the load). */
  async function settle(current: Load): Promise<void> {
    await current.pending;
    if (current.failure !== undefined) throw current.failure;
  }

  return {
    active() {
      return load && { handle: load.handle, stores: load.stores, loadingEntities: load.phase === 'entities' };
    },
    async begin() {
      if (load) return;
      const base = h();
      const copyFrom = await copyFromModule();
      const s = base.s;
      const client = await base.pool.connect();
      const current: Load = {
        client,
        handle: loadHandle(base, client),
        stores: { ...stores(), groups: undefined },
        copyFrom,
        indexes: [],
        entitySequence: '',
        metadataSequence: '',
        metadata: new Map(),
        metadataComplete: false,
        pending: Promise.resolve(),
        lastUrn: '',
        phase: 'entities',
        onError: (error) => {
          current.broken ??= error;
        },
      };
      current.stores.timeseries = new TimeseriesStore(current.handle);
      client.on('error', current.onError);
      load = current;
      try {
        await client.query('BEGIN');
        await client.query(`LOCK TABLE ${LOCKED.map((t) => `${s}.${t}`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
        const tables = (await client.query<{ index_name: string }>(`SELECT index_name FROM ${s}.timeseries_indexes`)).rows;
        const probes = [
          `SELECT 1 FROM ${s}.entities`,
          `SELECT 1 FROM ${s}.change_events`,
          `SELECT 1 FROM ${s}.aspect_versions`,
          ...tables.map((t) => `SELECT 1 FROM ${s}.${ident(t.index_name)}`),
        ];
        const held = await client.query(`SELECT EXISTS (${probes.join(' UNION ALL ')}) AS held`);
        if ((held.rows[0] as { held: boolean }).held)
          throw new CatalogError(
            'CONFLICT',
            'an initial load needs an empty catalog: this one holds entities, change events or timeseries rows',
          );
        // Secondary indexes only: those behind a primary key or a unique constraint stay (ON CONFLICT needs them).
        current.indexes = (
          await client.query<{ name: string; sql: string }>(
            `SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
             WHERE i.schemaname = $1 AND i.tablename = ANY($2::text[])
               AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)
             ORDER BY i.indexname`,
            [base.schemaName, DEFERRED],
          )
        ).rows;
        for (const index of current.indexes) await client.query(`DROP INDEX ${s}.${ident(index.name)}`);
        const sequences = await client.query<{ entities: string; metadata: string }>(
          `SELECT pg_get_serial_sequence($1, 'id') AS entities, pg_get_serial_sequence($2, 'id') AS metadata`,
          [`${s}.entities`, `${s}.aspect_metadata`],
        );
        current.entitySequence = sequences.rows[0]!.entities;
        current.metadataSequence = sequences.rows[0]!.metadata;
        // An empty catalog has few metadata documents (none, or some no row refers to any more): all of them known.
        const documents = await client.query<{ id: string; digest: Buffer }>(
          `SELECT id::text AS id, digest FROM ${s}.aspect_metadata LIMIT ${MAX_KNOWN_METADATA + 1}`,
        );
        if (documents.rows.length <= MAX_KNOWN_METADATA) {
          for (const row of documents.rows) current.metadata.set(row.digest.toString('hex'), row.id);
          current.metadataComplete = true;
        }
      } catch (error) {
        await end('ROLLBACK');
        throw translateError(error);
      }
    },
    async loadEntities(writes: readonly EntityWrite[]) {
      const current = load;
      if (!current || current.phase !== 'entities') throw new Error('internal: loadEntities outside the entity phase of an initial load');
      if (writes.length === 0) return;
      let previous = current.lastUrn;
      for (const w of writes) {
        if (!(w.urn > previous))
          throw new CatalogError(
            'INVALID_INPUT',
            `an initial load takes entities in URN order, each once (as an export writes them): ${w.urn} comes after ${previous}`,
          );
        previous = w.urn;
      }
      // Dictionary rows are registered on their own (outside the load, as the ordinary commit does): harmless if the load rolls back.
      const docs = writes.map((w) => w.searchDocument);
      const keys = current.stores.keys;
      await keys.prepare(docs);
      await keys.prepareNames(docs);
      const entityIds = await ids(current.entitySequence, writes.length);
      const found = await entityRows(writes, entityIds, keys);
      const rows = { ...found, metadata: await metadataRows(current, found.metadata) };
      const aspects = new CopyRows('aspects', [
        'entity_id',
        'name',
        'version',
        'created_time',
        'created_actor',
        'modified_time',
        'modified_actor',
        'packed',
        'metadata_id',
      ]);
      for (const a of rows.aspects) aspects.add(...a.row, a.digest ? current.metadata.get(a.digest) : null);
      // At most one call's rows in flight: the server copies them while the domain prepares the next chunk.
      await settle(current);
      current.pending = (async () => {
        for (const table of [rows.metadata, rows.entities, aspects, rows.text, rows.fields, rows.values]) await copy(current, table);
      })().catch((error: unknown) => {
        current.failure = error;
      });
      current.lastUrn = previous;
    },
    async buildSearch() {
      const current = load;
      if (!current) throw new Error('internal: buildSearch outside an initial load');
      if (current.phase === 'rest') return;
      await settle(current);
      const client = current.client;
      await client.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
      for (const index of current.indexes) await client.query(index.sql);
      await client.query(`ANALYZE ${DEFERRED.map((t) => `${current.handle.s}.${t}`).join(', ')}`);
      current.phase = 'rest';
    },
    async complete() {
      if (load && load.phase !== 'rest') throw new Error('internal: an initial load completed before its search structures were built');
      await end('COMMIT');
    },
    async abandon() {
      await load?.pending;
      await end('ROLLBACK');
    },
    async closing() {
      await load?.pending;
      await end('ROLLBACK');
    },
  };

  /**
   * The new metadata documents of a call as rows (their ids drawn and remembered), after finding those
   * written before: in `metadata` when it holds every document of the table, else in the table (once
   * the previous call's rows are in).
   */
  async function metadataRows(current: Load, documents: Map<string, Buffer>): Promise<CopyRows> {
    const rows = new CopyRows('aspect_metadata', ['id', 'digest', 'packed']);
    let unknown = [...documents.keys()].filter((hex) => !current.metadata.has(hex));
    if (unknown.length === 0) return rows;
    if (current.metadata.size + unknown.length > MAX_KNOWN_METADATA) {
      current.metadata.clear();
      current.metadataComplete = false;
      unknown = [...documents.keys()];
    }
    if (!current.metadataComplete) {
      await settle(current);
      const found = await current.client.query<{ id: string; digest: Buffer }>(
        `SELECT id::text AS id, digest FROM ${current.handle.s}.aspect_metadata WHERE digest = ANY($1::bytea[])`,
        [unknown.map((hex) => Buffer.from(hex, 'hex'))],
      );
      for (const row of found.rows) current.metadata.set(row.digest.toString('hex'), row.id);
    }
    const missing = unknown.filter((hex) => !current.metadata.has(hex));
    const drawn = await ids(current.metadataSequence, missing.length);
    missing.forEach((hex, i) => {
      rows.add(drawn[i], Buffer.from(hex, 'hex'), documents.get(hex));
      current.metadata.set(hex, drawn[i]!);
    });
    return rows;
  }
}

/**
 * The rows an ordinary commit writes for new entities (write-statement.ts: `created`, `put_aspects`,
 * `written_text`, `written_fields`, `written_values`), for COPY: the same columns, flags and packed
 * documents, so that a loaded catalog is the one an ordinary import makes.
 */
async function entityRows(
  writes: readonly EntityWrite[],
  ids: readonly string[],
  keys: Stores['keys'],
): Promise<{
  entities: CopyRows;
  aspects: Array<{ row: unknown[]; digest: string | null }>;
  metadata: Map<string, Buffer>;
  text: CopyRows;
  fields: CopyRows;
  values: CopyRows;
}> {
  const packer = new Packer();
  const entities = new CopyRows('entities', ['id', 'urn', 'entity_type', 'version', 'removed', 'urn_lower', 'entity_type_lower']);
  const text = new CopyRows('search_text', ['entity_id', 'tsv']);
  const fields = new CopyRows('search_fields', ['entity_id', 'field_id', 'type_id', 'removed', 'first_of_field', 'value', 'value_lower']);
  const values = new CopyRows('property_values', [
    'entity_id',
    'key_id',
    'str_value',
    'num_value',
    'str_lower',
    'entity_type',
    'removed',
    'first_of_key',
    'sole_of_key',
  ]);
  const aspects: Array<{ row: unknown[]; digest: string | null }> = [];
  const metadata = new Map<string, Buffer>();
  /** Digests by packed document: the packer hands the same buffer for the same text. */
  const digests = new Map<Buffer, string>();
  for (let i = 0; i < writes.length; i++) {
    // The previous call's COPY statements go on while these rows are made: their data and replies need the event loop.
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    const w = writes[i]!;
    const id = ids[i]!;
    const doc: SearchDocument | undefined = w.searchDocument ?? undefined;
    entities.add(
      id,
      w.urn,
      w.entityType,
      1,
      doc ? doc.removed : null,
      doc ? storedLower(w.urn) : null,
      doc ? storedLower(w.entityType) : null,
    );
    // The last put of a name counts, as in the ordinary statement.
    const puts = new Map((w.put ?? []).filter((a) => !w.delete?.includes(a.name)).map((a) => [a.name, a]));
    for (const a of puts.values()) {
      const packedMetadata = packer.json(a.systemMetadata);
      let digest: string | null = null;
      if (packedMetadata) {
        digest = digests.get(packedMetadata) ?? null;
        if (digest === null) {
          digest = createHash('sha256').update(packedMetadata).digest('hex');
          digests.set(packedMetadata, digest);
          metadata.set(digest, packedMetadata);
        }
      }
      aspects.push({
        row: [
          id,
          a.name,
          a.version,
          a.created.time,
          a.created.actor,
          a.lastModified.time === a.created.time ? null : a.lastModified.time,
          a.lastModified.actor === a.created.actor ? null : a.lastModified.actor,
          packer.json(a.value),
        ],
        digest,
      });
    }
    if (!doc) continue;
    text.add(id, documentVector(doc.text));
    for (const [field, list] of Object.entries(doc.fields)) {
      let first = true;
      for (const value of new Set(list)) {
        fields.add(id, keys.nameId(field), keys.nameId(doc.entityType), doc.removed, first, value, storedLower(value));
        first = false;
      }
    }
    const seen = new Map<number, Set<string | number>>();
    const rows: unknown[][] = [];
    const firstRow = new Map<number, number>();
    for (const property of doc.properties) {
      if (property.values.length === 0) continue;
      const keyId = keys.get(property.propertyUrn, property.definitionKey);
      let known = seen.get(keyId);
      if (!known) seen.set(keyId, (known = new Set()));
      for (const value of property.values) {
        if (known.has(value)) continue;
        if (known.size === 0) firstRow.set(keyId, rows.length);
        const str = typeof value === 'string' ? value : null;
        rows.push([
          id,
          keyId,
          str,
          typeof value === 'number' ? value : null,
          str === null ? null : storedLower(str),
          doc.entityType,
          doc.removed,
          known.size === 0,
          false,
        ]);
        known.add(value);
      }
    }
    for (const [keyId, row] of firstRow) if (seen.get(keyId)!.size === 1) rows[row]![8] = true;
    for (const row of rows) values.add(...row);
  }
  return { entities, aspects, metadata, text, fields, values };
}
