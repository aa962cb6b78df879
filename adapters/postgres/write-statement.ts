import { createHash } from 'node:crypto';
import type { EntityWrite, SearchDocument } from '../../src/adapter/types';
import type { Queryable } from './database';
import type { Packer } from './packing';
import { storedLower } from './search-store';
import { documentVector } from './text';

type AspectPut = NonNullable<EntityWrite['put']>[number];

/** The key of a packed metadata document in `aspect_metadata`. */
function digestOf(packed: Buffer): Buffer {
  return createHash('sha256').update(packed).digest();
}

/**
 * The writes of one run of entities as a single statement: one data-modifying CTE per kind of change,
 * each over arrays (`unnest`), so a run of 2,000 entities costs one round trip like a run of one.
 *
 * The CTEs of one statement run in an order the server chooses and do not see each other's changes,
 * so they are built to touch disjoint rows: an aspect that one write both puts and deletes is only
 * deleted (as a put followed by a delete would leave it); a document's old fields and values are
 * deleted by entity id and its new ones inserted into tables without unique keys. New entities come
 * with ids drawn from the identity's sequence beforehand, so every row of the statement carries its
 * entity id as a plain value (no join with the new rows). The entity row also holds the search
 * document's own columns (`search_docs` is a view of it), so a version bump and a document change of
 * one entity are one UPDATE: two CTEs must not change the same row.
 */
export class WriteStatement {
  private readonly ctes: string[] = [];
  private readonly values: unknown[] = [];
  /** New entities with the ids drawn for them before the statement (see entities.ts). */
  private toCreate: ReadonlyArray<{ write: EntityWrite; id: string }> = [];
  /** Existing entities whose row changes: version bumped, search document columns set (null: no document). */
  private readonly rowChanges = new Map<string, { bump: boolean; doc?: SearchDocument | null }>();
  /** Documents of the entities this statement creates, by URN. */
  private readonly newDocs = new Map<string, SearchDocument>();
  /** Entities whose standard fields and property values go (deleted, document removed or replaced). */
  private readonly clearIds: string[] = [];
  /** Entities whose full-text row goes. */
  private readonly dropDocIds: string[] = [];
  /** Existing aspect rows this statement replaces or deletes (entity id, name), besides those of deleted entities. */
  private readonly replaced: Array<readonly [string, string]> = [];
  /** Existing entities this statement deletes. */
  private readonly deletedIds: string[] = [];

  constructor(
    private readonly s: string,
    private readonly packer: Packer,
  ) {}

  private param(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }

  createEntities(items: ReadonlyArray<{ write: EntityWrite; id: string }>): void {
    this.toCreate = items;
  }

  bumpVersions(ids: readonly string[]): void {
    for (const id of ids) this.rowChanges.set(id, { ...this.rowChanges.get(id), bump: true });
  }

