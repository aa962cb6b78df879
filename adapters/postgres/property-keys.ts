import type { SearchDocument } from '../../src/adapter/types';
import type { PgHandle } from './database';

const pairKey = (property: string, definitionKey: string): string => `${property}\u0000${definitionKey}`;

/** The most names `search_names` can hold: its ids are `smallint`. */
const MAX_NAMES = 32_767;

/** The ids a search statement needs: of (property, definition key) pairs and of search names (standard fields, entity types). */
export interface Ids {
  /** Undefined when no value was ever written under the pair. */
  key(property: string, definitionKey: string): number | undefined;
  /** Undefined when no standard field row was ever written with the name. */
  name(name: string): number | undefined;
}

/**
 * The schema's two dictionaries, created on first use:
 *
 * - `property_keys`: the ids of (property, definition key) pairs, carried by `property_values` rows;
 * - `search_names` (schema version 7): the ids of standard field names and entity types, carried by
 *   `search_fields` rows. Names only, never values: the standard fields and entity types are the
 *   entity registry's, so the dictionary stays small (its ids are `smallint`).
 *
 * Ids are cached: dictionary rows are never deleted, so an id once read stays valid for the schema.
 * The name cache holds at most what the dictionary can (32,767 names).
 */
export class PropertyKeys {
  private readonly ids = new Map<string, number>();
  private readonly names = new Map<string, number>();

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

  /**
   * The ids of the standard field names and entity types of the documents; `nameId` answers for them
   * afterwards. Existing names are read first, and only missing ones are inserted, so that the
   * dictionary's sequence is not spent by conflicts (several processes, several adapters on a schema).
   */
  async prepareNames(docs: ReadonlyArray<SearchDocument | null | undefined>): Promise<void> {
    const missing = new Set<string>();
    for (const doc of docs) {
      if (!doc) continue;
      let any = false;
      for (const [field, values] of Object.entries(doc.fields)) {
        if (values.length === 0) continue;
        any = true;
        if (!this.names.has(field)) missing.add(field);
      }
      if (any && !this.names.has(doc.entityType)) missing.add(doc.entityType);
    }
    if (missing.size === 0) return;
    await this.readNames([...missing]);
    for (const name of this.names.keys()) missing.delete(name);
    // Its own statements, outside the commit's transaction, as for property keys: a name created for a
    // commit that then fails is harmless. One that another process inserted after this statement's
    // snapshot began is not in its result; the next round's new snapshot sees it.
    for (let round = 0; missing.size > 0; round++) {
      if (round === 5) throw new Error(`could not register search names: ${[...missing].join(', ')}`);
      const wanted = [...missing];
      const [count] = await this.h.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.h.s}.search_names`);
      if ((count?.n ?? 0) + wanted.length > MAX_NAMES)
        throw new Error(
          `search_names: no room for ${wanted.length} more names (at most ${MAX_NAMES} standard field names and entity types)`,
        );
      const rows = await this.h.query<{ id: number; name: string }>(
        `WITH created AS (
           INSERT INTO ${this.h.s}.search_names (name) SELECT w.name FROM unnest($1::text[]) AS w(name) ORDER BY w.name
           ON CONFLICT (name) DO NOTHING
           RETURNING id, name
         )
         SELECT id, name FROM created
         UNION ALL
         SELECT n.id, n.name FROM ${this.h.s}.search_names n WHERE n.name = ANY($1::text[])`,
        [wanted],
      );
      for (const row of rows) {
        this.names.set(row.name, row.id);
        missing.delete(row.name);
      }
    }
  }

  private async readNames(names: readonly string[]): Promise<void> {
    const rows = await this.h.query<{ id: number; name: string }>(
      `SELECT id, name FROM ${this.h.s}.search_names WHERE name = ANY($1::text[])`,
      [names],
    );
    for (const row of rows) this.names.set(row.name, row.id);
  }

  /**
   * The ids a search needs (for queries): cached ones at once, the others with one statement each
   * dictionary. A pair or name that does not exist is left out (no row was ever written with it).
   */
  async lookupIds(pairs: ReadonlyArray<{ property: string; definitionKey: string }>, names: readonly string[]): Promise<Ids> {
    const key = await this.lookup(pairs);
    const unknown = [...new Set(names)].filter((n) => !this.names.has(n));
    if (unknown.length > 0) await this.readNames(unknown);
    return { key, name: (name) => this.names.get(name) };
  }

  /** The id of a name `prepareNames` has seen. */
  nameId(name: string): number {
    const id = this.names.get(name);
    if (id === undefined) throw new Error(`internal: search name ${name} was not prepared`);
    return id;
  }

  /** The id of a pair `prepare` has seen. */
  get(property: string, definitionKey: string): number {
    const id = this.ids.get(pairKey(property, definitionKey));
    if (id === undefined) throw new Error(`internal: structured property key of ${property} was not prepared`);
    return id;
  }
}
