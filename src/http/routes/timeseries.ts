import type { Actor } from '../../core/access';
import type { JsonObject } from '../../adapter/types';
import type { Catalog } from '../../catalog';
import { resolveEntityAddress } from '../../core/entities';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/**
 * Timeseries aspects over REST: a POST of the aspect appends a row (`catalog.timeseries.append`), a GET
 * of the aspect answers its newest row (`catalog.timeseries.latest`), and `/openapi/v2/timeseries/{entityName}/{aspectName}` pages
 * through the rows newest first (`catalog.timeseries.query`, its answer as is).
 */

/** Appends the body (one row, or an array of rows atomically); answers the row's value (the array of values for an array). */
export async function appendTimeseriesAspect(catalog: Catalog, actor: Actor, urn: string, aspect: string, body: unknown): Promise<unknown> {
  const appended = await catalog.timeseries.append(actor, urn, aspect, body as JsonObject | JsonObject[]);
  const values = appended.rows.map((row) => row.value);
  return Array.isArray(body) ? values : values[0];
}

async function queryTimeseries(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const urn = query.string('urn');
  const startTimeMillis = query.integer('startTimeMillis');
  const endTimeMillis = query.integer('endTimeMillis');
  const count = query.integer('count');
  const scrollId = query.string('scrollId');
  query.done();
  const result = await ctx.catalog.timeseries.query(ctx.actor, {
    aspect: ctx.params.aspectName!,
    entityType,
    ...(urn !== undefined ? { urn } : {}),
    ...(startTimeMillis !== undefined ? { startTimeMillis } : {}),
    ...(endTimeMillis !== undefined ? { endTimeMillis } : {}),
    ...(count !== undefined ? { count } : {}),
    ...(scrollId !== undefined && scrollId !== '' ? { scrollId } : {}),
  });
  return { body: result };
}

export const timeseriesRoutes: readonly RouteSpec[] = [
  { pattern: '/openapi/v2/timeseries/{entityName}/{aspectName}', methods: { GET: { body: 'none', handle: queryTimeseries } } },
];