  /** The row changes of `entities`, built last (documents known) and placed first (others join `created`). */
  private entityCtes(): string[] {
    const ctes: string[] = [];
    // The search document's own columns live on the entity's row (`search_docs` is a view of it).
    const docColumns = (docs: ReadonlyArray<SearchDocument | null | undefined>) => [
      this.param(
        docs.map((d) => (d ? d.removed : null)),
        'boolean[]',
      ),
      this.param(
        docs.map((d) => (d ? storedLower(d.urn) : null)),
        'text[]',
      ),
      this.param(
        docs.map((d) => (d ? storedLower(d.entityType) : null)),
        'text[]',
      ),
    ];
    if (this.toCreate.length > 0) {
      const items = this.toCreate;
      ctes.push(`created AS (
      INSERT INTO ${this.s}.entities (id, urn, entity_type, version, removed, urn_lower, entity_type_lower) OVERRIDING SYSTEM VALUE
      SELECT n.id, n.urn, n.entity_type, 1, n.removed, n.urn_lower, n.entity_type_lower
      FROM unnest(${[
        this.param(
          items.map((c) => c.id),
          'bigint[]',
        ),
        this.param(
          items.map((c) => c.write.urn),
          'text[]',
        ),
        this.param(
          items.map((c) => c.write.entityType),
          'text[]',
        ),
        ...docColumns(items.map((c) => this.newDocs.get(c.write.urn))),
      ].join(', ')}) WITH ORDINALITY AS n(id, urn, entity_type, removed, urn_lower, entity_type_lower, i)
      ORDER BY n.i
      ON CONFLICT (urn) DO NOTHING
      RETURNING id, urn)`);
    }
    if (this.rowChanges.size > 0) {
      const changes = [...this.rowChanges];
      ctes.push(`bumped AS (
      UPDATE ${this.s}.entities e SET
        version = e.version + CASE WHEN b.bump THEN 1 ELSE 0 END,
        removed = CASE WHEN b.set_doc THEN b.removed ELSE e.removed END,
        urn_lower = CASE WHEN b.set_doc THEN b.urn_lower ELSE e.urn_lower END,
        entity_type_lower = CASE WHEN b.set_doc THEN b.entity_type_lower ELSE e.entity_type_lower END
      FROM unnest(${[
        this.param(
          changes.map(([id]) => id),
          'bigint[]',
        ),
        this.param(
          changes.map(([, c]) => c.bump),
          'boolean[]',
        ),
        this.param(
          changes.map(([, c]) => c.doc !== undefined),
          'boolean[]',
        ),
        ...docColumns(changes.map(([, c]) => c.doc)),
      ].join(', ')}) AS b(id, bump, set_doc, removed, urn_lower, entity_type_lower)
      WHERE e.id = b.id)`);
    }
    return ctes;
  }

  deleteEntities(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.deletedIds.push(...ids);
    const list = this.param(ids, 'bigint[]');
    this.ctes.push(`gone_aspects AS (DELETE FROM ${this.s}.aspects WHERE entity_id = ANY(${list}))`);
    this.ctes.push(`gone_entities AS (DELETE FROM ${this.s}.entities WHERE id = ANY(${list}))`);
    this.clearIds.push(...ids);
    this.dropDocIds.push(...ids);
  }

  /**
   * Inserts or replaces aspects; when one write names an aspect twice the last counts, and a deleted name is not put.
   * `exists`: whether the write's entity existed before the statement (its rows may be replaced).
   */
  putAspects(writes: readonly EntityWrite[], idOf: (write: EntityWrite) => string, exists: (write: EntityWrite) => boolean): void {
    const rows = new Map<string, { entityId: string; put: AspectPut }>();
    for (const write of writes) {
      const deleted = new Set(write.delete ?? []);
      for (const put of write.put ?? []) {
        if (deleted.has(put.name)) continue;
        rows.set(`${write.urn}\u0000${put.name}`, { entityId: idOf(write), put });
        if (exists(write)) this.replaced.push([idOf(write), put.name]);
      }
    }
    if (rows.size === 0) return;
    const list = [...rows.values()];
    // System metadata once per distinct document (aspect_metadata, keyed by the digest of its packed form).
    const metadata = new Map<string, Buffer>();
    const digests = list.map((r) => {
      const packed = this.packer.json(r.put.systemMetadata);
      if (!packed) return null;
      const digest = digestOf(packed);
      metadata.set(digest.toString('hex'), packed);
      return digest;
    });
    if (metadata.size > 0) {
      // Sorted: concurrent writers lock shared documents in one order.
      const documents = [...metadata].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      // DO UPDATE: the row comes back (and stays locked until COMMIT, so that no commit removes it meanwhile).
      this.ctes.push(`metadata AS (
      INSERT INTO ${this.s}.aspect_metadata (digest, packed)
      SELECT * FROM unnest(${this.param(
        documents.map(([hex]) => Buffer.from(hex, 'hex')),
        'bytea[]',
      )}, ${this.param(
        documents.map(([, packed]) => packed),
        'bytea[]',
      )})
      ON CONFLICT (digest) DO UPDATE SET digest = excluded.digest
      RETURNING id, digest)`);
    }
    const metadataId = metadata.size > 0 ? `(SELECT m.id FROM metadata m WHERE m.digest = a.digest)` : 'NULL::bigint';
    // Documents packed (packing.ts); the modification stamp only when it differs from the creation stamp.
    this.ctes.push(`put_aspects AS (
      INSERT INTO ${this.s}.aspects (entity_id, name, version, created_time, created_actor, modified_time, modified_actor, packed, metadata_id)
      SELECT a.entity_id, a.name, a.version, a.created_time, a.created_actor, a.modified_time, a.modified_actor, a.packed, ${metadataId}
      FROM unnest(${[
        this.param(
          list.map((r) => r.entityId),
          'bigint[]',
        ),
        this.param(
          list.map((r) => r.put.name),
          'text[]',
        ),
        this.param(
          list.map((r) => r.put.version),
          'integer[]',
        ),
        this.param(
          list.map((r) => r.put.created.time),
          'bigint[]',
        ),
        this.param(
          list.map((r) => r.put.created.actor),
          'text[]',
        ),
        this.param(
          list.map((r) => (r.put.lastModified.time === r.put.created.time ? null : r.put.lastModified.time)),
          'bigint[]',
        ),
        this.param(
          list.map((r) => (r.put.lastModified.actor === r.put.created.actor ? null : r.put.lastModified.actor)),
          'text[]',
        ),
        this.param(
          list.map((r) => this.packer.json(r.put.value)),
          'bytea[]',
        ),
        this.param(digests, 'bytea[]'),
      ].join(', ')})
        AS a(entity_id, name, version, created_time, created_actor, modified_time, modified_actor, packed, digest)
      ON CONFLICT (entity_id, name) DO UPDATE SET
        value = NULL, system_metadata = NULL, packed = excluded.packed, packed_metadata = NULL, metadata_id = excluded.metadata_id,
        version = excluded.version, created_time = excluded.created_time, created_actor = excluded.created_actor,
        modified_time = excluded.modified_time, modified_actor = excluded.modified_actor)`);
  }

