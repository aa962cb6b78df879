import type { ApplyOptions, ApplyToMatchesInput } from '../../core/stewardship';
import { CatalogError } from '../../errors';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

const PATH = '/openapi/v3/structuredProperties/applyToMatches';

/**
 * Applying structured properties to every match of a search (docs/structured-properties.md):
 * `POST` with `{ types, query, orFilters, set, remove, dryRun, chunkSize }` answers the dry run (200) or
 * the job it queued (202); `GET .../{jobId}` its status; `DELETE .../{jobId}` cancels it.
 */
async function apply(ctx: RouteContext): Promise<RouteResult> {
  const body = ctx.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new CatalogError('INVALID_INPUT', 'the body must be a JSON object', { details: [{ path: '/', message: 'must be an object' }] });
  const { dryRun, chunkSize, ...input } = body as ApplyToMatchesInput & { dryRun?: unknown; chunkSize?: unknown };
  if (dryRun !== undefined && typeof dryRun !== 'boolean')
    throw new CatalogError('INVALID_INPUT', 'dryRun must be true or false', {
      details: [{ path: '/dryRun', message: 'must be a boolean' }],
    });
  const options: ApplyOptions = { dryRun: dryRun === true, ...(chunkSize !== undefined ? { chunkSize: chunkSize as number } : {}) };
  const answer = await ctx.catalog.properties.applyToMatches(ctx.actor, input, options);
  return 'jobId' in answer ? { status: 202, body: answer } : { body: answer };
}

export const applyToMatchesRoutes: readonly RouteSpec[] = [
  { pattern: PATH, methods: { POST: { body: 'json', handle: apply } } },
  {
    pattern: `${PATH}/{jobId}`,
    methods: {
      GET: { body: 'none', handle: async (ctx) => ({ body: await ctx.catalog.properties.applyStatus(ctx.actor, ctx.params.jobId!) }) },
      DELETE: { body: 'none', handle: async (ctx) => ({ body: await ctx.catalog.properties.cancelApply(ctx.actor, ctx.params.jobId!) }) },
    },
  },
];
