import { entitiesFromRows, type EntityAspectRow } from '../../src/adapter/entity-rows';
import type { EntityWrite, FaultInjectionOptions, StoredEntity, WriteBatch } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import type { PgHandle, Queryable } from './database';
import { CommitGroups } from './group-commit';
import * as changes from './changes';
import * as jobs from './jobs';
import { Packer, storedJson } from './packing';
import type { PropertyKeys } from './property-keys';
import type { TimeseriesStore } from './timeseries';
import { WriteStatement } from './write-statement';

// Rows written before schema version 3 hold plain JSON and both stamps; later ones packed documents, and
// a modification stamp only when it differs from the creation stamp. Since version 6 the system
// metadata is a shared document of `aspect_metadata`.
const ASPECT_COLUMNS = `a.name, a.value, a.packed, a.version AS aspect_version, a.created_time, a.created_actor,
  COALESCE(a.modified_time, a.created_time) AS modified_time, COALESCE(a.modified_actor, a.created_actor) AS modified_actor,
  a.system_metadata, COALESCE(m.packed, a.packed_metadata) AS packed_metadata`;
const METADATA_JOIN = (s: string) => `LEFT JOIN ${s}.aspect_metadata m ON m.id = a.metadata_id`;

type AspectRow = EntityAspectRow & { packed: Buffer | null; packed_metadata: Buffer | null };

/** The rows as `entitiesFromRows` reads them: packed documents unpacked. */
function unpacked(rows: readonly AspectRow[]): EntityAspectRow[] {
  return rows.map(({ packed, packed_metadata, ...row }) =>
    packed || packed_metadata
      ? { ...row, value: storedJson(packed, row.value), system_metadata: storedJson(packed_metadata, row.system_metadata) }
      : row,
  );
}

export async function readEntities(h: PgHandle, urns: readonly string[], aspectNames?: readonly string[]): Promise<StoredEntity[]> {
  if (urns.length === 0) return [];
  const rows = await h.query<AspectRow>(
    `SELECT e.urn, e.entity_type, e.version, ${ASPECT_COLUMNS}
     FROM ${h.s}.entities e
     LEFT JOIN ${h.s}.aspects a ON a.entity_id = e.id AND ($2::text[] IS NULL OR a.name = ANY($2::text[]))
     ${METADATA_JOIN(h.s)}
     WHERE e.urn = ANY($1::text[])
     ORDER BY e.urn, a.name`,
    [[...new Set(urns)], aspectNames ? [...aspectNames] : null],
  );
  return entitiesFromRows(urns, unpacked(rows));
}

export async function scanEntities(
  h: PgHandle,
  request: { entityType?: string; requireAspect?: string; aspectNames?: readonly string[]; afterUrn?: string; limit: number },
): Promise<StoredEntity[]> {
  const rows = await h.query<AspectRow>(
    `WITH page AS (
       SELECT e.id, e.urn, e.entity_type, e.version FROM ${h.s}.entities e
       WHERE ($1::text IS NULL OR e.entity_type = $1) AND e.urn > $2
         AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM ${h.s}.aspects x WHERE x.entity_id = e.id AND x.name = $3))
       ORDER BY e.urn LIMIT $4
     )
     SELECT e.urn, e.entity_type, e.version, ${ASPECT_COLUMNS}
     FROM page e
     LEFT JOIN ${h.s}.aspects a ON a.entity_id = e.id AND ($5::text[] IS NULL OR a.name = ANY($5::text[]))
     ${METADATA_JOIN(h.s)}
     ORDER BY e.urn, a.name`,
    [
      request.entityType ?? null,
      request.afterUrn ?? '',
      request.requireAspect ?? null,
      request.limit,
      request.aspectNames ? [...request.aspectNames] : null,
    ],
  );
  return entitiesFromRows(
    rows.map((r) => r.urn),
    unpacked(rows),
  );
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

/** The adapter's stores a commit writes through besides its own tables. */
export interface Stores {
  timeseries: TimeseriesStore;
  keys: PropertyKeys;
  /** The commits of this adapter, grouped (group-commit.ts); made by the first commit. */
  groups?: CommitGroups;
}

const conflict = (write: EntityWrite, found: number): CatalogError =>
  new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);

