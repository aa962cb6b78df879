import { CatalogError } from '../../core/errors';
import type { TruncateInput } from '../../core/timeseries';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/**
 * `POST /operations?action=...` (Rest.li actions of the established platform): the answer is
 * `{ "value": <text> }`. getIndexSizes: the index records as JSON text; truncateTimeseriesAspect: the
 * catalog's message ("Delete N out of M rows (P%). ...").
 */
const ACTIONS: Record<string, (ctx: RouteContext) => Promise<string>> = {
  getIndexSizes: async (ctx) => JSON.stringify(await ctx.catalog.timeseries.getIndexSizes(ctx.actorUrn)),
  truncateTimeseriesAspect: async (ctx) => {
    if (ctx.body === undefined) {
      const message = 'truncateTimeseriesAspect needs a JSON body { entityType, aspect, endTimeMillis, dryRun?, ... }';
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
    }
    return (await ctx.catalog.timeseries.truncate(ctx.actorUrn, ctx.body as TruncateInput)).message;
  },
};

async function runAction(ctx: RouteContext): Promise<RouteResult> {
  const action = ctx.query.get('action');
  const run = action === null ? undefined : ACTIONS[action];
  if (!run || !Object.hasOwn(ACTIONS, action!)) {
    const message = `${action === null ? 'no action given' : `unknown action "${action.slice(0, 60)}"`}; the actions are ${Object.keys(ACTIONS).join(', ')}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'action', message }] });
  }
  return { body: { value: await run(ctx) } };
}

export const operationRoutes: readonly RouteSpec[] = [{ pattern: '/operations', methods: { POST: { body: 'optional-json', handle: runAction } } }];
