import { UseStampedMap } from '../../adapter/use-stamped-map';
import type { StorageAdapter } from '../../adapter/types';
import type { StoredEntity } from '../../adapter/types';

/** Token records kept at most; past it the least recently used quarter goes. */
export const TOKEN_RECORD_CACHE_LIMIT = 1_024;

interface Kept {
  /** The store's change token the record was read under. */
  readonly token: string;
  /** The record, or null when there was none (unknown or deleted). */
  readonly entity: StoredEntity | null;
}

/**
 * The token records a verification reads, kept while the store's change token holds
 * (`EntityStore.changeToken`: it moves with every committed write, of this process or of another one
 * sharing the store). A revocation is a committed write, so it is seen by the next verification in every
 * process, as when every verification read the record; while nothing is written (a read-only load) a
 * verification reads no record at all. Stores without change tokens are read every time.
 *
 * Entries remember the change token they were read under instead of the cache being emptied when it
 * moves: under writes it moves on every commit, and a map emptied that often churns its tables (see
 * use-stamped-map.ts).
 */
export class TokenRecordCache {
  private readonly kept = new UseStampedMap<string, Kept>();

  constructor(
    private readonly adapter: StorageAdapter,
    private readonly aspectName: string,
  ) {}

  /** The record of `urn` as stored now, with its `aspectName` aspect only; undefined when there is none. */
  async read(urn: string): Promise<StoredEntity | undefined> {
    // Asked before the read: a write committed between the two moves the token past the one kept with it.
    const token = this.adapter.capabilities.changeToken && this.adapter.changeToken ? await this.adapter.changeToken() : undefined;
    if (token !== undefined) {
      const kept = this.kept.get(urn);
      if (kept !== undefined && kept.token === token) return kept.entity ?? undefined;
    }
    const [entity] = await this.adapter.readEntities([urn], [this.aspectName]);
    if (token !== undefined) this.keep(urn, { token, entity: entity ?? null });
    return entity;
  }

  /** How many records are kept (for tests of the bound). */
  get size(): number {
    return this.kept.size;
  }

  private keep(urn: string, kept: Kept): void {
    if (!this.kept.has(urn) && this.kept.size >= TOKEN_RECORD_CACHE_LIMIT) {
      for (const old of this.kept.leastUsedFirst().slice(0, TOKEN_RECORD_CACHE_LIMIT / 4)) this.kept.delete(old);
    }
    this.kept.set(urn, kept);
  }
}
