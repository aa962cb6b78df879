/**
 * The records `composeAdapter` keeps in an entity store for the parts the store does not serve itself:
 * search documents, jobs, change events, kept aspect versions and timeseries rows. They are ordinary
 * entities and aspects in a reserved namespace, written by the store's own commit, so they are exactly
 * as atomic and as durable as the store. The composed adapter never shows them to the domain.
 */
import type { AspectPut, EntityStore, EntityWrite } from './entity-store';
import type { JsonObject, StoredEntity } from './values';

/** Every reserved entity's URN starts with this (the domain's URNs start with `urn:li:`). */
export const RESERVED_URN_PREFIX = 'urn:metacatalog:';
/** Every reserved entity's type starts with this. */
const RESERVED_TYPE_PREFIX = 'metacatalog.';
/** The aspect of a domain entity that holds its search document, when the store does not index them itself. */
export const SEARCH_DOCUMENT_ASPECT = 'metacatalog.searchDocument';

const RECORD_ACTOR = 'urn:li:corpuser:__metacatalog';

export function isReservedUrn(urn: string): boolean {
  return urn.startsWith(RESERVED_URN_PREFIX);
}

export function isReservedType(entityType: string): boolean {
  return entityType.startsWith(RESERVED_TYPE_PREFIX);
}

/** A record as an aspect to put: stamped with the batch's time and the catalog's own actor. */
export function recordAspect(name: string, value: JsonObject, now: number): AspectPut {
  const stamp = { time: now, actor: RECORD_ACTOR };
  return { name, value, version: 1, created: stamp, lastModified: stamp };
}

/** The entity as the domain may see it: without the aspects the composer keeps beside its own. */
export function withoutRecords(entity: StoredEntity): StoredEntity {
  if (!Object.prototype.hasOwnProperty.call(entity.aspects, SEARCH_DOCUMENT_ASPECT)) return entity;
  const aspects = { ...entity.aspects };
  delete aspects[SEARCH_DOCUMENT_ASPECT];
  return { ...entity, aspects };
}

/** Decimal digits of a sequence number, left-padded so that URN order is numeric order. */
export function padSequence(sequence: number): string {
  return String(sequence).padStart(16, '0');
}

/**
 * The changes one part plans for a commit, by reserved URN: merged into the batch after the domain's
 * own entities (so a fault injector's entity indexes stay the domain's).
 */
export class RecordWrites {
  private readonly writes = new Map<string, EntityWrite>();

  constructor(readonly now: number) {}

  /** The write of one reserved entity, created on first use with the version it was read at. */
  entity(urn: string, entityType: string, expectVersion: number): EntityWrite {
    let write = this.writes.get(urn);
    if (!write) {
      write = { urn, entityType, expectVersion };
      this.writes.set(urn, write);
    }
    return write;
  }

  put(urn: string, entityType: string, expectVersion: number, name: string, value: JsonObject): void {
    const write = this.entity(urn, entityType, expectVersion);
    (write.put ??= []).push(recordAspect(name, value, this.now));
  }

  remove(urn: string, entityType: string, expectVersion: number, names: readonly string[]): void {
    if (!names.length) return;
    const write = this.entity(urn, entityType, expectVersion);
    (write.delete ??= []).push(...names);
  }

  list(): EntityWrite[] {
    return [...this.writes.values()];
  }
}

/** Reads one reserved entity with all its aspects; version 0 and no aspects when it is not there yet. */
export async function readRecord(store: EntityStore, urn: string): Promise<StoredEntity> {
  const [entity] = await store.readEntities([urn]);
  return entity ?? { urn, entityType: '', version: 0, aspects: {} };
}

/** Every entity of one reserved type, in URN order, read in pages. */
export async function scanRecords(
  store: EntityStore,
  entityType: string,
  visit: (entity: StoredEntity) => boolean | void,
  afterUrn?: string,
): Promise<void> {
  let after = afterUrn;
  for (;;) {
    const page = await store.scanEntities({ entityType, afterUrn: after, limit: 500 });
    for (const entity of page) if (visit(entity) === false) return;
    if (page.length < 500) return;
    after = page.at(-1)!.urn;
  }
}
