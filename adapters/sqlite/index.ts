import type { AdapterCapabilities, EntityStore, PropertyValueIndex, StorageAdapter, WriteBatch } from '../../src/adapter/types';
import { ChangeSignal } from '../../src/adapter/change-signal';
import { composeAdapter } from '../../src/adapter/compose-adapter';
import { partOverHandle } from '../../src/adapter/part-binding';
import * as aspects from './aspects';
import * as changes from './changes';
import { waitForChanges } from './change-wait';
import { openConnection } from './connection';
import { createGroupCommitter } from './group-commit';
import * as jobs from './jobs';
import { checkedDurability, type SqliteAdapterOptions } from './options';
import * as propertyValues from './property-values';
import { scanEntities } from './scan';
import * as search from './search';
import * as searchStore from './search-store';
import { flushSearchText } from './search-text-queue';
import { createHandle, type SqliteHandle } from './statements';
import * as timeseries from './timeseries';
import { commitGroup } from './write-batch';

export { backupSqliteDatabase } from './backup';
export type { SqliteBackupResult } from './backup';

export type { SqliteAdapterOptions, SqliteDurability } from './options';

/**
 * A group (group-commit.ts) takes queued batches up to this many entities: enough for every
 * concurrent single write, while bulk batches of 1,000 still commit one by one.
 */
const GROUP_MAX_ENTITIES = 1_000;

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
 * statements, migrations on `user_version`, every multi-row write in one transaction. Composed from
 * its parts (`composeAdapter`): the entity store below, whose commit (write-batch.ts) writes what every
 * part keeps, and the modules that read each part, over the same connection.
 */
export function createSqliteAdapter(options: SqliteAdapterOptions): StorageAdapter & PropertyValueIndex {
  const durability = checkedDurability(options);
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

  const committer = createGroupCommitter(
    (batches: readonly WriteBatch[]) => {
      const db = h();
      const outcomes = commitGroup(db, batches, options.faultInjector);
      batches.forEach((batch, i) => {
        if (outcomes[i]!.ok) afterCommit(db, batch);
      });
      return outcomes;
    },
    (batch) => Math.max(1, batch.entities?.length ?? 0),
    GROUP_MAX_ENTITIES,
  );

  // Every member is async on the outside (the contract must fit network databases) and synchronous
  // inside: better-sqlite3 never holds a transaction open across an await.
  const entities: EntityStore = {
    name: 'sqlite',
    capabilities: CAPABILITIES,
    async open() {
      if (closed) throw new Error('the SQLite adapter is closed');
      if (!handle) handle = createHandle(openConnection(options, durability));
    },
    async close() {
      if (closed) return;
      // Writes queued for the next group are committed before the connection goes.
      if (handle) committer.flush();
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
    readEntities: async (urns, aspectNames) => aspects.readEntities(h(), urns, aspectNames),
    scanEntities: async (request) => scanEntities(h(), request),
    async commit(batch) {
      h();
      return committer.submit(batch);
    },
    changeToken: async () => searchStore.databaseVersion(h()),
  };

  return composeAdapter({
    entities,
    search: {
      ...partOverHandle('search', h, search),
      async flushSearchIndex() {
        flushSearchText(h());
      },
    },
    propertyValues: partOverHandle('propertyValues', h, propertyValues),
    jobs: partOverHandle('jobs', h, jobs),
    timeseries: partOverHandle('timeseries', h, timeseries),
    changes: partOverHandle('changes', h, {
      ...changes,
      waitForChanges: (db, request) => waitForChanges(db, request, changeSignal, () => !closed && handle !== undefined),
    }),
    committedByStore: ['search', 'jobs', 'timeseries', 'changes'],
  });
}
