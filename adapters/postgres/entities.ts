import type { EntityWrite, FaultInjectionOptions, JsonObject, StoredAspect, StoredEntity, WriteBatch } from '../../src/adapter/types';
import { CatalogError } from '../../src/core/errors';
import type { PgHandle, Queryable } from './database';
import * as jobs from './jobs';
import { removeSearchDocuments, writeSearchDocuments } from './search-store';
import type { TimeseriesStore } from './timeseries';

interface EntityAspectRow {
  urn: string;
  entity_type: string;
  version: number;
  name: string | null;
  value: string | null;
  aspect_version: number | null;
  created_time: string | null;
  created_actor: string | null;
  modified_time: string | null;
  modified_actor: string | null;
  system_metadata: string | null;
}

const ASPECT_COLUMNS = `a.name, a.value, a.version AS aspect_version, a.created_time, a.created_actor, a.modified_time, a.modified_actor, a.system_metadata`;

function toAspect(row: EntityAspectRow): StoredAspect {
  return {
    name: row.name!,
    value: JSON.parse(row.value!) as JsonObject,
    version: row.aspect_version!,
    created: { time: Number(row.created_time), actor: row.created_actor! },
    lastModified: { time: Number(row.modified_time), actor: row.modified_actor! },
    ...(row.system_metadata ? { systemMetadata: JSON.parse(row.system_metadata) as JsonObject } : {}),
  };
}

/** Folds joined entity × aspect rows into entities, keeping the order in which entities first appear. */
function foldEntities(rows: readonly EntityAspectRow[]): Map<string, StoredEntity> {
  const out = new Map<string, StoredEntity>();
  for (const row of rows) {
    let entity = out.get(row.urn);
    if (!entity) {
      entity = { urn: row.urn, entityType: row.entity_type, version: row.version, aspects: {} };
      out.set(row.urn, entity);
    }
    if (row.name !== null) entity.aspects[row.name] = toAspect(row);
  }
  return out;
}

export async function readEntities(h: PgHandle, urns: readonly string[], aspectNames?: readonly string[]): Promise<StoredEntity[]> {
  if (urns.length === 0) return [];
  const rows = await h.query<EntityAspectRow>(
    `SELECT e.urn, e.entity_type, e.version, ${ASPECT_COLUMNS}
     FROM ${h.s}.entities e
     LEFT JOIN ${h.s}.aspects a ON a.entity_id = e.id AND ($2::text[] IS NULL OR a.name = ANY($2::text[]))
     WHERE e.urn = ANY($1::text[])
     ORDER BY e.urn, a.name`,
    [[...new Set(urns)], aspectNames ? [...aspectNames] : null],
  );
  const byUrn = foldEntities(rows);
  const out: StoredEntity[] = [];
  const seen = new Set<string>();
  for (const urn of urns) {
    const entity = byUrn.get(urn);
    if (entity && !seen.has(urn)) {
      seen.add(urn);
      out.push(entity);
    }
  }
  return out;
}

export async function scanEntities(
  h: PgHandle,
  request: { entityType?: string; requireAspect?: string; aspectNames?: readonly string[]; afterUrn?: string; limit: number },
): Promise<StoredEntity[]> {
  const rows = await h.query<EntityAspectRow>(
    `WITH page AS (
       SELECT e.id, e.urn, e.entity_type, e.version FROM ${h.s}.entities e
       WHERE ($1::text IS NULL OR e.entity_type = $1) AND e.urn > $2
         AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM ${h.s}.aspects x WHERE x.entity_id = e.id AND x.name = $3))
       ORDER BY e.urn LIMIT $4
     )
     SELECT e.urn, e.entity_type, e.version, ${ASPECT_COLUMNS}
     FROM page e
     LEFT JOIN ${h.s}.aspects a ON a.entity_id = e.id AND ($5::text[] IS NULL OR a.name = ANY($5::text[]))
     ORDER BY e.urn, a.name`,
    [request.entityType ?? null, request.afterUrn ?? '', request.requireAspect ?? null, request.limit, request.aspectNames ? [...request.aspectNames] : null],
  );
  return [...foldEntities(rows).values()];
}

