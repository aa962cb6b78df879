import type {
  AspectVersionPut,
  AuditStamp,
  ChangeEvent,
  ChangePage,
  ChangeQuery,
  JsonObject,
  JsonValue,
  NewChangeEvent,
  StoredAspect,
} from '../../src/adapter/types';
import { ChangeSignal, parseChangeId } from '../../src/adapter/change-signal';
import { CatalogError } from '../../src/errors';
import { copyJson, sameJson, toJsonText } from './json-copy';
import { flatText } from './stored-text';
import type { UndoLog } from './undo-log';

/** A deep copy that shares strings with the original (structuredClone copies them too). */
const copy = <T>(value: T): T => copyJson(value as JsonValue) as T;

/**
 * A stored event: its fields as they are read back, with every JSON value (the aspect, the previous
 * value, system metadata) as text. Many thousand events with their aspect values as objects were
 * millions of small objects for every full garbage collection to visit; a text each is not looked
 * into. The texts are shared rather than copied: an aspect value the commit stored already is the
 * very string the entity's record holds, system metadata repeated from event to event is held once,
 * and the URN and names are the strings the event came with. The event is put together (and its texts
 * parsed) only when read, so a write never writes its events out as one JSON text.
 */
interface EventRecord {
  readonly id: number;
  readonly entityUrn: string;
  readonly entityType: string;
  readonly aspectName: string;
  readonly changeType: NewChangeEvent['changeType'];
  readonly time: number;
  /** The audit stamp, a private copy (shared by the events of one commit that carry the same stamp). */
  readonly created: Readonly<AuditStamp>;
  readonly aspect: string | null;
  readonly previousAspectValue: string | null;
  /** Always present (undefined when absent), so every record has one shape. */
  readonly systemMetadata: string | undefined;
}

/**
 * The JSON value of an event field as text: the text the commit stored already for that very object
 * (`valueTexts`), else written out here, refused with INVALID_INPUT when it is not JSON.
 */
function valueText(value: JsonObject | null, key: string, valueTexts: ReadonlyMap<object, string> | undefined): string | null {
  if (value === null) return null;
  return valueTexts?.get(value) ?? flatText(toJsonText(value, `/${key}`));
}

/** The event as the caller reads it: a copy of its own. */
function toChangeEvent(record: EventRecord): ChangeEvent {
  const event: ChangeEvent = {
    id: String(record.id),
    entityUrn: record.entityUrn,
    entityType: record.entityType,
    aspectName: record.aspectName,
    changeType: record.changeType,
    aspect: record.aspect === null ? null : (JSON.parse(record.aspect) as JsonObject),
    previousAspectValue: record.previousAspectValue === null ? null : (JSON.parse(record.previousAspectValue) as JsonObject),
    created: copy(record.created as AuditStamp),
  };
  if (record.systemMetadata !== undefined) event.systemMetadata = JSON.parse(record.systemMetadata) as JsonObject;
  return event;
}

/** Fields of an event that must be text: checked as `toJsonText` would have (a clear INVALID_INPUT, nothing kept). */
function textField(value: unknown, key: string): string {
  if (typeof value !== 'string') throw new CatalogError('INVALID_INPUT', `not a string at /${key}: ${typeof value}`);
  return value;
}

/**
 * The default bound: what a test or a preview reads back of the feed. An event takes about 50 bytes
 * of heap while its entity's record holds the same value text, at most about 1.3 KB for a dataset
 * with five structured properties once it does not (13 MB for 10,000, 130 MB for 100,000).
 */
const DEFAULT_MAX_EVENTS = 10_000;

/**
 * The JSON text of the last value seen per name and, once a value repeated it, a private copy to
 * compare the next one with (sameJson): the system metadata of a bulk load's events repeats from
 * entity to entity, and comparing it costs less than writing it out. Bounded.
 */
class RecentTexts {
  private readonly last = new Map<string, { text: string; known: JsonValue | undefined }>();

