import type { JsonValue } from '../../adapter/types';
import type { Catalog } from '../../catalog';
import { CatalogError } from '../../errors';
import type { TruncateInput } from '../../core/timeseries';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

function requireBody(ctx: RouteContext, action: string, shape: string): Record<string, unknown> {
  if (ctx.body === undefined || ctx.body === null || typeof ctx.body !== 'object' || Array.isArray(ctx.body)) {
    const message = `${action} needs a JSON body ${shape}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
  }
  return ctx.body as Record<string, unknown>;
}

/**
 * `POST /operations?action=...` (Rest.li actions of the established platform): the answer is
 * `{ "value": ... }`. getIndexSizes: the index records as JSON text; truncateTimeseriesAspect: the
 * catalog's message ("Delete N out of M rows (P%). ..."). Added for the command line (docs/cli.md):
 * upsertStructuredPropertyDefinitions (the YAML definitions file, as JSON entries; the value is
 * `[{ urn, outcome }]`) and reindex (the value is the final progress).
 */
const ACTIONS: Record<string, (ctx: RouteContext) => Promise<JsonValue>> = {
  getIndexSizes: async (ctx) => JSON.stringify(await ctx.catalog.timeseries.getIndexSizes(ctx.actor)),
  truncateTimeseriesAspect: async (ctx) => {
    if (ctx.body === undefined) {
      const message = 'truncateTimeseriesAspect needs a JSON body { entityType, aspect, endTimeMillis, dryRun?, ... }';
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
    }
    return (await ctx.catalog.timeseries.truncate(ctx.actor, ctx.body as TruncateInput)).message;
  },
  upsertStructuredPropertyDefinitions: async (ctx) => {
    const body = requireBody(ctx, 'upsertStructuredPropertyDefinitions', '{ entries: [<definitions of the YAML file>] }');
    if (!Array.isArray(body.entries) || Object.keys(body).some((k) => k !== 'entries')) {
      const message = 'must be { entries: [...] }, the definitions of the YAML file';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const results = await ctx.catalog.properties.upsertYamlEntries(ctx.actor, body.entries as Parameters<Catalog['properties']['upsertYamlEntries']>[1]);
    return results.map((r) => ({ urn: r.property.urn, outcome: r.outcome }));
  },
  reindex: async (ctx) => {
    const body = ctx.body === undefined ? {} : requireBody(ctx, 'reindex', '{ batchSize? }');
    if (Object.keys(body).some((k) => k !== 'batchSize')) {
      const message = 'may hold only batchSize';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const { lastUrn: _lastUrn, ...progress } = await ctx.catalog.reindexAs(ctx.actor, body.batchSize === undefined ? {} : { batchSize: body.batchSize as number });
    return progress;
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
