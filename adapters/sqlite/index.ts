import { closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type {
  AdapterCapabilities,
  AggregateRequest,
  FacetResult,
  FaultInjectionOptions,
  SearchRequest,
  SearchResponse,
  StorageAdapter,
  StoredEntity,
  WriteBatch,
} from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';
import { ChangeSignal } from '../../src/adapter/change-signal';
import * as aspects from './aspects';
import * as changes from './changes';
import { dictionaryOf } from './dictionary';
import { createGroupCommitter, type BatchOutcome } from './group-commit';
import { createSqliteInitialLoad, recoverInitialLoad } from './initial-load';
import * as jobs from './jobs';
import { migrate } from './schema';
import * as search from './search';
import * as searchStore from './search-store';
import { createHandle, type SqliteHandle } from './statements';
import * as timeseries from './timeseries';

/** How often a change-feed follower looks for commits of other processes (PRAGMA data_version). */
const CHANGE_POLL_MS = 20;

export { backupSqliteDatabase } from './backup';
export type { SqliteBackupResult } from './backup';

export interface SqliteAdapterOptions extends FaultInjectionOptions {
  /** Path of the database file, or `':memory:'`. */
  filename: string;
  /** How long a writer waits for another process's lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * `'full'` (the default): an acknowledged write survives a power loss (`synchronous = FULL`: WAL synced
   * at every commit). `'normal'`: faster; an acknowledged write survives a crash of the process but the
   * last ones may be lost on power loss (`synchronous = NORMAL`). Measured costs: docs/adapters.md.
   */
  durability?: SqliteDurability;
}

export type SqliteDurability = 'full' | 'normal';

/** Batches of at least this many entities write their full text into FTS5 directly (search-store.ts). */
const DIRECT_TEXT_BATCH = 200;

/**
 * A group (group-commit.ts) takes queued batches up to this many entities: enough for every
 * concurrent single write, while bulk batches of 1,000 still commit one by one.
 */
const GROUP_MAX_ENTITIES = 1_000;

/** A new database file is created readable by its owner only: it holds token hashes and policies. */
const FILE_MODE = 0o600;

function createOwnerOnlyFile(filename: string): void {
  if (filename === ':memory:' || filename.startsWith('file:') || existsSync(filename)) return;
  try {
    closeSync(openSync(filename, 'wx', FILE_MODE));
  } catch (error) {
    // Another process made it first: fine. Anything else (no such directory...) is for SQLite to report.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return;
  }
}

/** Entity writes before the first `PRAGMA optimize` run; the gap doubles after each run, up to the maximum. */
const OPTIMIZE_FIRST = 10_000;
const OPTIMIZE_MAX_GAP = 1_000_000;

const CAPABILITIES: AdapterCapabilities = {
  durable: true,
  changeToken: true,
  changeFeed: true,
  timeseriesInCommit: true,
};

/**
 * The SQLite adapter: better-sqlite3 on a real file (or `':memory:'`), WAL, cached prepared
 * statements, migrations on `user_version`, every multi-row write in one transaction.
 */
export function createSqliteAdapter(options: SqliteAdapterOptions): StorageAdapter {
  if (!options || typeof options.filename !== 'string' || options.filename === '') {
    throw new CatalogError('INVALID_INPUT', 'createSqliteAdapter: filename is required (a path or ":memory:")', {
      details: [{ path: 'filename', message: 'is required' }],
    });
  }
  const durability = options.durability ?? 'full';
  if (durability !== 'full' && durability !== 'normal') {
    throw new CatalogError(
      'INVALID_INPUT',
      `createSqliteAdapter: durability must be "full" or "normal", got ${JSON.stringify(durability)}`,
      {
        details: [{ path: 'durability', message: 'must be "full" or "normal"' }],
      },
    );
  }
  let handle: SqliteHandle | undefined;
  let closed = false;
  const changeSignal = new ChangeSignal();
  let writesSinceOptimize = 0;
  let optimizeGap = OPTIMIZE_FIRST;

  function h(): SqliteHandle {
    if (closed) throw new Error('the SQLite adapter is closed');
    if (!handle) throw new Error('the SQLite adapter is not open: call open() first');
    return handle;
  }

  function scanEntities(request: {
    entityType?: string;
    requireAspect?: string;
    aspectNames?: readonly string[];
    afterUrn?: string;
    limit: number;
  }): StoredEntity[] {
    const db = h();
    const conditions = ['e.urn > @after'];
    const aspectId = request.requireAspect === undefined ? undefined : (dictionaryOf(db).find(request.requireAspect) ?? -1);
    if (aspectId !== undefined) conditions.push('EXISTS (SELECT 1 FROM aspects x WHERE x.entity_id = e.entity_id AND x.name_id = @aspect)');
    const values = { after: request.afterUrn ?? '', limit: request.limit, ...(aspectId !== undefined ? { aspect: aspectId } : {}) };
    let page: string[];
    if (request.entityType === undefined) {
      page = db
        .stmt(`SELECT e.urn FROM entities e WHERE ${conditions.join(' AND ')} ORDER BY e.urn LIMIT @limit`)
        .pluck()
        .all(values) as string[];
    } else {
      // entities_by_scope is (removed, entity_type, urn): with each removed state (no search document,
      // 0, 1) the type's entities are a URN-ordered range. A page is the first `limit` of the three.
      page = [];
      for (const removed of ['e.removed IS NULL', 'e.removed = 0', 'e.removed = 1']) {
        const sql = `SELECT e.urn FROM entities e INDEXED BY entities_by_scope WHERE ${removed} AND e.entity_type = @entityType AND ${conditions.join(' AND ')}
          ORDER BY e.urn LIMIT @limit`;
        page.push(
          ...(db
            .stmt(sql)
            .pluck()
            .all({ ...values, entityType: request.entityType }) as string[]),
        );
      }
      page = page.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, request.limit);
    }
    return aspects.readEntities(db, page, request.aspectNames);
  }

  /** Writes one batch; runs inside a transaction (its own, or a savepoint of its group's). */
  function applyBatch(db: SqliteHandle, batch: WriteBatch): void {
    const now = batch.now ?? Date.now();
    const dictionary = dictionaryOf(db);
    // The aspects this batch writes, for the events that take their value from the row (changes.ts).
    const puts: changes.PutIndex = new Map();
    searchStore.resetKeyCounts(db);
    const directText = (batch.entities?.length ?? 0) >= DIRECT_TEXT_BATCH;
    if (directText) searchStore.movePendingText(db);
    // Timeseries rows of the batch, in the same transaction.
    for (const { index, rows } of batch.timeseries ?? []) if (rows.length) timeseries.appendRows(db, index, rows);
    (batch.entities ?? []).forEach((write, entityIndex) => {
      const existing = db.stmt('SELECT entity_id AS id, version FROM entities WHERE urn = ?').get(write.urn) as
        { id: number; version: number } | undefined;
      const found = existing?.version ?? 0;
      if (found !== write.expectVersion) {
        throw new CatalogError('CONFLICT', `${write.urn}: expected version ${write.expectVersion}, found ${found}`);
      }
      if (write.deleteEntity) {
        if (existing) {
          changes.detachEntity(db, existing.id, write.urn); // change feed, kept versions
          db.stmt('DELETE FROM aspects WHERE entity_id = ?').run(existing.id);
          searchStore.removeSearchDocument(db, existing.id, directText);
          timeseries.deleteEntityTimeseries(db, write.entityType, write.urn);
          db.stmt('DELETE FROM entities WHERE entity_id = ?').run(existing.id);
        }
      } else {
        let entityId: number;
        let prepared: searchStore.PreparedDocument | undefined;
        if (existing) {
          entityId = existing.id;
          db.stmt('UPDATE entities SET version = ? WHERE entity_id = ?').run(write.expectVersion + 1, entityId);
        } else {
          // A new entity row holds its search document's columns from the start (they are indexed).
          prepared = write.searchDocument ? searchStore.prepareSearchDocument(db, write.searchDocument) : undefined;
          entityId = Number(
            db
              .stmt('INSERT INTO entities (urn, entity_type, version, removed, key_ids) VALUES (?, ?, 1, ?, ?)')
              .run(write.urn, write.entityType, prepared?.removed ?? null, prepared?.keyIds ?? '').lastInsertRowid,
          );
        }
        for (const a of write.put ?? []) {
          // The row being replaced holds version a.version - 1 (the version the writer read).
          if (existing && a.version > 1) changes.detachAspectEvents(db, entityId, dictionary.idOf(a.name), a.version - 1);
          aspects.putAspect(db, entityId, a);
          puts.set(changes.putKey(write.urn, a.name), { entityId, put: a });
        }
        for (const name of write.delete ?? []) {
          const nameId = dictionary.find(name);
          if (nameId === undefined) continue;
          changes.detachAspectEvents(db, entityId, nameId);
          db.stmt('DELETE FROM aspects WHERE entity_id = ? AND name_id = ?').run(entityId, nameId);
        }
        if (write.searchDocument === null) searchStore.removeSearchDocument(db, entityId, directText);
        else if (write.searchDocument)
          searchStore.writeSearchDocument(db, entityId, write.searchDocument, existing !== undefined, directText, prepared);
      }
      options.faultInjector?.({ entityIndex, urn: write.urn });
    });
    searchStore.applyKeyCounts(db);
    // Completions first: a job that completes itself and queues its follow-up under the same
    // dedupe key must not have the follow-up dropped as a duplicate of itself.
    if (batch.completeJobs?.length) jobs.completeJobs(db, batch.completeJobs);
    if (batch.jobs?.length) jobs.insertJobs(db, batch.jobs, now);
    // Change feed (docs/changes.md): events and kept versions in the same transaction.
    if (batch.events?.length || batch.aspectVersions?.length) changes.writeChanges(db, batch.events, batch.aspectVersions, puts);
  }

  /**
   * Commits a group of batches in one transaction, so they share one sync (group-commit.ts). Each
   * batch runs in its own savepoint: one that fails (a CONFLICT, a fault) is rolled back alone and
   * reported to its writer; the others commit. A group of one is a plain transaction.
   */
  function commitGroup(batches: readonly WriteBatch[]): BatchOutcome[] {
    const db = h();
    const dictionary = dictionaryOf(db);
    const outcomes: BatchOutcome[] = [];
    try {
      if (batches.length === 1) {
        db.db.transaction(() => applyBatch(db, batches[0]!)).immediate();
        outcomes.push({ ok: true });
      } else {
        const inSavepoint = db.db.transaction((batch: WriteBatch) => applyBatch(db, batch));
        db.db
          .transaction(() => {
            for (const batch of batches) {
              const mark = dictionary.mark();
              try {
                inSavepoint(batch); // nested: better-sqlite3 runs it in a SAVEPOINT
                outcomes.push({ ok: true });
              } catch (error) {
                outcomes.push({ ok: false, error });
                dictionary.rollbackTo(mark);
                searchStore.forgetKeyIds(db);
                // SQLite rolled back the whole transaction (I/O error, disk full): the group fails.
                if (!db.db.inTransaction) throw error;
              }
            }
          })
          .immediate();
      }
    } catch (error) {
      dictionary.rolledBack();
      searchStore.forgetKeyIds(db);
      if (batches.length > 1) throw error;
      return [{ ok: false, error }];
    } finally {
      db.commits += batches.length;
    }
    dictionary.committed();
    batches.forEach((batch, i) => {
      if (outcomes[i]!.ok) afterCommit(db, batch);
    });
    return outcomes;
  }

  function afterCommit(db: SqliteHandle, batch: WriteBatch): void {
    if (batch.events?.length) changeSignal.notify();
    // Keep planner statistics current as the catalog grows: PRAGMA optimize re-analyses the tables whose
    // size changed a lot (approximately, analysis_limit), after 10,000 entity writes, then 20,000 more,
    // 40,000 more...: statistics follow a growing catalog, and a bulk load of a million pays a dozen runs.
    writesSinceOptimize += batch.entities?.length ?? 0;
    if (writesSinceOptimize >= optimizeGap) {
      writesSinceOptimize = 0;
      optimizeGap = Math.min(optimizeGap * 2, OPTIMIZE_MAX_GAP);
      db.db.pragma('optimize');
    }
  }

  const initialLoad = createSqliteInitialLoad(h, durability === 'normal' ? 'NORMAL' : 'FULL');

  const committer = createGroupCommitter(commitGroup, (batch) => Math.max(1, batch.entities?.length ?? 0), GROUP_MAX_ENTITIES);

  // Every member is async on the outside (the contract must fit network databases) and synchronous
  // inside: better-sqlite3 never holds a transaction open across an await.
  return {
    name: 'sqlite',
    capabilities: CAPABILITIES,
    async open() {
      if (closed) throw new Error('the SQLite adapter is closed');
      if (handle) return;
      createOwnerOnlyFile(options.filename);
      const db = new Database(options.filename);
      try {
        db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
        if ((db.pragma('user_version', { simple: true }) as number) === 0) db.pragma('auto_vacuum = INCREMENTAL');
        db.pragma('journal_mode = WAL');
        db.pragma(`synchronous = ${durability === 'normal' ? 'NORMAL' : 'FULL'}`);
        db.pragma('foreign_keys = OFF');
        db.pragma('cache_size = -65536');
        migrate(db);
        // A load that did not complete is rolled back (its process is gone) or refused (initial-load.ts).
        recoverInitialLoad(db);
        // IEQUAL lower-cases like JavaScript (SQLite's lower() only knows ASCII).
        db.function('mc_lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value));
        // Planner statistics: cheap approximate ANALYZE where they are missing or stale.
        db.pragma('analysis_limit = 1000');
        db.pragma('optimize = 0x10002');
      } catch (error) {
        db.close();
        throw error;
      }
      handle = createHandle(db);
    },
    async close() {
      if (closed) return;
      // Writes queued for the next group are committed before the connection goes.
      if (handle) committer.flush();
      // A load that did not complete leaves the catalog as it was before it (empty).
      if (handle) initialLoad.closing();
      closed = true;
      // What SQLite recommends before closing a long-lived connection: refresh stale statistics.
      try {
        if (handle?.db.open) handle.db.pragma('optimize');
      } catch {
        // Statistics are an optimisation: a busy or read-only file closes without them.
      }
      handle?.db.close();
      handle = undefined;
    },
    async readEntities(urns, aspectNames) {
      return aspects.readEntities(h(), urns, aspectNames);
    },
    async scanEntities(request) {
      return scanEntities(request);
    },
    async commit(batch) {
      h();
      if (initialLoad.blocksCommits()) throw new CatalogError('UNAVAILABLE', 'an initial load is in progress: writes wait for its end');
      return committer.submit(batch);
    },
    initialLoad: {
      begin: () => initialLoad.begin(),
      loadEntities: (writes) => initialLoad.loadEntities(writes),
      buildSearch: () => initialLoad.buildSearch(),
      complete: () => initialLoad.complete(),
      abandon: () => initialLoad.abandon(),
    },
    async changeToken() {
      return searchStore.databaseVersion(h());
    },
    async readChanges(query) {
      return changes.readChanges(h(), query);
    },
    async readAspectVersions(request) {
      return changes.readAspectVersions(h(), request);
    },
    async pruneChanges(request) {
      return changes.pruneChanges(h(), request);
    },
    async waitForChanges(request) {
      // In process: woken by commit. Other processes: PRAGMA data_version moves when another
      // connection commits to the file; it is polled every CHANGE_POLL_MS while waiting.
      const db = h();
      const newest = db.stmt('SELECT MAX(id) AS m FROM change_events').get() as { m: number | null };
      if ((newest.m ?? 0) > Number(request.afterId ?? 0)) return; // committed since the follower read
      const deadline = Date.now() + request.timeoutMs;
      const start = db.db.pragma('data_version', { simple: true }) as number;
      const commits = db.commits;
      while (!request.signal?.aborted && Date.now() < deadline) {
        await changeSignal.wait(Math.min(CHANGE_POLL_MS, deadline - Date.now()), request.signal);
        if (closed || !handle) return;
        if (db.commits !== commits || (db.db.pragma('data_version', { simple: true }) as number) !== start) return;
      }
    },
    async flushSearchIndex() {
      searchStore.flushSearchText(h());
    },
    async search(request: SearchRequest): Promise<SearchResponse> {
      return search.search(h(), request);
    },
    async aggregate(request: AggregateRequest): Promise<FacetResult[]> {
      return search.aggregate(h(), request);
    },
    async findEntitiesWithPropertyValues(request) {
      return searchStore.findEntitiesWithPropertyValues(h(), request);
    },
    async countEntitiesWithPropertyValues(propertyUrn, definitionKey) {
      return searchStore.countEntitiesWithPropertyValues(h(), propertyUrn, definitionKey);
    },
    async findEntitiesWithSeveralPropertyValues(request) {
      return search.findEntitiesWithSeveralPropertyValues(h(), request);
    },
    async claimJobs(request) {
      return jobs.claimJobs(h(), request);
    },
    async releaseJob(id, workerId, outcome) {
      jobs.releaseJob(h(), id, workerId, outcome);
    },
    async renewJobLease(id, workerId, lockedUntil) {
      return jobs.renewJobLease(h(), id, workerId, lockedUntil);
    },
    async listJobs(request) {
      return jobs.listJobs(h(), request);
    },
    async appendTimeseries(index, rows) {
      timeseries.appendTimeseries(h(), index, rows);
    },
    async queryTimeseries(query) {
      return timeseries.queryTimeseries(h(), query);
    },
    async timeseriesIndexSizes() {
      return timeseries.timeseriesIndexSizes(h());
    },
    async countTimeseries(index, endTimeMillis) {
      return timeseries.countTimeseries(h(), index, endTimeMillis);
    },
    async deleteTimeseriesBatch(index, endTimeMillis, limit) {
      return timeseries.deleteTimeseriesBatch(h(), index, endTimeMillis, limit);
    },
    async rebuildTimeseriesIndex(index, endTimeMillis) {
      return timeseries.rebuildTimeseriesIndex(h(), index, endTimeMillis);
    },
  };
}
