/**
 * The change log `composeAdapter` supplies when the entity store does not serve one itself. Each event
 * is a reserved entity whose URN holds its zero-padded id (so the store's URN order is id order); a
 * head entity holds the last id given, and every commit with events writes it with its version checked,
 * so ids follow commit order also across processes. Kept versions of a domain entity's aspects live in
 * one reserved entity per domain entity, one aspect per kept version.
 */
import { ChangeSignal, parseChangeId } from './change-signal';
import type { ChangeEvent, ChangeLog, ChangePage, ChangeQuery } from './change-log';
import type { EntityStore, WriteBatch } from './entity-store';
import type { RecordMutation } from './store-job-queue';
import { padSequence, readRecord, RESERVED_URN_PREFIX, scanRecords, type RecordWrites } from './store-records';
import type { JsonObject, StoredAspect, StoredEntity } from './values';

const HEAD_URN = 'urn:metacatalog:changes';
const HEAD_TYPE = 'metacatalog.changes';
const EVENT_TYPE = 'metacatalog.change';
const EVENT_URN_PREFIX = `${RESERVED_URN_PREFIX}change:`;
const HISTORY_TYPE = 'metacatalog.history';
const HEAD = 'head';
const EVENT = 'event';

export interface StoreChangeLog extends ChangeLog {
  /** Appends the batch's events and keeps its aspect versions inside the commit; drops the history of deleted entities. */
  plan(batch: WriteBatch, writes: RecordWrites): Promise<void>;
  /** Wakes followers after a commit that added events. */
  committed(batch: WriteBatch): void;
}

const eventUrn = (id: bigint | number): string => `${EVENT_URN_PREFIX}${padSequence(Number(id))}`;
const historyUrn = (urn: string): string => `${RESERVED_URN_PREFIX}history:${urn}`;
const versionName = (aspect: string, version: number): string => `${aspect}@${padSequence(version)}`;

