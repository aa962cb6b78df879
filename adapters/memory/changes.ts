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
import type { CommitTexts } from './commit-texts';
import { flatText } from './stored-text';
import type { UndoLog } from './undo-log';

/** A deep copy that shares strings with the original (structuredClone copies them too). */
const copy = <T>(value: T): T => copyJson(value as JsonValue) as T;

/**
 * The events are kept in columns, one array per field (`EventColumns`), not as an object each: every
 * JSON value (the aspect, the previous value, system metadata) as text, shared rather than copied. An
 * aspect value the commit stored already is the very string the entity's record holds, system
 * metadata repeated from event to event is held once, the audit stamp is one frozen copy per commit,
 * and the URN and names are the strings the event came with. A bulk write appends two or three events
 * per entity: as objects they were the commit's most numerous allocation, each copied by the young
 * generation's collections for as long as the feed keeps it; in columns an event is a few slots of
 * arrays that live in the old generation. The event is put together (and its texts parsed) only when
 * read, so a write never writes its events out as one JSON text.
 */
class EventColumns {
  entityUrns: Array<string | undefined> = [];
  entityTypes: Array<string | undefined> = [];
  aspectNames: Array<string | undefined> = [];
  changeTypes: Array<NewChangeEvent['changeType'] | undefined> = [];
  /** The audit stamp, a private copy (shared by the events of one commit that carry the same stamp); its time is the event's. */
  created: Array<Readonly<AuditStamp> | undefined> = [];
  aspects: Array<string | null | undefined> = [];
  previousValues: Array<string | null | undefined> = [];
  systemMetadata: Array<string | undefined> = [];

  get length(): number {
    return this.entityUrns.length;
  }

  /** Cuts every column to `length` (the undo of an append). */
  truncate(length: number): void {
    this.entityUrns.length = length;
    this.entityTypes.length = length;
    this.aspectNames.length = length;
    this.changeTypes.length = length;
    this.created.length = length;
    this.aspects.length = length;
    this.previousValues.length = length;
    this.systemMetadata.length = length;
  }

  /** Lets go of what rows [from, to) hold (dropped events). */
  clear(from: number, to: number): void {
    this.entityUrns.fill(undefined, from, to);
    this.entityTypes.fill(undefined, from, to);
    this.aspectNames.fill(undefined, from, to);
    this.changeTypes.fill(undefined, from, to);
    this.created.fill(undefined, from, to);
    this.aspects.fill(undefined, from, to);
    this.previousValues.fill(undefined, from, to);
    this.systemMetadata.fill(undefined, from, to);
  }

  /** Takes the first `count` rows out (rows move down by `count`). */
  dropFront(count: number): void {
    this.entityUrns = this.entityUrns.slice(count);
    this.entityTypes = this.entityTypes.slice(count);
    this.aspectNames = this.aspectNames.slice(count);
    this.changeTypes = this.changeTypes.slice(count);
    this.created = this.created.slice(count);
    this.aspects = this.aspects.slice(count);
    this.previousValues = this.previousValues.slice(count);
    this.systemMetadata = this.systemMetadata.slice(count);
  }

  /** The time of row `i` (its audit stamp's). */
  time(i: number): number {
    return this.created[i]!.time;
  }

  /** The event of row `i` as the caller reads it (`id` its id): a copy of its own. */
  toChangeEvent(i: number, id: number): ChangeEvent {
    const aspect = this.aspects[i]!;
    const previous = this.previousValues[i]!;
    const event: ChangeEvent = {
      id: String(id),
      entityUrn: this.entityUrns[i]!,
      entityType: this.entityTypes[i]!,
      aspectName: this.aspectNames[i]!,
      changeType: this.changeTypes[i]!,
      aspect: aspect === null ? null : (JSON.parse(aspect) as JsonObject),
      previousAspectValue: previous === null ? null : (JSON.parse(previous) as JsonObject),
      created: copy(this.created[i] as AuditStamp),
    };
    const metadata = this.systemMetadata[i];
    if (metadata !== undefined) event.systemMetadata = JSON.parse(metadata) as JsonObject;
    return event;
  }
}

/**
 * The JSON value of an event field as text: the text the commit stored already for that very object
 * (`valueTexts`), else written out here, refused with INVALID_INPUT when it is not JSON.
 */
function valueText(value: JsonObject | null, key: string, valueTexts: CommitTexts | undefined): string | null {
  if (value === null) return null;
  return valueTexts?.textOf(value) ?? flatText(toJsonText(value, `/${key}`));
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
  /** The events are rows `head..` of the columns: dropping the oldest moves `head`, not every row. */
  private events = new EventColumns();
  private head = 0;
  /** The id of row 0 (ids are dense and ascending: row i holds event `firstId + i`). */
  private firstId = 1;
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
  append(events: readonly NewChangeEvent[], log: UndoLog, valueTexts?: CommitTexts): void {
    if (!events.length) return;
    const columns = this.events;
    const before = columns.length;
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
        // Every field checked and written out before any column grows: a throw leaves the rows aligned.
        const entityUrn = textField(event.entityUrn, 'entityUrn');
        const entityType = textField(event.entityType, 'entityType');
        const aspectName = textField(event.aspectName, 'aspectName');
        const changeType = textField(event.changeType, 'changeType') as NewChangeEvent['changeType'];
        const aspect = valueText(event.aspect, 'aspect', valueTexts);
        const previous = valueText(event.previousAspectValue, 'previousAspectValue', valueTexts);
        const metadataText = metadata === undefined ? undefined : this.metadataTexts.textOf(aspectName, metadata);
        columns.entityUrns.push(entityUrn);
        columns.entityTypes.push(entityType);
        columns.aspectNames.push(aspectName);
        columns.changeTypes.push(changeType);
        columns.created.push(stamp!);
        columns.aspects.push(aspect);
        columns.previousValues.push(previous);
        columns.systemMetadata.push(metadataText);
        this.lastId += 1;
      }
    } catch (error) {
      columns.truncate(before);
      this.lastId = lastId;
      throw error;
    }
    log.record(() => {
      columns.truncate(before);
      this.lastId = lastId;
    });
    // Trimming happens only after nothing can fail any more (see trim()).
  }

  /** Applies the bound; called once the commit can no longer roll back. */
  trim(): void {
    const kept = this.events.length - this.head;
    if (kept > this.maxEvents) this.dropOldest(kept - this.maxEvents);
  }

  /** Drops the `count` oldest events; the columns are compacted only now and then (amortised O(1) per event). */
  private dropOldest(count: number): void {
    this.events.clear(this.head, this.head + count);
    this.head += count;
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.events.length) {
      this.events.dropFront(this.head);
      this.firstId += this.head;
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
    const columns = this.events;
    const end = columns.length;
    // Ids are dense and ascending: the first row after `after` is found by subtraction.
    const skip = after < BigInt(this.firstId) ? 0 : Number(after - BigInt(this.firstId)) + 1;
    const start = Math.min(end, Math.max(this.head, skip));
    let scanned = after;
    for (let i = start; i < end && out.length < query.limit; i++) {
      scanned = BigInt(this.firstId + i);
      if (types && !types.has(columns.entityTypes[i]!)) continue;
      if (aspects && !aspects.has(columns.aspectNames[i]!)) continue;
      out.push(columns.toChangeEvent(i, this.firstId + i));
    }
    if (out.length < query.limit && BigInt(this.lastId) > scanned) scanned = BigInt(this.lastId);
    return {
      events: out,
      oldestId: this.head < end ? String(this.firstId + this.head) : undefined,
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
      while (i < this.events.length && this.events.time(i) < request.eventsBefore) i++;
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
