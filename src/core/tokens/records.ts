import { UseStampedMap } from '../../adapter/use-stamped-map';
import type { StorageAdapter, StoredEntity } from '../../adapter/types';

/** Token records kept at most; past it the least recently used quarter goes. */
export const TOKEN_RECORD_CACHE_LIMIT = 1_024;

/**
 * The token records a verification reads, kept while the store's change token holds
 * (`EntityStore.changeToken`: it moves with every committed write, of this process or of another one
 * sharing the store). A revocation is a committed write, so it is seen by the next verification in every
 * process, as when every verification read the record; while nothing is written (a read-only load) a
 * verification reads no record at all. Stores without change tokens are read every time.
 *
 * Only records read under the current change token are kept: once it moves, no older one can be used
 * again, so they are let go with their map (a new map, not `clear()`: under writes the token moves on
 * every commit, and a map emptied that often churns its tables, see use-stamped-map.ts).
 */
export class TokenRecordCache {
  /** The change token the kept records were read under. */
  private token: string | undefined;
  /** URN → record, or null when there was none (unknown or deleted). */
  private kept = new UseStampedMap<string, StoredEntity | null>();

  constructor(
    private readonly adapter: StorageAdapter,
    private readonly aspectName: string,
  ) {}

  /** The record of `urn` as stored now, with its `aspectName` aspect only; undefined when there is none. */
  async read(urn: string): Promise<StoredEntity | undefined> {
    // Asked before the read: a write committed between the two moves the token past the one kept with it.
    const token = this.adapter.capabilities.changeToken && this.adapter.changeToken ? await this.adapter.changeToken() : undefined;
    if (token === undefined) return (await this.adapter.readEntities([urn], [this.aspectName]))[0];
    if (token === this.token) {
      const kept = this.kept.get(urn);
      if (kept !== undefined) return kept ?? undefined;
    } else {
      this.token = token;
      this.kept = new UseStampedMap();
    }
    const [entity] = await this.adapter.readEntities([urn], [this.aspectName]);
    // Kept only if no other read moved to another token meanwhile: what was read then may predate it.
    if (this.token === token) this.kept.setWithin(urn, entity ?? null, TOKEN_RECORD_CACHE_LIMIT);
    return entity;
  }

  /** How many records are kept (for tests of the bound). */
  get size(): number {
    return this.kept.size;
  }
}