/**
 * Splits a batch into runs in which every URN appears once, so each run can be written with a few
 * set-based statements; a URN written twice in one batch starts a new run and sees the first write.
 */
function runsOfDistinctUrns(writes: readonly EntityWrite[]): EntityWrite[][] {
  const runs: EntityWrite[][] = [];
  let current: EntityWrite[] = [];
  let seen = new Set<string>();
  for (const write of writes) {
    if (seen.has(write.urn)) {
      runs.push(current);
      current = [];
      seen = new Set();
    }
    seen.add(write.urn);
    current.push(write);
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

const conflict = (write: EntityWrite, found: number): CatalogError =>
  new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);

/**
 * Writes one run of entities (distinct URNs) inside the caller's transaction. Optimistic versioning:
 * the rows of the entities that exist are locked in URN order (`FOR UPDATE`, so concurrent batches
 * over the same entities queue instead of deadlocking) and their versions compared with what the
 * domain read; new entities are inserted with `ON CONFLICT DO NOTHING`, and one that another writer
 * created meanwhile is a CONFLICT too. Then every change is applied with a few set-based statements.
 */
async function writeRun(tx: Queryable, s: string, timeseries: TimeseriesStore, run: readonly EntityWrite[]): Promise<void> {
  const locked = await tx.query<{ id: string; urn: string; version: number }>(
    `SELECT id, urn, version FROM ${s}.entities WHERE urn = ANY($1::text[]) ORDER BY urn FOR UPDATE`,
    [run.map((w) => w.urn)],
  );
  const existing = new Map(locked.map((r) => [r.urn, r] as const));
  for (const write of run) {
    const found = existing.get(write.urn)?.version ?? 0;
    if (found !== write.expectVersion) throw conflict(write, found);
  }

  const toCreate = run.filter((w) => !w.deleteEntity && !existing.has(w.urn)).sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
  const ids = new Map<string, string>(locked.map((r) => [r.urn, String(r.id)] as const));
  if (toCreate.length > 0) {
    const created = await tx.query<{ id: string; urn: string }>(
      `INSERT INTO ${s}.entities (urn, entity_type, version)
       SELECT n.urn, n.entity_type, 1 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(urn, entity_type, i) ORDER BY n.i
       ON CONFLICT (urn) DO NOTHING
       RETURNING id, urn`,
      [toCreate.map((w) => w.urn), toCreate.map((w) => w.entityType)],
    );
    if (created.length !== toCreate.length) {
      const made = new Set(created.map((r) => r.urn));
      const lost = toCreate.find((w) => !made.has(w.urn))!;
      throw new CatalogError('CONFLICT', `${lost.urn}: expected version 0, but another writer created it`);
    }
    for (const row of created) ids.set(row.urn, String(row.id));
  }

  const deleted = run.filter((w) => w.deleteEntity && existing.has(w.urn));
  const kept = run.filter((w) => !w.deleteEntity);
  const updatedIds = kept.filter((w) => existing.has(w.urn)).map((w) => ids.get(w.urn)!);
  if (updatedIds.length > 0) await tx.execute(`UPDATE ${s}.entities SET version = version + 1 WHERE id = ANY($1::bigint[])`, [updatedIds]);

  if (deleted.length > 0) {
    const deletedIds = deleted.map((w) => ids.get(w.urn)!);
    await tx.execute(`DELETE FROM ${s}.aspects WHERE entity_id = ANY($1::bigint[])`, [deletedIds]);
    await removeSearchDocuments(tx, s, deletedIds);
    await timeseries.deleteEntities(tx, deleted);
    await tx.execute(`DELETE FROM ${s}.entities WHERE id = ANY($1::bigint[])`, [deletedIds]);
  }

  await putAspects(tx, s, kept, ids);
  const aspectDeletes = kept.flatMap((w) => (w.delete ?? []).map((name) => [ids.get(w.urn)!, name] as const));
  if (aspectDeletes.length > 0) {
    await tx.execute(
      `DELETE FROM ${s}.aspects a USING unnest($1::bigint[], $2::text[]) AS d(entity_id, name)
       WHERE a.entity_id = d.entity_id AND a.name = d.name`,
      [aspectDeletes.map((d) => d[0]), aspectDeletes.map((d) => d[1])],
    );
  }

  const removedDocs = kept.filter((w) => w.searchDocument === null && existing.has(w.urn)).map((w) => ids.get(w.urn)!);
  await removeSearchDocuments(tx, s, removedDocs);
  const newDocs = kept.filter((w) => w.searchDocument);
  await writeSearchDocuments(
    tx,
    s,
    newDocs.map((w) => ({ entityId: ids.get(w.urn)!, doc: w.searchDocument! })),
    newDocs.filter((w) => existing.has(w.urn)).map((w) => ids.get(w.urn)!),
  );
}

/** Inserts or replaces aspects; when one write names an aspect twice, the last one counts. */
async function putAspects(tx: Queryable, s: string, writes: readonly EntityWrite[], ids: ReadonlyMap<string, string>): Promise<void> {
  const rows = new Map<string, { entityId: string; put: NonNullable<EntityWrite['put']>[number] }>();
  for (const write of writes) {
    const entityId = ids.get(write.urn)!;
    for (const put of write.put ?? []) rows.set(`${entityId}\u0000${put.name}`, { entityId, put });
  }
  if (rows.size === 0) return;
  const list = [...rows.values()];
  await tx.execute(
    `INSERT INTO ${s}.aspects (entity_id, name, value, version, created_time, created_actor, modified_time, modified_actor, system_metadata)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::text[])
     ON CONFLICT (entity_id, name) DO UPDATE SET
       value = excluded.value, version = excluded.version, created_time = excluded.created_time, created_actor = excluded.created_actor,
       modified_time = excluded.modified_time, modified_actor = excluded.modified_actor, system_metadata = excluded.system_metadata`,
    [
      list.map((r) => r.entityId),
      list.map((r) => r.put.name),
      list.map((r) => JSON.stringify(r.put.value)),
      list.map((r) => r.put.version),
      list.map((r) => r.put.created.time),
      list.map((r) => r.put.created.actor),
      list.map((r) => r.put.lastModified.time),
      list.map((r) => r.put.lastModified.actor),
      list.map((r) => (r.put.systemMetadata ? JSON.stringify(r.put.systemMetadata) : null)),
    ],
  );
}

/**
 * The whole batch in one transaction on one connection: entities run by run, the fault injector after
 * each entity, then job completions (before insertions: a job that completes itself and queues its
 * follow-up under the same dedupe key must not have the follow-up dropped as a duplicate of itself),
 * then new jobs.
 */
export async function commit(
  h: PgHandle,
  timeseries: TimeseriesStore,
  batch: WriteBatch,
  faultInjector: FaultInjectionOptions['faultInjector'],
): Promise<void> {
  const entities = batch.entities ?? [];
  if (entities.length === 0 && !batch.jobs?.length && !batch.completeJobs?.length) return;
  const now = Date.now();
  await h.transaction(async (tx) => {
    let entityIndex = 0;
    for (const run of runsOfDistinctUrns(entities)) {
      await writeRun(tx, h.s, timeseries, run);
      for (const write of run) faultInjector?.({ entityIndex: entityIndex++, urn: write.urn });
    }
    if (batch.completeJobs?.length) await jobs.completeJobs(tx, h.s, batch.completeJobs);
    if (batch.jobs?.length) await jobs.insertJobs(tx, h.s, batch.jobs, now);
  });
}
