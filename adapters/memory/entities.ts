import type { AspectPut, AuditStamp, JsonObject, StoredAspect, StoredEntity } from '../../src/adapter/types';
import type { CommitTexts } from './commit-texts';
import { sameJson, toJsonText } from './json-copy';
import { SortedStrings } from './sorted-strings';
import { StoredTexts } from './stored-text';
import type { UndoLog } from './undo-log';

/**
 * Stored form of an aspect: its value (and system metadata) as JSON text. A string is one object the
 * garbage collector never looks into, where the value as objects was about thirty small objects per
 * entity (structured property values carry their own audit stamps): at 100k entities those made
 * every full collection slower. Writing stringifies (after the same checks as a deep copy), reading
 * parses, which gives the caller its own copy as before.
 */
interface AspectRecord {
  readonly name: string;
  readonly value: string;
  readonly version: number;
  readonly created: AuditStamp;
  readonly lastModified: AuditStamp;
  /** Always present (undefined when absent), so every record has one shape. */
  readonly systemMetadata: string | undefined;
}

/**
 * Stored form of an entity. Records are never changed in place: a write builds a new record and
 * swaps it in, so an undo step only has to put the previous record back.
 */
interface EntityRecord {
  readonly urn: string;
  readonly entityType: string;
  readonly version: number;
  /** A handful per entity: a list (by name, found by a linear search) takes less room than a Map. */
  readonly aspects: readonly AspectRecord[];
}

export interface ScanRequest {
  entityType?: string;
  requireAspect?: string;
  aspectNames?: readonly string[];
  afterUrn?: string;
  limit: number;
}

/** Entities by URN, with URN-ordered indexes over all of them and per entity type. */
export class EntityStore {
  private readonly records = new Map<string, EntityRecord>();
  private readonly allUrns = new SortedStrings();
  private readonly urnsByType = new Map<string, SortedStrings>();
  private readonly texts = new StoredTexts();

  /** The stored version, 0 when the entity does not exist. */
  versionOf(urn: string): number {
    return this.records.get(urn)?.version ?? 0;
  }

  entityTypeOf(urn: string): string | undefined {
    return this.records.get(urn)?.entityType;
  }

  read(urns: readonly string[], aspectNames?: readonly string[]): StoredEntity[] {
    const seen = new Set<string>();
    const entities: StoredEntity[] = [];
    for (const urn of urns) {
      if (seen.has(urn)) continue;
      seen.add(urn);
      const record = this.records.get(urn);
      if (record) entities.push(toStoredEntity(record, aspectNames));
    }
    return entities;
  }

  scan(request: ScanRequest): StoredEntity[] {
    const entities: StoredEntity[] = [];
    if (request.limit <= 0) return entities;
    const urns = request.entityType === undefined ? this.allUrns : this.urnsByType.get(request.entityType);
    if (!urns) return entities;
    for (const urn of urns.valuesAfter(request.afterUrn)) {
      const record = this.records.get(urn);
      if (!record) continue;
      if (request.requireAspect !== undefined && !record.aspects.some((a) => a.name === request.requireAspect)) continue;
      entities.push(toStoredEntity(record, request.aspectNames));
      if (entities.length >= request.limit) break;
    }
    return entities;
  }

  /**
   * Inserts or replaces aspects (stored as private copies) and deletes aspect names, creating the
   * entity when it does not exist. The entity type of an existing entity does not change.
   */
  write(
    urn: string,
    entityType: string,
    version: number,
    put: readonly AspectPut[],
    deleted: readonly string[],
    log: UndoLog,
    valueTexts?: CommitTexts,
  ): void {
    const previous = this.records.get(urn);
    // As a Map would: a replaced aspect keeps its place, a new one goes last, deletions come after the puts.
    const aspects: AspectRecord[] = previous === undefined ? [] : [...previous.aspects];
    for (const aspect of put) {
      const record = this.toRecord(aspect);
      valueTexts?.add(aspect.value, record.value);
      const at = aspects.findIndex((a) => a.name === aspect.name);
      if (at >= 0) aspects[at] = record;
      else aspects.push(record);
    }
    for (const name of deleted) {
      const at = aspects.findIndex((a) => a.name === name);
      if (at >= 0) aspects.splice(at, 1);
    }
    this.replace(urn, previous, { urn, entityType: previous?.entityType ?? entityType, version, aspects }, log);
  }

  delete(urn: string, log: UndoLog): void {
    this.replace(urn, this.records.get(urn), undefined, log);
  }

  /** `previous`: the record stored now (read once by the caller). */
  private replace(urn: string, previous: EntityRecord | undefined, next: EntityRecord | undefined, log: UndoLog): void {
    if (previous === next) return;
    this.swap(urn, previous, next);
    log.record(() => this.swap(urn, next, previous));
  }