const byUrn = (a: EntityWrite, b: EntityWrite): number => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0);

/**
 * Writes one run of entities (distinct URNs) inside the caller's transaction, in two statements.
 *
 * Optimistic versioning: the first statement locks the rows of the entities that exist, in URN order
 * (`FOR UPDATE`, so concurrent batches over the same entities queue instead of deadlocking), and draws
 * ids for the new ones; the versions are compared with what the domain read. The second applies everything at once as
 * data-modifying CTEs over arrays (see WriteStatement): new entities (`ON CONFLICT DO NOTHING`: one that
 * another writer created meanwhile is missing from the result, which is a CONFLICT too), versions,
 * deleted entities, aspects, search documents, standard fields and typed property values.
 */
async function writeRun(
  tx: Queryable,
  s: string,
  stores: Stores,
  packer: Packer,
  run: readonly EntityWrite[],
  refs: changes.BatchRefs,
): Promise<string[]> {
  const { timeseries, keys } = stores;
  // One statement: the rows of the entities that exist, locked in URN order, and ids for the new ones,
  // drawn from the identity's sequence (a gap when the commit fails is harmless).
  const rows = await tx.query<{ id: string; urn: string | null; version: number | null }>(
    `WITH locked AS (SELECT id, urn, version FROM ${s}.entities WHERE urn = ANY($1::text[]) ORDER BY urn FOR UPDATE)
     SELECT id::text AS id, urn, version FROM locked
     UNION ALL
     SELECT nextval(pg_get_serial_sequence($3, 'id'))::text, NULL, NULL FROM unnest($2::text[]) AS w(urn) WHERE w.urn NOT IN (SELECT urn FROM locked)`,
    [run.map((w) => w.urn), run.filter((w) => !w.deleteEntity).map((w) => w.urn), `${s}.entities`],
  );
  const existing = new Map(rows.flatMap((r) => (r.urn === null ? [] : [[r.urn, { id: r.id, version: r.version! }] as const])));
  for (const write of run) {
    const found = existing.get(write.urn)?.version ?? 0;
    if (found !== write.expectVersion) throw conflict(write, found);
  }
  const existingId = (write: EntityWrite): string | undefined => existing.get(write.urn)?.id;
  const toCreate = run.filter((w) => !w.deleteEntity && !existing.has(w.urn)).sort(byUrn);
  const fresh = rows.filter((r) => r.urn === null);
  const newIds = new Map(toCreate.map((w, i) => [w.urn, fresh[i]!.id] as const));
  const idOf = (write: EntityWrite): string => existingId(write) ?? newIds.get(write.urn)!;

  const statement = new WriteStatement(s, packer);
  statement.createEntities(toCreate.map((write) => ({ write, id: newIds.get(write.urn)! })));
  const kept = run.filter((w) => !w.deleteEntity);
  statement.bumpVersions(kept.flatMap((w) => existingId(w) ?? []));
  const deleted = run.filter((w) => w.deleteEntity && existing.has(w.urn));
  statement.deleteEntities(deleted.map((w) => existingId(w)!));
  statement.putAspects(kept, idOf, (w) => existing.has(w.urn));
  statement.deleteAspects(kept.filter((w) => existing.has(w.urn)).map((w) => ({ entityId: existingId(w)!, names: w.delete ?? [] })));
  statement.removeSearchDocuments(kept.filter((w) => w.searchDocument === null && existing.has(w.urn)).map((w) => existingId(w)!));
  statement.writeSearchDocuments(
    kept
      .filter((w) => w.searchDocument)
      .map((w) => ({ urn: w.urn, entityId: idOf(w), isNew: !existing.has(w.urn), doc: w.searchDocument! })),
    (property, definitionKey) => keys.get(property, definitionKey),
    (name) => keys.nameId(name),
  );

  const { created, dropped } = await statement.run(tx);
  if (created.length !== toCreate.length) {
    const made = new Set(created);
    const lost = toCreate.find((w) => !made.has(w.urn))!;
    throw new CatalogError('CONFLICT', `${lost.urn}: expected version 0, but another writer created it`);
  }
  await timeseries.deleteEntities(tx, deleted);
  refs.record(run, idOf);
  return dropped;
}