  textOf(name: string, value: JsonValue): string {
    const last = this.last.get(name);
    if (last?.known !== undefined && sameJson(value, last.known)) return last.text;
    const text = toJsonText(value, '/systemMetadata');
    if (last !== undefined && last.text === text) {
      last.known ??= JSON.parse(text) as JsonValue;
      return last.text;
    }
    if (last === undefined && this.last.size >= 64) this.last.clear();
    this.last.set(name, { text: flatText(text), known: undefined });
    return text;
  }
}

/** Dropped events are cut from the front of the list once this many have gathered (and half the list). */
const COMPACT_AFTER = 1_024;

/**
 * The change feed and the kept aspect versions of the memory adapter. Bounded: at most `maxEvents`
 * events (the oldest go first) and `maxVersions` kept versions per aspect, whatever retention says.
 */
export class ChangeStore {
  /** The events are `events[head..]`: dropping the oldest moves `head`, not every element. */
  private events: Array<EventRecord | undefined> = [];
  private head = 0;
  private lastId = 0;
  private readonly versions = new Map<string, StoredAspect[]>(); // key: urn \0 aspect, ascending version
  private readonly metadataTexts = new RecentTexts();
  /** Notified by each commit that appended events: it wakes the followers waiting in `waitForChanges`. */
  readonly signal = new ChangeSignal();

  constructor(
    private readonly maxEvents = DEFAULT_MAX_EVENTS,
    private readonly maxVersions = 100,
  ) {}

  /** `valueTexts`: JSON texts of this commit's aspect values by object, written already (entities.ts). */
  append(events: readonly NewChangeEvent[], log: UndoLog, valueTexts?: ReadonlyMap<object, string>): void {
    if (!events.length) return;
    const before = this.events.length;
    const lastId = this.lastId;
    // The events of one write share its audit stamp (one object): one private copy for all of them.
    let stampOf: AuditStamp | undefined;
    let stamp: Readonly<AuditStamp> | undefined;
    try {
      for (const event of events) {
        if (event.created !== stampOf) {
          stamp = Object.freeze(copy(event.created));
          if (!Number.isFinite(stamp.time)) throw new CatalogError('INVALID_INPUT', 'not a JSON value at /created/time');
          stampOf = event.created;
        }
        const metadata = event.systemMetadata;
        this.events.push({
          id: ++this.lastId,
          entityUrn: textField(event.entityUrn, 'entityUrn'),
          entityType: textField(event.entityType, 'entityType'),
          aspectName: textField(event.aspectName, 'aspectName'),
          changeType: textField(event.changeType, 'changeType') as NewChangeEvent['changeType'],
          time: stamp!.time,
          created: stamp!,
          aspect: valueText(event.aspect, 'aspect', valueTexts),
          previousAspectValue: valueText(event.previousAspectValue, 'previousAspectValue', valueTexts),
          systemMetadata: metadata === undefined ? undefined : this.metadataTexts.textOf(event.aspectName, metadata),
        });
      }
    } catch (error) {
      this.events.length = before;
      this.lastId = lastId;
      throw error;
    }
    log.record(() => {
      this.events.length = before;
      this.lastId = lastId;
    });
    // Trimming happens only after nothing can fail any more (see trim()).
  }

  /** Applies the bound; called once the commit can no longer roll back. */
  trim(): void {
    const kept = this.events.length - this.head;
    if (kept > this.maxEvents) this.dropOldest(kept - this.maxEvents);
  }