  /** Aspects of existing entities to delete (absent ones are ignored). */
  deleteAspects(items: ReadonlyArray<{ entityId: string; names: readonly string[] }>): void {
    const pairs = items.flatMap((item) => item.names.map((name) => [item.entityId, name] as const));
    if (pairs.length === 0) return;
    this.replaced.push(...pairs);
    this.ctes.push(`deleted_aspects AS (
      DELETE FROM ${this.s}.aspects a
      USING unnest(${this.param(
        pairs.map((p) => p[0]),
        'bigint[]',
      )}, ${this.param(
        pairs.map((p) => p[1]),
        'text[]',
      )}) AS d(entity_id, name)
      WHERE a.entity_id = d.entity_id AND a.name = d.name)`);
  }

  removeSearchDocuments(ids: readonly string[]): void {
    this.clearIds.push(...ids);
    this.dropDocIds.push(...ids);
    for (const id of ids) this.rowChanges.set(id, { bump: false, ...this.rowChanges.get(id), doc: null });
  }

  /** Replaces documents (`isNew` for entities this statement creates). */
  writeSearchDocuments(
    items: ReadonlyArray<{ urn: string; entityId: string; isNew: boolean; doc: SearchDocument }>,
    keyOf: (property: string, definitionKey: string) => number,
    nameOf: (name: string) => number,
  ): void {
    if (items.length === 0) return;
    const ids = items.map((item) => item.entityId);
    const docs = items.map((item) => item.doc);
    for (const item of items) {
      if (item.isNew) this.newDocs.set(item.urn, item.doc);
      else {
        this.clearIds.push(item.entityId);
        this.rowChanges.set(item.entityId, { bump: false, ...this.rowChanges.get(item.entityId), doc: item.doc });
      }
    }
    this.ctes.push(`written_text AS (
      INSERT INTO ${this.s}.search_text (entity_id, tsv)
      SELECT t.entity_id, t.tsv::tsvector
      FROM unnest(${this.param(ids, 'bigint[]')}, ${this.param(
        docs.map((d) => documentVector(d.text)),
        'text[]',
      )}) AS t(entity_id, tsv)
      ON CONFLICT (entity_id) DO UPDATE SET tsv = excluded.tsv)`);

    // `first`: the document's first row for that field or key, so "documents that have one" is a plain count.
    const fields: Array<{ entityId: string; field: string; value: string; doc: SearchDocument; first: boolean }> = [];
    const values: Array<{ entityId: string; keyId: number; value: string | number; doc: SearchDocument; first: boolean; sole: boolean }> =
      [];
    items.forEach((item, i) => {
      for (const [field, list] of Object.entries(item.doc.fields)) {
        // Each value once per field and document: facets count documents.
        let first = true;
        for (const value of new Set(list)) {
          fields.push({ entityId: ids[i]!, field, value, doc: item.doc, first });
          first = false;
        }
      }
      const seenValues = new Map<number, Set<string | number>>();
      const firstRow = new Map<number, number>();
      for (const property of item.doc.properties) {
        if (property.values.length === 0) continue;
        const keyId = keyOf(property.propertyUrn, property.definitionKey);
        // Each value once per key and document: conditions ask "any of", facets count documents.
        let seen = seenValues.get(keyId);
        if (!seen) seenValues.set(keyId, (seen = new Set()));
        for (const value of property.values) {
          if (seen.has(value)) continue;
          if (seen.size === 0) firstRow.set(keyId, values.length);
          values.push({ entityId: ids[i]!, keyId, value, doc: item.doc, first: seen.size === 0, sole: false });
          seen.add(value);
        }
      }
      // `sole`: the document's only value under the key, so a count over a range of values needs no DISTINCT for it.
      for (const [keyId, row] of firstRow) if (seenValues.get(keyId)!.size === 1) values[row]!.sole = true;
    });
    if (fields.length > 0) {
      this.ctes.push(`written_fields AS (
        INSERT INTO ${this.s}.search_fields (entity_id, field_id, type_id, removed, first_of_field, value, value_lower)
        SELECT f.entity_id, f.field_id, f.type_id, f.removed, f.first, f.value, f.value_lower
        FROM unnest(${[
          this.param(
            fields.map((r) => r.entityId),
            'bigint[]',
          ),
          this.param(
            fields.map((r) => nameOf(r.field)),
            'smallint[]',
          ),
          this.param(
            fields.map((r) => nameOf(r.doc.entityType)),
            'smallint[]',
          ),
          this.param(
            fields.map((r) => r.doc.removed),
            'boolean[]',
          ),
          this.param(
            fields.map((r) => r.first),
            'boolean[]',
          ),
          this.param(
            fields.map((r) => r.value),
            'text[]',
          ),
          this.param(
            fields.map((r) => storedLower(r.value)),
            'text[]',
          ),
        ].join(', ')}) AS f(entity_id, field_id, type_id, removed, first, value, value_lower))`);
    }
    if (values.length > 0) {
      this.ctes.push(`written_values AS (
        INSERT INTO ${this.s}.property_values (entity_id, key_id, str_value, num_value, str_lower, entity_type, removed, first_of_key, sole_of_key)
        SELECT v.entity_id, v.key_id, v.str_value, v.num_value, v.str_lower, v.entity_type, v.removed, v.first, v.sole
        FROM unnest(${[
          this.param(
            values.map((r) => r.entityId),
            'bigint[]',
          ),
          this.param(
            values.map((r) => r.keyId),
            'integer[]',
          ),
          this.param(
            values.map((r) => (typeof r.value === 'string' ? r.value : null)),
            'text[]',
          ),
          this.param(
            values.map((r) => (typeof r.value === 'number' ? r.value : null)),
            'float8[]',
          ),
          this.param(
            values.map((r) => (typeof r.value === 'string' ? storedLower(r.value) : null)),
            'text[]',
          ),
          this.param(
            values.map((r) => r.doc.entityType),
            'text[]',
          ),
          this.param(
            values.map((r) => r.doc.removed),
            'boolean[]',
          ),
          this.param(
            values.map((r) => r.first),
            'boolean[]',
          ),
          this.param(
            values.map((r) => r.sole),
            'boolean[]',
          ),
        ].join(', ')}) AS v(entity_id, key_id, str_value, num_value, str_lower, entity_type, removed, first, sole))`);
    }
  }