  private swap(urn: string, current: EntityRecord | undefined, next: EntityRecord | undefined): void {
    if (next) {
      this.records.set(urn, next);
      if (!current) {
        this.allUrns.addLater(urn);
        this.typeIndex(next.entityType).addLater(urn);
      }
    } else if (current) {
      this.records.delete(urn);
      this.allUrns.delete(urn);
      this.urnsByType.get(current.entityType)?.delete(urn);
    }
  }

  /** The last audit stamp stored: a batch stamps every aspect alike, so records share one immutable stamp. */
  private lastStamp: AuditStamp | undefined;

  private stamp(given: AuditStamp): AuditStamp {
    const last = this.lastStamp;
    if (last !== undefined && last.time === given.time && last.actor === given.actor) return last;
    this.lastStamp = Object.freeze({ time: given.time, actor: given.actor });
    return this.lastStamp;
  }

  /**
   * Per aspect name, the system metadata texts stored lately (a few: entities with different sets of
   * properties have different ones) and, once a write repeated one, a private copy of it to compare
   * the next with (sameJson): a bulk load stamps every entity alike. Bounded.
   */
  private readonly lastMetadata = new Map<string, Array<{ text: string; known: JsonObject | undefined }>>();

  /** Counts commits (`startCommit`): what is remembered by object identity holds within one commit only. */
  private commitSerial = 0;
  /**
   * The system metadata objects stored in the commit `serial` (the last few) with their texts: the
   * domain hands the entities of one write that name the same properties one shared object (a few
   * objects for a few sets of properties), which nobody can change while the commit runs, so the same
   * object within a commit has the same text (nothing compared).
   */
  private commitMetadata: { serial: number; seen: Array<{ name: string; value: JsonObject; text: string }> } = { serial: 0, seen: [] };

  /** Called before each commit's writes. */
  startCommit(): void {
    this.commitSerial += 1;
  }

  private metadataText(name: string, metadata: JsonObject): string {
    const known = this.commitMetadata;
    if (known.serial !== this.commitSerial) {
      known.serial = this.commitSerial;
      known.seen.length = 0;
    }
    for (const seen of known.seen) if (seen.value === metadata && seen.name === name) return seen.text;
    const text = this.metadataTextOf(name, metadata);
    if (known.seen.length >= 8) known.seen.shift();
    known.seen.push({ name, value: metadata, text });
    return text;
  }

  private metadataTextOf(name: string, metadata: JsonObject): string {
    let recent = this.lastMetadata.get(name);
    if (recent !== undefined) for (const { text, known } of recent) if (known !== undefined && sameJson(metadata, known)) return text;
    const text = this.texts.text(toJsonText(metadata));
    if (recent === undefined) {
      if (this.lastMetadata.size >= 64) this.lastMetadata.clear();
      recent = [];
      this.lastMetadata.set(name, recent);
    }
    const seen = recent.find((candidate) => candidate.text === text);
    if (seen !== undefined) seen.known ??= JSON.parse(text) as JsonObject;
    else {
      if (recent.length >= 4) recent.shift();
      recent.push({ text, known: undefined });
    }
    return text;
  }

  private toRecord(aspect: AspectPut): AspectRecord {
    return {
      name: aspect.name,
      value: this.texts.value(toJsonText(aspect.value)),
      version: aspect.version,
      created: this.stamp(aspect.created),
      lastModified: this.stamp(aspect.lastModified),
      systemMetadata: aspect.systemMetadata === undefined ? undefined : this.metadataText(aspect.name, aspect.systemMetadata),
    };
  }

  private typeIndex(entityType: string): SortedStrings {
    let urns = this.urnsByType.get(entityType);
    if (!urns) {
      urns = new SortedStrings();
      this.urnsByType.set(entityType, urns);
    }
    return urns;
  }
}

/** The caller's own copy of a stored aspect. */
function toStoredAspect(aspect: AspectRecord): StoredAspect {
  return {
    name: aspect.name,
    value: JSON.parse(aspect.value) as JsonObject,
    version: aspect.version,
    created: { time: aspect.created.time, actor: aspect.created.actor },
    lastModified: { time: aspect.lastModified.time, actor: aspect.lastModified.actor },
    ...(aspect.systemMetadata === undefined ? {} : { systemMetadata: JSON.parse(aspect.systemMetadata) as JsonObject }),
  };
}

/** A deep copy the caller owns, with only the named aspects (all when undefined). */
function toStoredEntity(record: EntityRecord, aspectNames: readonly string[] | undefined): StoredEntity {
  const entries: Array<[string, StoredAspect]> = [];
  if (aspectNames === undefined) {
    for (const aspect of record.aspects) entries.push([aspect.name, toStoredAspect(aspect)]);
  } else {
    for (const name of new Set(aspectNames)) {
      const aspect = record.aspects.find((a) => a.name === name);
      if (aspect) entries.push([name, toStoredAspect(aspect)]);
    }
  }
  // fromEntries defines own properties, so an aspect called `__proto__` stays an ordinary key.
  return { urn: record.urn, entityType: record.entityType, version: record.version, aspects: Object.fromEntries(entries) };
}
