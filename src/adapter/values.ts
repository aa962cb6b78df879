/**
 * The values every part of the adapter contract shares: JSON, audit stamps, stored aspects and
 * entities. No behaviour here; each part's file says what it promises.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Who did something and when (epoch milliseconds). */
export interface AuditStamp {
  time: number;
  actor: string;
}

/** One aspect of one entity, as stored. */
export interface StoredAspect {
  name: string;
  value: JsonObject;
  /** 1 on first write, +1 on every later write of this aspect. */
  version: number;
  created: AuditStamp;
  lastModified: AuditStamp;
  /** Bookkeeping the domain keeps beside the value (never part of the value a user reads). */
  systemMetadata?: JsonObject;
}

/** An entity with the aspects that were asked for. */
export interface StoredEntity {
  urn: string;
  entityType: string;
  /** Optimistic-concurrency version of the whole entity: +1 on every commit that touches it. */
  version: number;
  aspects: Record<string, StoredAspect>;
}