  /**
   * Before existing aspect rows are replaced or deleted (all CTEs read the rows as they were before the
   * statement): the change events that take their value from such a row get its packed value, and the
   * events of deleted entities their URN and type. Also collects the metadata documents those rows
   * referred to, which may now be unreferenced (see `dropped`).
   */
  private detachCtes(): string[] {
    if (this.replaced.length === 0 && this.deletedIds.length === 0) return [];
    const deleted = this.param(this.deletedIds, 'bigint[]');
    const ids = this.param(
      this.replaced.map((p) => p[0]),
      'bigint[]',
    );
    const names = this.param(
      this.replaced.map((p) => p[1]),
      'text[]',
    );
    const everyId = this.param([...new Set([...this.deletedIds, ...this.replaced.map((p) => p[0])])], 'bigint[]');
    const rows = `SELECT a.entity_id, a.name, a.version, a.packed, a.metadata_id, COALESCE(a.modified_actor, a.created_actor) AS actor FROM ${this.s}.aspects a
        WHERE a.entity_id = ANY(${deleted}) OR (a.entity_id, a.name) IN (SELECT * FROM unnest(${ids}, ${names}))`;
    return [
      `old_rows AS (${rows})`,
      `detached_events AS (
      UPDATE ${this.s}.change_events c SET
        packed_aspect = CASE WHEN x.detach THEN x.packed ELSE c.packed_aspect END,
        aspect_version = CASE WHEN x.detach THEN NULL ELSE c.aspect_version END,
        change_type = COALESCE(c.change_type, 'UPSERT'),
        created_actor = COALESCE(c.created_actor, x.actor),
        entity_urn = COALESCE(c.entity_urn, x.urn),
        entity_type = COALESCE(c.entity_type, x.entity_type),
        entity_id = CASE WHEN x.urn IS NULL THEN c.entity_id END
      FROM (
        SELECT c.id, r.entity_id IS NOT NULL AS detach, r.packed, r.actor, e.urn, e.entity_type
        FROM ${this.s}.change_events c
        LEFT JOIN ${this.s}.entities e ON e.id = c.entity_id AND e.id = ANY(${deleted})
        LEFT JOIN old_rows r ON c.aspect_version IS NOT NULL AND r.entity_id = c.entity_id AND r.name = c.aspect_name AND r.version = c.aspect_version
        WHERE c.entity_id = ANY(${everyId}) AND (e.id IS NOT NULL OR r.entity_id IS NOT NULL)
      ) x
      WHERE c.id = x.id)`,
    ];
  }

