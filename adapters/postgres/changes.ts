import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { ChangeEvent, ChangePage, ChangeQuery, EntityWrite, StoredAspect, WriteBatch } from '../../src/adapter/types';
import { ChangeSignal } from '../../src/adapter/change-signal';
import type { PgHandle, Queryable } from './database';
import { unpack, type Packer } from './packing';

/**
 * Change feed and kept aspect versions of the PostgreSQL adapter (docs/changes.md).
 *
 * Commit order: a sequence is not enough (a transaction can take a lower number and commit after one
 * with a higher number, and a reader in between would skip it for ever). Ids come instead from a
 * single-row counter, `change_counter`, updated as the last step of the commit transaction: its row
 * lock is held until COMMIT, so the next committer waits, then reads the value this one wrote; ids are
 * assigned in commit order, dense, and a rolled-back commit gives its numbers back. Only commits that
 * carry events take the lock, and they hold it for the tail of the transaction alone.
 */
export function changesMigration(s: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${s}.change_counter (one boolean PRIMARY KEY DEFAULT true CHECK (one), last_id bigint NOT NULL);
    INSERT INTO ${s}.change_counter (one, last_id) VALUES (true, 0) ON CONFLICT DO NOTHING;
    CREATE TABLE IF NOT EXISTS ${s}.change_events (
      id bigint PRIMARY KEY,
      entity_urn text COLLATE "C" NOT NULL,
      entity_type text NOT NULL,
      aspect_name text NOT NULL,
      change_type text NOT NULL,
      aspect jsonb,
      previous_aspect jsonb,
      created_time bigint NOT NULL,
      created_actor text NOT NULL,
      system_metadata jsonb
    );
    CREATE INDEX IF NOT EXISTS change_events_time ON ${s}.change_events (created_time);
    CREATE TABLE IF NOT EXISTS ${s}.aspect_versions (
      urn text COLLATE "C" NOT NULL,
      name text NOT NULL,
      version integer NOT NULL,
      value jsonb NOT NULL,
      created_time bigint NOT NULL,
      created_actor text NOT NULL,
      modified_time bigint NOT NULL,
      modified_actor text NOT NULL,
      system_metadata jsonb,
      PRIMARY KEY (urn, name, version)
    );
  `;
}

/** The NOTIFY channel of one schema (a channel name is at most 63 bytes: a hash of the schema). */
function channelOf(schemaName: string): string {
  return `metacatalog_changes_${createHash('sha256').update(schemaName).digest('hex').slice(0, 24)}`;
}

type AspectPut = NonNullable<EntityWrite['put']>[number];

/**
 * What a commit's entity writes left behind, run after run: the id of each entity that exists at the
 * end, and the aspect put that each of its aspect rows holds then. An event refers to those rows
 * (schema version 6) instead of copying them.
 */
export class BatchRefs {
  private readonly ids = new Map<string, { id: string; entityType: string }>();
  private readonly puts = new Map<string, AspectPut>();

  record(run: readonly EntityWrite[], idOf: (write: EntityWrite) => string): void {
    for (const write of run) {
      if (write.deleteEntity) {
        this.ids.delete(write.urn);
        for (const key of [...this.puts.keys()]) if (key.startsWith(`${write.urn}\u0000`)) this.puts.delete(key);
        continue;
      }
      this.ids.set(write.urn, { id: idOf(write), entityType: write.entityType });
      const deleted = new Set(write.delete ?? []);
      for (const name of deleted) this.puts.delete(`${write.urn}\u0000${name}`);
      for (const put of write.put ?? []) if (!deleted.has(put.name)) this.puts.set(`${write.urn}\u0000${put.name}`, put);
    }
  }

  /** The entity's id and type, when it exists after the commit's writes. */
  entityOf(urn: string): { id: string; entityType: string } | undefined {
    return this.ids.get(urn);
  }

  /** The put an aspect row holds after the commit's writes. */
  putOf(urn: string, aspectName: string): AspectPut | undefined {
    return this.puts.get(`${urn}\u0000${aspectName}`);
  }
}

/**
 * Inside the commit transaction, last. Documents are stored packed (packing.ts), as the aspects are.
 * An event of an entity that exists names it by id (its URN and type are read from the entity's row
 * until it is deleted), and an UPSERT event whose value is the one its aspect row holds refers to that
 * row by version instead of holding a copy, and takes its change type and actor from it too (the copy
 * is made when the row is replaced or deleted, see write-statement.ts).
 */
export async function writeChanges(tx: Queryable, h: PgHandle, batch: WriteBatch, packer: Packer, refs: BatchRefs): Promise<void> {
  const s = h.s;
  const dropped = (batch.entities ?? []).filter((w) => w.deleteEntity).map((w) => w.urn);
  if (dropped.length) await tx.execute(`DELETE FROM ${s}.aspect_versions WHERE urn = ANY($1::text[])`, [dropped]);
  const versions = batch.aspectVersions ?? [];
  if (versions.length) {
    await tx.execute(
      `INSERT INTO ${s}.aspect_versions (urn, name, version, packed, created_time, created_actor, modified_time, modified_actor, packed_metadata)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::bytea[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::bytea[])
       ON CONFLICT (urn, name, version) DO UPDATE SET value = NULL, system_metadata = NULL, packed = EXCLUDED.packed, created_time = EXCLUDED.created_time,
         created_actor = EXCLUDED.created_actor, modified_time = EXCLUDED.modified_time, modified_actor = EXCLUDED.modified_actor,
         packed_metadata = EXCLUDED.packed_metadata`,
      [
        versions.map((v) => v.urn),
        versions.map((v) => v.aspect.name),
        versions.map((v) => v.aspect.version),
        versions.map((v) => packer.json(v.aspect.value)),
        versions.map((v) => v.aspect.created.time),
        versions.map((v) => v.aspect.created.actor),
        versions.map((v) => (v.aspect.lastModified.time === v.aspect.created.time ? null : v.aspect.lastModified.time)),
        versions.map((v) => (v.aspect.lastModified.actor === v.aspect.created.actor ? null : v.aspect.lastModified.actor)),
        versions.map((v) => packer.json(v.aspect.systemMetadata)),
      ],
    );
  }
  const events = batch.events ?? [];
  if (!events.length) return;
  const ids = events.map((e) => refs.entityOf(e.entityUrn)?.id ?? null);
  // The type is read from the entity's row only when it is the event's (an event may name another).
  const ownType = events.map((e) => refs.entityOf(e.entityUrn)?.entityType === e.entityType);
  const inRow = events.map((e, i) => {
    if (e.changeType !== 'UPSERT' || ids[i] === null) return undefined;
    const put = refs.putOf(e.entityUrn, e.aspectName);
    return put !== undefined && put.value === e.aspect ? put : undefined;
  });
  // One statement, the transaction's last: the counter row lock orders commits (see above) and is held
  // until COMMIT; the notification is delivered to listeners when (and only if) the transaction commits.
  await tx.query(
    `WITH counter AS (UPDATE ${s}.change_counter SET last_id = last_id + $1 RETURNING last_id),
     inserted AS (
       INSERT INTO ${s}.change_events (id, entity_id, entity_urn, entity_type, aspect_name, change_type, aspect_version, packed_aspect, packed_previous,
         created_time, created_actor, packed_metadata)
       SELECT (SELECT last_id FROM counter) - $1 + n, eid, u, t, a, c, av, v, p, ct, ca, m
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::bytea[], $9::bigint[], $10::text[], $11::bytea[], $12::bigint[], $13::int[])
            WITH ORDINALITY AS x(u, t, a, c, v, p, ct, ca, m, eid, av, n))
     SELECT pg_notify($2, (SELECT last_id FROM counter)::text)`,
    [
      events.length,
      channelOf(h.schemaName),
      events.map((e, i) => (ids[i] === null ? e.entityUrn : null)),
      events.map((e, i) => (ids[i] === null || !ownType[i] ? e.entityType : null)),
      events.map((e) => e.aspectName),
      // An event that refers to its row is an UPSERT (read as such).
      events.map((e, i) => (inRow[i] === undefined ? e.changeType : null)),
      events.map((e, i) => (inRow[i] === undefined ? packer.json(e.aspect) : null)),
      events.map((e) => packer.json(e.previousAspectValue)),
      events.map((e) => e.created.time),
      // The row's modification actor, when the event's (as it is when the row is what the event wrote).
      events.map((e, i) => (inRow[i]?.lastModified.actor === e.created.actor ? null : e.created.actor)),
      events.map((e) => packer.json(e.systemMetadata)),
      ids,
      inRow.map((put) => put?.version ?? null),
    ],
  );
}

/** A JSON column of a row written before schema version 3 (parsed by the driver), or its packed successor. */
function document<T>(packed: Buffer | null, plain: T | null): T | null {
  return packed ? (JSON.parse(unpack(packed)) as T) : plain;
}

interface EventRow {
  id: string;
  aspect_version: number | null;
  row_version: number | null;
  row_packed: Buffer | null;
  entity_urn: string;
  entity_type: string;
  aspect_name: string;
  change_type: ChangeEvent['changeType'];
  aspect: ChangeEvent['aspect'];
  previous_aspect: ChangeEvent['previousAspectValue'];
  created_time: string;
  created_actor: string;
  system_metadata: ChangeEvent['systemMetadata'] | null;
  packed_aspect: Buffer | null;
  packed_previous: Buffer | null;
  packed_metadata: Buffer | null;
  oldest: string | null;
  last_id: string;
}

/** The value of an event that refers to its aspect row, which holds the event's version until it is replaced (and the value copied). */
function rowValue(r: EventRow): ChangeEvent['aspect'] {
  if (r.row_packed === null || r.row_version !== r.aspect_version)
    throw new Error(`internal: change event ${r.id} lost the aspect row it refers to`);
  return JSON.parse(unpack(r.row_packed)) as ChangeEvent['aspect'];
}

export async function readChanges(h: PgHandle, query: ChangeQuery): Promise<ChangePage> {
  const s = h.s;
  // One statement, one snapshot: the page and the bounds agree.
  const rows = await h.query<EventRow>(
    `WITH bounds AS (SELECT (SELECT MIN(id) FROM ${s}.change_events) AS oldest, (SELECT last_id FROM ${s}.change_counter) AS last_id),
          page AS (
            SELECT c.id, COALESCE(c.entity_urn, e.urn) AS entity_urn, COALESCE(c.entity_type, e.entity_type) AS entity_type, c.aspect_name,
              COALESCE(c.change_type, 'UPSERT') AS change_type, c.aspect, c.previous_aspect, c.created_time,
              COALESCE(c.created_actor, a.modified_actor, a.created_actor) AS created_actor, c.system_metadata, c.packed_aspect, c.packed_previous,
              c.packed_metadata, c.aspect_version, a.version AS row_version, a.packed AS row_packed
            FROM ${s}.change_events c
              LEFT JOIN ${s}.entities e ON e.id = c.entity_id
              LEFT JOIN ${s}.aspects a ON c.aspect_version IS NOT NULL AND a.entity_id = c.entity_id AND a.name = c.aspect_name
            WHERE c.id > $1::bigint AND ($2::text[] IS NULL OR COALESCE(c.entity_type, e.entity_type) = ANY($2::text[]))
              AND ($3::text[] IS NULL OR c.aspect_name = ANY($3::text[]))
            ORDER BY c.id LIMIT $4)
     SELECT page.*, bounds.oldest, bounds.last_id FROM bounds LEFT JOIN page ON true ORDER BY page.id`,
    [
      query.after ?? '0',
      query.entityTypes?.length ? [...query.entityTypes] : null,
      query.aspects?.length ? [...query.aspects] : null,
      query.limit,
    ],
  );
  const bounds = rows[0]!;
  const events: ChangeEvent[] = rows
    .filter((r) => r.id !== null)
    .map((r) => ({
      id: String(r.id),
      entityUrn: r.entity_urn,
      entityType: r.entity_type,
      aspectName: r.aspect_name,
      changeType: r.change_type,
      aspect: r.aspect_version === null ? document(r.packed_aspect, r.aspect) : rowValue(r),
      previousAspectValue: document(r.packed_previous, r.previous_aspect),
      created: { time: Number(r.created_time), actor: r.created_actor },
      ...withMetadata(document(r.packed_metadata, r.system_metadata)),
    }));
  const after = BigInt(query.after ?? '0');
  const lastId = BigInt(bounds.last_id);
  const scanned = events.length === query.limit ? BigInt(events.at(-1)!.id) : lastId > after ? lastId : after;
  return {
    events,
    oldestId: bounds.oldest === null ? undefined : String(bounds.oldest),
    lastId: lastId === 0n ? undefined : lastId.toString(),
    scannedId: scanned.toString(),
  };
}

interface VersionRow {
  name: string;
  version: number;
  value: StoredAspect['value'] | null;
  packed: Buffer | null;
  created_time: string;
  created_actor: string;
  modified_time: string;
  modified_actor: string;
  system_metadata: StoredAspect['systemMetadata'] | null;
  packed_metadata: Buffer | null;
}

const withMetadata = <T>(metadata: T | null): { systemMetadata?: T } => (metadata ? { systemMetadata: metadata } : {});

export async function readAspectVersions(
  h: PgHandle,
  request: { urn: string; aspectName: string; beforeVersion?: number; limit: number },
): Promise<StoredAspect[]> {
  const rows = await h.query<VersionRow>(
    `SELECT name, version, value, packed, created_time, created_actor, COALESCE(modified_time, created_time) AS modified_time,
            COALESCE(modified_actor, created_actor) AS modified_actor, system_metadata, packed_metadata
     FROM ${h.s}.aspect_versions
     WHERE urn = $1 AND name = $2 AND version < $3 ORDER BY version DESC LIMIT $4`,
    [request.urn, request.aspectName, request.beforeVersion ?? 2_147_483_647, request.limit],
  );
  return rows.map((r) => ({
    name: r.name,
    value: document(r.packed, r.value)!,
    version: r.version,
    created: { time: Number(r.created_time), actor: r.created_actor },
    lastModified: { time: Number(r.modified_time), actor: r.modified_actor },
    ...withMetadata(document(r.packed_metadata, r.system_metadata)),
  }));
}

export async function pruneChanges(
  h: PgHandle,
  request: { eventsBefore?: number; keepEvents?: number; versionsBefore?: number; keepVersions?: number; limit: number },
): Promise<{ events: number; versions: number }> {
  const s = h.s;
  // Events go oldest first, so what is kept is always a suffix of the feed. No index on the time (one
  // fewer on every commit, since schema version 6): the oldest `limit` events are read in id order, and
  // times follow ids closely enough that the walk finds the old ones; each call removes at most `limit`.
  const [cut] = await h.query<{ cut: string | null }>(
    `SELECT GREATEST(
       CASE WHEN $1::bigint IS NULL THEN 0 ELSE (SELECT last_id FROM ${s}.change_counter) - $1::bigint END,
       COALESCE((SELECT MAX(o.id) FROM (SELECT id, created_time FROM ${s}.change_events WHERE $2::bigint IS NOT NULL ORDER BY id LIMIT $3) o
                 WHERE o.created_time < $2::bigint), 0)) AS cut`,
    [request.keepEvents ?? null, request.eventsBefore ?? null, request.limit],
  );
  let events = 0;
  if (cut?.cut !== null && BigInt(cut!.cut!) > 0n) {
    events = await h.execute(
      `DELETE FROM ${s}.change_events WHERE id IN (SELECT id FROM ${s}.change_events WHERE id <= $1 ORDER BY id LIMIT $2)`,
      [cut!.cut, request.limit],
    );
  }
  let versions = 0;
  if (request.versionsBefore !== undefined) {
    versions += await h.execute(
      `DELETE FROM ${s}.aspect_versions WHERE (urn, name, version) IN (SELECT urn, name, version FROM ${s}.aspect_versions WHERE COALESCE(modified_time, created_time) < $1 LIMIT $2)`,
      [request.versionsBefore, request.limit],
    );
  }
  if (request.keepVersions !== undefined && versions < request.limit) {
    versions += await h.execute(
      `DELETE FROM ${s}.aspect_versions WHERE (urn, name, version) IN (
         SELECT urn, name, version FROM (
           SELECT urn, name, version, ROW_NUMBER() OVER (PARTITION BY urn, name ORDER BY version DESC) AS n FROM ${s}.aspect_versions
         ) ranked WHERE n > $1 LIMIT $2)`,
      [request.keepVersions, request.limit - versions],
    );
  }
  return { events, versions };
}

/**
 * Wakes followers: in process after every commit with events, and across processes through LISTEN
 * on one pooled connection, taken when the first follower waits and released by `close()` (or when
 * the connection fails: the next wait takes a new one).
 */
export class ChangeListener {
  readonly signal = new ChangeSignal();
  private client: PoolClient | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly handle: () => PgHandle) {}

  /**
   * Waits for a notification; `committedSince` is asked once the listener is in place, so that a
   * commit between the follower's last read and this wait is not missed.
   */
  async wait(timeoutMs: number, abort: AbortSignal | undefined, committedSince: () => Promise<boolean>): Promise<void> {
    if (this.closed || abort?.aborted) return;
    const inner = new AbortController();
    const onAbort = (): void => inner.abort();
    abort?.addEventListener('abort', onAbort, { once: true });
    try {
      const waiting = this.signal.wait(timeoutMs, inner.signal);
      try {
        await this.listen();
        if (await committedSince()) inner.abort();
      } catch {
        // No listener: the wait still ends on its timeout (the follower then reads again).
      }
      await waiting;
    } finally {
      abort?.removeEventListener('abort', onAbort);
    }
  }

  private listen(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      const h = this.handle();
      const client = await h.pool.connect();
      const drop = (): void => {
        if (this.client !== client) return;
        this.client = undefined;
        client.release(true);
        this.signal.notify();
      };
      client.on('notification', () => this.signal.notify());
      client.on('error', drop);
      try {
        await client.query(`LISTEN "${channelOf(h.schemaName)}"`);
      } catch (error) {
        client.release(true);
        throw error;
      }
      if (this.closed) {
        client.release(true);
        return;
      }
      this.client = client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    client?.release(true);
    this.signal.notify();
  }
}
