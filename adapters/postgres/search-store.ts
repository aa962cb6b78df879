import type { SearchDocument } from '../../src/adapter/types';
import type { PgHandle, Queryable } from './database';

/**
 * The full-text vector of a search document: name and URN key weigh most, the description less.
 * The `simple` configuration (lower-casing, no stemming, no stop words) keeps matching predictable
 * across languages and equal to what the domain asks for; see docs/postgres.md.
 */
export const TEXT_CONFIG = 'simple';
const tsvector = (name: string, description: string, urnKey: string): string =>
  `setweight(to_tsvector('${TEXT_CONFIG}', ${name}), 'A') || setweight(to_tsvector('${TEXT_CONFIG}', ${urnKey}), 'A') || setweight(to_tsvector('${TEXT_CONFIG}', ${description}), 'B')`;

/** JavaScript's lower-casing (the contract's IEQUAL), kept only when it changes the value. */
export function lowerIfDifferent(value: string): string | null {
  const lower = value.toLowerCase();
  return lower === value ? null : lower;
}

/** Inside the caller's transaction: every trace of the documents of these entities. */
export async function removeSearchDocuments(tx: Queryable, s: string, entityIds: readonly string[]): Promise<void> {
  if (entityIds.length === 0) return;
  await clearValues(tx, s, entityIds);
  await tx.execute(`DELETE FROM ${s}.search_docs WHERE entity_id = ANY($1::bigint[])`, [entityIds]);
}

async function clearValues(tx: Queryable, s: string, entityIds: readonly string[]): Promise<void> {
  await tx.execute(`DELETE FROM ${s}.search_fields WHERE entity_id = ANY($1::bigint[])`, [entityIds]);
  await tx.execute(`DELETE FROM ${s}.property_values WHERE entity_id = ANY($1::bigint[])`, [entityIds]);
}

/**
 * Inside the caller's transaction: replaces the documents of these entities (each entity at most once).
 * `existing` lists the entities that may have had a document (their old fields and values go first).
 */
export async function writeSearchDocuments(
  tx: Queryable,
  s: string,
  docs: ReadonlyArray<{ entityId: string; doc: SearchDocument }>,
  existing: readonly string[],
): Promise<void> {
  if (docs.length === 0) return;
  if (existing.length > 0) await clearValues(tx, s, existing);
  await tx.execute(
    `INSERT INTO ${s}.search_docs (entity_id, urn, entity_type, removed, name, description, urn_key, urn_lower, entity_type_lower, tsv)
     SELECT d.entity_id, d.urn, d.entity_type, d.removed, d.name, d.description, d.urn_key, d.urn_lower, d.entity_type_lower,
       ${tsvector('d.name', 'd.description', 'd.urn_key')}
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
       AS d(entity_id, urn, entity_type, removed, name, description, urn_key, urn_lower, entity_type_lower)
     ON CONFLICT (entity_id) DO UPDATE SET
       urn = excluded.urn, entity_type = excluded.entity_type, removed = excluded.removed,
       name = excluded.name, description = excluded.description, urn_key = excluded.urn_key,
       urn_lower = excluded.urn_lower, entity_type_lower = excluded.entity_type_lower, tsv = excluded.tsv`,
    [
      docs.map((d) => d.entityId),
      docs.map((d) => d.doc.urn),
      docs.map((d) => d.doc.entityType),
      docs.map((d) => d.doc.removed),
      docs.map((d) => d.doc.text.name ?? ''),
      docs.map((d) => d.doc.text.description ?? ''),
      docs.map((d) => d.doc.text.urnKey),
      docs.map((d) => lowerIfDifferent(d.doc.urn)),
      docs.map((d) => lowerIfDifferent(d.doc.entityType)),
    ],
  );

  const fieldIds: string[] = [];
  const fieldNames: string[] = [];
  const fieldValues: string[] = [];
  const fieldLowers: Array<string | null> = [];
  const valueIds: string[] = [];
  const properties: string[] = [];
  const keys: string[] = [];
  const strings: Array<string | null> = [];
  const numbers: Array<number | null> = [];
  const lowers: Array<string | null> = [];
  for (const { entityId, doc } of docs) {
    for (const [field, values] of Object.entries(doc.fields)) {
      for (const value of values) {
        fieldIds.push(entityId);
        fieldNames.push(field);
        fieldValues.push(value);
        fieldLowers.push(lowerIfDifferent(value));
      }
    }
    for (const property of doc.properties) {
      for (const value of property.values) {
        valueIds.push(entityId);
        properties.push(property.propertyUrn);
        keys.push(property.definitionKey);
        strings.push(typeof value === 'string' ? value : null);
        numbers.push(typeof value === 'number' ? value : null);
        lowers.push(typeof value === 'string' ? lowerIfDifferent(value) : null);
      }
    }
  }
  if (fieldIds.length > 0) {
    await tx.execute(
      `INSERT INTO ${s}.search_fields (entity_id, field, value, value_lower)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [fieldIds, fieldNames, fieldValues, fieldLowers],
    );
  }
  if (valueIds.length > 0) {
    await tx.execute(
      `INSERT INTO ${s}.property_values (entity_id, property, def_key, str_value, num_value, str_lower)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::double precision[], $6::text[])`,
      [valueIds, properties, keys, strings, numbers, lowers],
    );
  }
}

export async function findEntitiesWithPropertyValues(
  h: PgHandle,
  request: { propertyUrn: string; keepDefinitionKey?: string; afterUrn?: string; limit: number },
): Promise<string[]> {
  const rows = await h.query<{ urn: string }>(
    `SELECT d.urn FROM ${h.s}.search_docs d
     WHERE d.urn > $3 AND d.entity_id IN (
       SELECT v.entity_id FROM ${h.s}.property_values v WHERE v.property = $1 AND ($2::text IS NULL OR v.def_key <> $2)
     )
     ORDER BY d.urn LIMIT $4`,
    [request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit],
  );
  return rows.map((r) => r.urn);
}

export async function countEntitiesWithPropertyValues(h: PgHandle, propertyUrn: string, definitionKey?: string): Promise<number> {
  const [row] = await h.query<{ n: string }>(
    `SELECT count(DISTINCT entity_id) AS n FROM ${h.s}.property_values WHERE property = $1 AND ($2::text IS NULL OR def_key = $2)`,
    [propertyUrn, definitionKey ?? null],
  );
  return Number(row?.n ?? 0);
}
