import type { PgHandle } from './database';

/**
 * The full-text vector of a search document: name and URN key weigh most, the description less.
 * The `simple` configuration (lower-casing, no stemming, no stop words) keeps matching predictable
 * across languages and equal to what the domain asks for; see docs/postgres.md.
 */
export const TEXT_CONFIG = 'simple';
export const tsvectorSql = (name: string, description: string, urnKey: string): string =>
  `setweight(to_tsvector('${TEXT_CONFIG}', ${name}), 'A') || setweight(to_tsvector('${TEXT_CONFIG}', ${urnKey}), 'A') || setweight(to_tsvector('${TEXT_CONFIG}', ${description}), 'B')`;

/** JavaScript's lower-casing (the contract's IEQUAL), kept only when it changes the value. */
export function lowerIfDifferent(value: string): string | null {
  const lower = value.toLowerCase();
  return lower === value ? null : lower;
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