/**
 * Removes the metadata documents of `candidates` that no aspect row refers to any more. Their rows are
 * locked first, in a statement of their own: a commit that is adding a reference to one holds its lock
 * (ON CONFLICT DO UPDATE) until it commits, and the check that follows, with a snapshot taken after the
 * lock was granted, sees that reference. A commit that adds one after the document went inserts it anew.
 */
async function dropUnreferencedMetadata(tx: Queryable, s: string, candidates: readonly string[]): Promise<void> {
  if (candidates.length === 0) return;
  const ids = [...new Set(candidates)].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  await tx.query(`SELECT id FROM ${s}.aspect_metadata WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, [ids]);
  await tx.execute(
    `DELETE FROM ${s}.aspect_metadata m WHERE m.id = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM ${s}.aspects a WHERE a.metadata_id = m.id)`,
    [ids],
  );
}

/**
 * Commits a batch atomically. Concurrent commits of this adapter are grouped into one transaction
 * (group-commit.ts), each acknowledged once that transaction committed; with a fault injector (tests
 * of partial failure) every batch goes alone, so that entity indexes are the batch's own.
 */
export async function commit(
  h: PgHandle,
  stores: Stores,
  batch: WriteBatch,
  faultInjector: FaultInjectionOptions['faultInjector'],
): Promise<void> {
  const entities = batch.entities ?? [];
  if (entities.length === 0 && !batch.jobs?.length && !batch.completeJobs?.length && !batch.events?.length && !batch.timeseries?.length)
    return;
  if (faultInjector) return commitTogether(h, stores, [batch], faultInjector);
  stores.groups ??= new CommitGroups((batches) => commitTogether(h, stores, batches, undefined));
  return stores.groups.commit(batch);
}

/**
 * Batches (of distinct entities) in one transaction on one connection: entities run by run, the fault
 * injector after each entity, then job completions (before insertions: a job that completes itself and
 * queues its follow-up under the same dedupe key must not have the follow-up dropped as a duplicate of
 * itself), then new jobs (each batch's with its own time), then the change feed of all of them.
 */
async function commitTogether(
  h: PgHandle,
  stores: Stores,
  batches: readonly WriteBatch[],
  faultInjector: FaultInjectionOptions['faultInjector'],
): Promise<void> {
  const entities = batches.length === 1 ? (batches[0]!.entities ?? []) : batches.flatMap((b) => b.entities ?? []);
  const docs = entities.map((w) => w.searchDocument);
  await stores.keys.prepare(docs);
  await stores.keys.prepareNames(docs);
  const packer = new Packer();
  const completeJobs = batches.flatMap((b) => b.completeJobs ?? []);
  const feed: WriteBatch = {
    entities,
    events: batches.flatMap((b) => b.events ?? []),
    aspectVersions: batches.flatMap((b) => b.aspectVersions ?? []),
  };
  await h.transaction(async (tx) => {
    // Timeseries rows of every batch, in the same transaction.
    for (const batch of batches) for (const { index, rows } of batch.timeseries ?? []) await stores.timeseries.appendIn(tx, index, rows);
    let entityIndex = 0;
    const refs = new changes.BatchRefs();
    const dropped: string[] = [];
    for (const run of runsOfDistinctUrns(entities)) {
      dropped.push(...(await writeRun(tx, h.s, stores, packer, run, refs)));
      for (const write of run) faultInjector?.({ entityIndex: entityIndex++, urn: write.urn });
    }
    await dropUnreferencedMetadata(tx, h.s, dropped);
    if (completeJobs.length) await jobs.completeJobs(tx, h.s, completeJobs);
    for (const batch of batches) if (batch.jobs?.length) await jobs.insertJobs(tx, h.s, batch.jobs, batch.now ?? Date.now());
    // Change feed (docs/changes.md): last, so the counter lock is held only until COMMIT.
    if (feed.events!.length || feed.aspectVersions!.length || entities.some((w) => w.deleteEntity))
      await changes.writeChanges(tx, h, feed, packer, refs);
  });
  stores.timeseries.remember(batches.flatMap((b) => (b.timeseries ?? []).map((t) => t.index.indexName)));
}