export function createStoreChangeLog(store: EntityStore, mutate: RecordMutation): StoreChangeLog {
  const signal = new ChangeSignal();

  async function lastId(): Promise<number> {
    const head = await readRecord(store, HEAD_URN);
    return (head.aspects[HEAD]?.value.lastId as number | undefined) ?? 0;
  }

  async function readChanges(query: ChangeQuery): Promise<ChangePage> {
    const last = await lastId();
    const after = query.after === undefined ? 0n : (parseChangeId(query.after) ?? 0n);
    const types = query.entityTypes?.length ? new Set(query.entityTypes) : undefined;
    const aspects = query.aspects?.length ? new Set(query.aspects) : undefined;
    const events: ChangeEvent[] = [];
    let scanned = after;
    if (query.limit > 0) {
      await scanRecords(
        store,
        EVENT_TYPE,
        (entity) => {
          const event = entity.aspects[EVENT]!.value as unknown as ChangeEvent;
          if (BigInt(event.id) > BigInt(last)) return false; // committed after the head was read: the next read has it
          scanned = BigInt(event.id);
          if ((!types || types.has(event.entityType)) && (!aspects || aspects.has(event.aspectName))) events.push(event);
          return events.length < query.limit;
        },
        after > 0n ? eventUrn(after) : undefined,
      );
    }
    if (events.length < query.limit && BigInt(last) > scanned) scanned = BigInt(last);
    const [oldest] = await store.scanEntities({ entityType: EVENT_TYPE, aspectNames: [], limit: 1 });
    return {
      events,
      oldestId: oldest ? String(Number(oldest.urn.slice(EVENT_URN_PREFIX.length))) : undefined,
      lastId: last ? String(last) : undefined,
      scannedId: String(scanned),
    };
  }

  return {
    async plan(batch, writes) {
      const deleted = (batch.entities ?? []).filter((w) => w.deleteEntity).map((w) => w.urn);
      const kept = batch.aspectVersions ?? [];
      const urns = [...new Set([...deleted, ...kept.map((v) => v.urn)])];
      if (urns.length) {
        const histories = new Map((await store.readEntities(urns.map(historyUrn))).map((e) => [e.urn, e]));
        const deletedSet = new Set(deleted);
        for (const urn of urns) {
          const history = histories.get(historyUrn(urn));
          const version = history?.version ?? 0;
          // Kept versions go with their entity (those this batch keeps for it are written after the drop).
          if (history && deletedSet.has(urn)) writes.remove(historyUrn(urn), HISTORY_TYPE, version, Object.keys(history.aspects));
          for (const put of kept.filter((v) => v.urn === urn)) {
            writes.put(
              historyUrn(urn),
              HISTORY_TYPE,
              version,
              versionName(put.aspect.name, put.aspect.version),
              put.aspect as unknown as JsonObject,
            );
          }
        }
      }
      if (!batch.events?.length) return;
      const head = await readRecord(store, HEAD_URN);
      let id = (head.aspects[HEAD]?.value.lastId as number | undefined) ?? 0;
      for (const event of batch.events) {
        id++;
        writes.put(eventUrn(id), EVENT_TYPE, 0, EVENT, { id: String(id), ...event } as unknown as JsonObject);
      }
      writes.put(HEAD_URN, HEAD_TYPE, head.version, HEAD, { lastId: id });
    },

    committed(batch) {
      if (batch.events?.length) signal.notify();
    },

    readChanges,

    async readAspectVersions(request) {
      const history = await readRecord(store, historyUrn(request.urn));
      const before = request.beforeVersion ?? Number.POSITIVE_INFINITY;
      return versionsOf(history, request.aspectName)
        .filter((v) => v.version < before)
        .reverse()
        .slice(0, Math.max(0, request.limit));
    },

    pruneChanges(request) {
      return mutate(async (writes) => {
        const events: StoredEntity[] = [];
        await scanRecords(store, EVENT_TYPE, (entity) => void events.push(entity));
        let drop = 0;
        if (request.keepEvents !== undefined) drop = Math.max(drop, events.length - request.keepEvents);
        if (request.eventsBefore !== undefined) {
          let i = 0;
          while (i < events.length && (events[i]!.aspects[EVENT]!.value as unknown as ChangeEvent).created.time < request.eventsBefore) i++;
          drop = Math.max(drop, i);
        }
        drop = Math.min(drop, request.limit);
        for (const event of events.slice(0, drop)) writes.entity(event.urn, EVENT_TYPE, event.version).deleteEntity = true;

        let versions = 0;
        await scanRecords(store, HISTORY_TYPE, (history) => {
          const byAspect = new Set(Object.keys(history.aspects).map((name) => name.slice(0, name.lastIndexOf('@'))));
          for (const aspectName of byAspect) {
            const list = versionsOf(history, aspectName);
            let cut = 0;
            if (request.keepVersions !== undefined) cut = Math.max(cut, list.length - request.keepVersions);
            if (request.versionsBefore !== undefined) {
              let i = 0;
              while (i < list.length && list[i]!.lastModified.time < request.versionsBefore) i++;
              cut = Math.max(cut, i);
            }
            cut = Math.min(cut, request.limit - versions);
            if (cut <= 0) continue;
            versions += cut;
            writes.remove(
              history.urn,
              HISTORY_TYPE,
              history.version,
              list.slice(0, cut).map((v) => versionName(aspectName, v.version)),
            );
          }
          return versions < request.limit;
        });
        return { events: drop, versions };
      });
    },

    async waitForChanges(request) {
      try {
        const page = await readChanges({ after: request.afterId, limit: 1 });
        if (page.events.length) return;
      } catch {
        return; // a closed store: nothing to wait for
      }
      await signal.wait(request.timeoutMs, request.signal);
    },
  };
}

/** Kept versions of one aspect, ascending. */
function versionsOf(history: StoredEntity, aspectName: string): StoredAspect[] {
  const prefix = `${aspectName}@`;
  return Object.entries(history.aspects)
    .filter(([name]) => name.startsWith(prefix))
    .map(([, aspect]) => aspect.value as unknown as StoredAspect)
    .sort((a, b) => a.version - b.version);
}
