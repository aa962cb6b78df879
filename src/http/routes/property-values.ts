import type { PropertyValuesEdit } from '../../core/properties';
import { CatalogError, withPaths } from '../../errors';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

const KEYS = new Set(['edits', 'dryRun', 'chunkEntities']);

/**
 * `POST /openapi/v3/structuredProperties/values/batch` `{ edits: [{ urn, set?, remove? }], dryRun?,
 * chunkEntities? }`: `catalog.properties.editValues` (EDIT_ENTITY_PROPERTIES), the values in the REST
 * shape (`{ string }` / `{ double }`). Every edit is checked first (400 naming each violation at
 * `/edits/<i>/...`, nothing written); the answer counts what changed (or, in a dry run, would change).
 */
async function editValues(ctx: RouteContext): Promise<RouteResult> {
  const body = ctx.body as Record<string, unknown> | undefined;
  const problems: Array<{ path: string; message: string }> = [];
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    problems.push({ path: 'body', message: 'must be { edits: [...], dryRun? }' });
  else {
    if (!Array.isArray(body.edits)) problems.push({ path: '/edits', message: 'must be a list of { urn, set?, remove? }' });
    if (body.dryRun !== undefined && typeof body.dryRun !== 'boolean') problems.push({ path: '/dryRun', message: 'must be true or false' });
    for (const key of Object.keys(body))
      if (!KEYS.has(key)) problems.push({ path: `/${key}`, message: 'is not a known member (edits, dryRun, chunkEntities)' });
  }
  if (problems.length)
    throw new CatalogError('INVALID_INPUT', `invalid value edits: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, {
      details: problems,
    });
  const { edits, dryRun, chunkEntities } = body as { edits: PropertyValuesEdit[]; dryRun?: boolean; chunkEntities?: number };
  try {
    const summary = await ctx.catalog.properties.editValues(ctx.actor, edits, {
      dryRun: dryRun === true,
      ...(chunkEntities !== undefined ? { chunkEntities } : {}),
    });
    return { body: summary };
  } catch (error) {
    throw withPaths(error, (path) => (path.startsWith('/') ? `/edits${path}` : path));
  }
}

export const propertyValueRoutes: readonly RouteSpec[] = [
  {
    pattern: '/openapi/v3/structuredProperties/values/batch',
    methods: { POST: { body: 'json', bodyLimit: 'proposals', handle: editValues } },
  },
];
