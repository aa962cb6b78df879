import type { PgHandle } from './database';

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
       SELECT v.entity_id FROM ${h.s}.property_values v
       WHERE v.key_id IN (SELECT k.id FROM ${h.s}.property_keys k WHERE k.property = $1 AND ($2::text IS NULL OR k.def_key <> $2))
     )
     ORDER BY d.urn LIMIT $4`,
    [request.propertyUrn, request.keepDefinitionKey ?? null, request.afterUrn ?? '', request.limit],
  );
  return rows.map((r) => r.urn);
}

export async function countEntitiesWithPropertyValues(h: PgHandle, propertyUrn: string, definitionKey?: string): Promise<number> {
  const [row] = await h.query<{ n: string }>(
    `SELECT count(DISTINCT v.entity_id) AS n FROM ${h.s}.property_values v
     WHERE v.key_id IN (SELECT k.id FROM ${h.s}.property_keys k WHERE k.property = $1 AND ($2::text IS NULL OR k.def_key = $2))`,
    [propertyUrn, definitionKey ?? null],
  );
  return Number(row?.n ?? 0);
}
