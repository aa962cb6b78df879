import type { SearchDocument } from '../../src/adapter/types';
import type { PgHandle } from './database';

const pairKey = (property: string, definitionKey: string): string => `${property}\u0000${definitionKey}`;

/**
 * The ids of (property, definition key) pairs in the `property_keys` dictionary, created on first use.
 * Ids are cached: dictionary rows are never deleted, so an id once read stays valid for the schema.
 */
export class PropertyKeys {
  private readonly ids = new Map<string, number>();

  constructor(private readonly h: PgHandle) {}

  /** The id of every pair the documents use; `get` answers for them afterwards. */
  async prepare(docs: ReadonlyArray<SearchDocument | null | undefined>): Promise<void> {
    const missing = new Map<string, { property: string; definitionKey: string }>();
    for (const doc of docs) {
      for (const p of doc?.properties ?? []) {
        const key = pairKey(p.propertyUrn, p.definitionKey);
        if (p.values.length > 0 && !this.ids.has(key)) missing.set(key, { property: p.propertyUrn, definitionKey: p.definitionKey });
      }
    }
    // Its own statements, outside the commit's transaction: a pair that is created and then not used
    // (the commit fails) is harmless. A pair that another process inserted after this statement's
    // snapshot began is not in its result; the next round's new snapshot sees it.
    for (let round = 0; missing.size > 0; round++) {
      if (round === 5)
        throw new Error(`could not register structured property keys: ${[...missing.values()].map((m) => m.property).join(', ')}`);
      const list = [...missing.values()];
      const rows = await this.h.query<{ id: number; property: string; def_key: string }>(
        `WITH wanted AS (SELECT * FROM unnest($1::text[], $2::text[]) AS w(property, def_key)),
         created AS (
           INSERT INTO ${this.h.s}.property_keys (property, def_key) SELECT property, def_key FROM wanted
           ON CONFLICT (property, def_key) DO NOTHING
           RETURNING id, property, def_key
         )
         SELECT id, property, def_key FROM created
         UNION ALL
         SELECT k.id, k.property, k.def_key FROM ${this.h.s}.property_keys k JOIN wanted w ON w.property = k.property AND w.def_key = k.def_key`,
        [list.map((m) => m.property), list.map((m) => m.definitionKey)],
      );
      for (const row of rows) {
        const key = pairKey(row.property, row.def_key);
        this.ids.set(key, row.id);
        missing.delete(key);
      }
    }
  }

  /**
   * The ids of the pairs that exist (for queries): cached ones at once, the others with one statement.
   * A pair that does not exist is left out (no value was ever written under it).
   */
  async lookup(
    pairs: ReadonlyArray<{ property: string; definitionKey: string }>,
  ): Promise<(property: string, definitionKey: string) => number | undefined> {
    const unknown = pairs.filter((p) => !this.ids.has(pairKey(p.property, p.definitionKey)));
    if (unknown.length > 0) {
      const rows = await this.h.query<{ id: number; property: string; def_key: string }>(
        `SELECT k.id, k.property, k.def_key FROM ${this.h.s}.property_keys k
         JOIN unnest($1::text[], $2::text[]) AS w(property, def_key) ON w.property = k.property AND w.def_key = k.def_key`,
        [unknown.map((p) => p.property), unknown.map((p) => p.definitionKey)],
      );
      for (const row of rows) this.ids.set(pairKey(row.property, row.def_key), row.id);
    }
    return (property, definitionKey) => this.ids.get(pairKey(property, definitionKey));
  }

  /** The id of a pair `prepare` has seen. */
  get(property: string, definitionKey: string): number {
    const id = this.ids.get(pairKey(property, definitionKey));
    if (id === undefined) throw new Error(`internal: structured property key of ${property} was not prepared`);
    return id;
  }
}