  /** Drops the `count` oldest events; the list is compacted only now and then (amortised O(1) per event). */
  private dropOldest(count: number): void {
    for (let i = this.head; i < this.head + count; i++) this.events[i] = undefined;
    this.head += count;
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.events.length) {
      this.events = this.events.slice(this.head);
      this.head = 0;
    }
  }

  keepVersions(puts: readonly AspectVersionPut[], log: UndoLog): void {
    for (const put of puts) {
      const key = `${put.urn}\0${put.aspect.name}`;
      const previous = this.versions.get(key);
      const list = (previous ?? []).filter((v) => v.version !== put.aspect.version);
      list.push(copy(put.aspect));
      list.sort((a, b) => a.version - b.version);
      if (list.length > this.maxVersions) list.splice(0, list.length - this.maxVersions);
      this.versions.set(key, list);
      log.record(() => (previous ? this.versions.set(key, previous) : this.versions.delete(key)));
    }
  }

  dropEntity(urn: string, log: UndoLog): void {
    const prefix = `${urn}\0`;
    for (const [key, list] of this.versions) {
      if (!key.startsWith(prefix)) continue;
      this.versions.delete(key);
      log.record(() => this.versions.set(key, list));
    }
  }

  readChanges(query: ChangeQuery): ChangePage {
    const after = query.after === undefined ? 0n : (parseChangeId(query.after) ?? 0n);
    const types = query.entityTypes?.length ? new Set(query.entityTypes) : undefined;
    const aspects = query.aspects?.length ? new Set(query.aspects) : undefined;
    const out: ChangeEvent[] = [];
    // Ids are dense and ascending: find the start by binary search.
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (BigInt(this.events[mid]!.id) <= after) lo = mid + 1;
      else hi = mid;
    }
    let scanned = after;
    for (let i = lo; i < this.events.length && out.length < query.limit; i++) {
      const e = this.events[i]!;
      scanned = BigInt(e.id);
      if (types && !types.has(e.entityType)) continue;
      if (aspects && !aspects.has(e.aspectName)) continue;
      out.push(toChangeEvent(e));
    }
    if (out.length < query.limit && BigInt(this.lastId) > scanned) scanned = BigInt(this.lastId);
    return {
      events: out,
      oldestId: this.events[this.head] === undefined ? undefined : String(this.events[this.head]!.id),
      lastId: this.lastId ? String(this.lastId) : undefined,
      scannedId: String(scanned),
    };
  }

  /** Returns at once when an event after `afterId` is there, else when the next commit appends one (or at the timeout). */
  async waitForChanges(request: { afterId?: string; timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    if (this.readChanges({ after: request.afterId, limit: 1 }).events.length) return;
    await this.signal.wait(request.timeoutMs, request.signal);
  }

  readAspectVersions(request: { urn: string; aspectName: string; beforeVersion?: number; limit: number }): StoredAspect[] {
    const list = this.versions.get(`${request.urn}\0${request.aspectName}`) ?? [];
    const before = request.beforeVersion ?? Number.POSITIVE_INFINITY;
    return list
      .filter((v) => v.version < before)
      .reverse()
      .slice(0, request.limit)
      .map(copy);
  }

  pruneChanges(request: { eventsBefore?: number; keepEvents?: number; versionsBefore?: number; keepVersions?: number; limit: number }): {
    events: number;
    versions: number;
  } {
    let drop = 0;
    if (request.keepEvents !== undefined) drop = Math.max(drop, this.events.length - this.head - request.keepEvents);
    if (request.eventsBefore !== undefined) {
      let i = this.head;
      while (i < this.events.length && this.events[i]!.time < request.eventsBefore) i++;
      drop = Math.max(drop, i - this.head);
    }
    drop = Math.min(drop, request.limit);
    if (drop > 0) this.dropOldest(drop);
    let versions = 0;
    for (const [key, list] of this.versions) {
      if (versions >= request.limit) break;
      let cut = 0;
      if (request.keepVersions !== undefined) cut = Math.max(cut, list.length - request.keepVersions);
      if (request.versionsBefore !== undefined) {
        let i = 0;
        while (i < list.length && list[i]!.lastModified.time < request.versionsBefore!) i++;
        cut = Math.max(cut, i);
      }
      cut = Math.min(cut, request.limit - versions);
      if (cut <= 0) continue;
      versions += cut;
      if (cut >= list.length) this.versions.delete(key);
      else this.versions.set(key, list.slice(cut));
    }
    return { events: drop, versions };
  }
}
