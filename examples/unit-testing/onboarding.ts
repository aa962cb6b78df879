import { CatalogError, type Catalog } from 'metacatalog';

/**
 * A piece of a host application: onboarding a table into the catalog. The application's own rule
 * (a description is required) lives here; the catalog's rules (URNs, schemas, privileges) live there.
 */
export async function onboardTable(
  catalog: Catalog,
  actor: string,
  table: { platform: string; name: string; description: string },
): Promise<string> {
  if (table.description.trim().length < 10) {
    throw new CatalogError('INVALID_INPUT', `${table.name}: a description of at least 10 characters is required`);
  }
  const urn = `urn:li:dataset:(urn:li:dataPlatform:${table.platform},${table.name},PROD)`;
  await catalog.entities.upsertAspects(actor, urn, {
    datasetProperties: { name: table.name, description: table.description.trim() },
    status: { removed: false },
  });
  return urn;
}

/** Retires a table: a soft delete, reversible. */
export async function retireTable(catalog: Catalog, actor: string, urn: string): Promise<void> {
  await catalog.entities.upsertAspect(actor, urn, 'status', { removed: true });
}