  /** Runs the statement; returns the URNs of the entities it created and the metadata documents that may have lost their last reference. */
  async run(tx: Queryable): Promise<{ created: string[]; dropped: string[] }> {
    if (this.clearIds.length > 0) {
      const list = this.param([...new Set(this.clearIds)], 'bigint[]');
      this.ctes.push(`cleared_fields AS (DELETE FROM ${this.s}.search_fields WHERE entity_id = ANY(${list}))`);
      this.ctes.push(`cleared_values AS (DELETE FROM ${this.s}.property_values WHERE entity_id = ANY(${list}))`);
    }
    if (this.dropDocIds.length > 0) {
      const list = this.param([...new Set(this.dropDocIds)], 'bigint[]');
      this.ctes.push(`dropped_text AS (DELETE FROM ${this.s}.search_text WHERE entity_id = ANY(${list}))`);
    }
    const detach = this.detachCtes();
    this.ctes.unshift(...this.entityCtes(), ...detach);
    if (this.ctes.length === 0) return { created: [], dropped: [] };
    const created = this.toCreate.length > 0 ? `COALESCE((SELECT array_agg(urn) FROM created), '{}')` : `'{}'::text[]`;
    const dropped =
      detach.length > 0
        ? `COALESCE((SELECT array_agg(DISTINCT metadata_id)::text[] FROM old_rows WHERE metadata_id IS NOT NULL), '{}')`
        : `'{}'::text[]`;
    const [row] = await tx.query<{ created: string[]; dropped: string[] }>(
      `WITH ${this.ctes.join(',\n')}\nSELECT ${created} AS created, ${dropped} AS dropped`,
      this.values,
    );
    return { created: row?.created ?? [], dropped: row?.dropped ?? [] };
  }
}
