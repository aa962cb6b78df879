import type { AspectName, EntityTypeName } from '../../core/entities';
import { resolveEntityAddress } from '../../core/entities';
import type { FacetFilterInput } from '../../core/search';
import { CatalogError } from '../../errors';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult } from '../router';
import { aspectV3, batchGetRequest, batchGetVersions, entityV3, readScrollBody } from './openapi-v3-shapes';

/**
 * The reads of many entities in DataHub's OpenAPI v3 family: the scroll of one type
 * (`GET /openapi/v3/entity/{entityName}`), the scroll across types (`POST /openapi/v3/entity/scroll`)
 * and the batch read (`POST /openapi/v3/entity/{entityName}/batchGet`).
 */

/** `aspects` and its older name `aspectNames`, each repeatable or comma-separated. */
export function aspectNames(query: QueryReader): string[] {
  return [...new Set([...query.strings('aspects'), ...query.strings('aspectNames')])];
}

/** What a scroll asks for besides its entity types: read from the query string (and a generic scroll's body). */
interface ScrollRequest {
  types: string[];
  aspects: string[];
  orFilters?: FacetFilterInput[][];
  bodySort?: string[];
}

/**
 * One page of a scroll (`catalog.search.scroll`, URN order, its `scrollId`), then the asked aspects of
 * the page's entities. Only URN order ascending exists; another sort is refused rather than ignored.
 */
async function scrollPage(ctx: RouteContext, request: ScrollRequest): Promise<RouteResult> {
  const query = new QueryReader(ctx.query);
  const aspects = [...new Set([...request.aspects, ...aspectNames(query)])];
  const count = query.integer('count');
  const text = query.string('query');
  const scrollId = query.string('scrollId');
  const withSystemMetadata = query.boolean('systemMetadata') === true;
  const includeSoftDeleted = query.boolean('includeSoftDelete') === true;
  query.boolean('skipCache');
  const sortFields = [...query.strings('sortCriteria'), ...query.strings('sort'), ...(request.bodySort ?? [])];
  const sortOrder = query.string('sortOrder');
  const sliced = query.integer('sliceId') !== undefined || query.integer('sliceMax') !== undefined;
  query.done();
  const unsupported = [
    ...sortFields
      .filter((f) => f !== 'urn' && f !== 'urn:ASCENDING')
      .map((f) => ({ path: 'sortCriteria', message: `cannot sort on "${f}"; entities scroll in ascending URN order (sortCriteria=urn)` })),
    ...(sortOrder !== undefined && sortOrder !== '' && sortOrder.toUpperCase() !== 'ASCENDING'
      ? [{ path: 'sortOrder', message: `must be ASCENDING (entities scroll in ascending URN order), got "${sortOrder.slice(0, 40)}"` }]
      : []),
    ...(sliced ? [{ path: 'sliceId', message: 'sliced scrolls are not available; scroll with one scrollId' }] : []),
  ];
  if (unsupported.length)
    throw new CatalogError('UNSUPPORTED', unsupported.map((u) => `${u.path} ${u.message}`).join('; '), { details: unsupported });
  const page = await ctx.catalog.search.scroll(ctx.actor, {
    // The registry resolved the names: registered types (also a host's own, beyond the built-in names).
    types: request.types as EntityTypeName[],
    query: text ?? '*',
    ...(count !== undefined ? { count } : {}),
    ...(scrollId !== undefined && scrollId !== '' ? { scrollId } : {}),
    ...(request.orFilters ? { orFilters: request.orFilters.map((and) => ({ and })) } : {}),
    searchFlags: { includeSoftDeleted },
  });
  const urns = page.searchResults.map((r) => r.entity.urn);
  const views = urns.length
    ? await ctx.catalog.entities.getMany(ctx.actor, urns, { ...(aspects.length ? { aspects } : {}), systemMetadata: withSystemMetadata })
    : [];
  return {
    body: {
      ...(page.nextScrollId !== null ? { scrollId: page.nextScrollId } : {}),
      // An entity without any of the asked aspects is left out, as the platform does.
      entities: views.filter((v) => Object.keys(v.aspects).length > 0).map((v) => entityV3(v, withSystemMetadata)),
      totalCount: page.total,
    },
  };
}

/** GET of a type: its entities page by page. */
export async function scrollEntities(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  return scrollPage(ctx, { types: [entityType], aspects: [] });
}

/** The scroll over several types (`POST /openapi/v3/entity/scroll`): `{ entities?, aspects?, filter?, sortCriteria? }`. */
export async function scrollAcrossTypes(ctx: RouteContext): Promise<RouteResult> {
  const body = readScrollBody(ctx.body, (name) => resolveEntityAddress(ctx.catalog.registry, { entityName: name }).entityType);
  return scrollPage(ctx, body);
}

/**
 * A batch read: `[{ urn, <aspect name>?: ... }]`, each entity with the aspects it names (all when it
 * names none); entities that do not exist are left out.
 */
export async function batchGet(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const withSystemMetadata = query.boolean('systemMetadata') === true;
  query.done();
  const wanted = batchGetRequest(ctx.body, entityType);
  const versions = batchGetVersions(ctx.body);
  const every = [...wanted.values()].some((names) => names.length === 0);
  const union = [...new Set([...wanted.values()].flat())];
  const views = await ctx.catalog.entities.getMany(ctx.actor, [...wanted.keys()], {
    ...(every ? {} : { aspects: union }),
    systemMetadata: withSystemMetadata,
  });
  const body = views.map((view) => {
    const names = wanted.get(view.urn) ?? [];
    return entityV3(view, withSystemMetadata, names.length ? new Set(names) : undefined);
  });
  // `If-Version-Match: N` per aspect: the N-th value written, as `?version=N` reads it; left out when not kept.
  for (const entity of body) {
    for (const [aspect, version] of versions.get(entity.urn as string) ?? []) {
      const kept = await ctx.catalog.entities.aspectVersion(ctx.actor, entity.urn as string, aspect as AspectName, version, {
        systemMetadata: withSystemMetadata,
      });
      if (!kept) delete entity[aspect];
      else entity[aspect] = aspectV3(kept, withSystemMetadata);
    }
  }
  return { body: body.filter((entity) => Object.keys(entity).length > 1) };
}
