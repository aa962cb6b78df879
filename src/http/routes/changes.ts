import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/**
 * The change feed over HTTP (docs/changes.md): `GET /openapi/v2/changes?after=&limit=&entityTypes=&aspects=`
 * answers `{ events, next }` (catalog.changes.read, VIEW_CHANGE_FEED).
 */
async function readChanges(ctx: RouteContext): Promise<RouteResult> {
  const query = new QueryReader(ctx.query);
  const after = query.string('after');
  const limit = query.integer('limit');
  const entityTypes = query.strings('entityTypes');
  const aspects = query.strings('aspects');
  query.done();
  const page = await ctx.catalog.changes.read(ctx.actorUrn, {
    ...(after !== undefined && after !== '' ? { after } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(entityTypes.length ? { entityTypes } : {}),
    ...(aspects.length ? { aspects } : {}),
  });
  return { body: page };
}

export const changeRoutes: readonly RouteSpec[] = [{ pattern: '/openapi/v2/changes', methods: { GET: { body: 'none', handle: readChanges } } }];
