import type { JsonObject } from '../../adapter/types';
import type { EntityView } from '../../core/entities/service';
import { resolveEntityAddress, type ResolvedEntityAddress } from '../../core/entities/paths';
import { CatalogError } from '../../errors';
import type { PropertyPatchRequest } from '../../core/properties/types';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';
import { appendTimeseriesAspect, latestTimeseriesValue } from './timeseries';

/**
 * The OpenAPI v2 entity family: `/openapi/v2/entity/{entityName}/{urn}[/{aspectName}]`. Each handler
 * resolves the address, calls the catalog as the authenticated actor and shapes the answer
 * `{ urn, aspects: { <name>: { value } } }`; the catalog decides everything else (who may, what is
 * valid, which service owns an aspect's writes).
 */

type AspectValues = Record<string, { value: unknown }>;

function aspectsOf(view: EntityView): AspectValues {
  const out: AspectValues = {};
  for (const [name, aspect] of Object.entries(view.aspects)) out[name] = { value: aspect.value };
  return out;
}

function address(ctx: RouteContext, withAspect: boolean): ResolvedEntityAddress & { urn: string } {
  const resolved = resolveEntityAddress(ctx.catalog.registry, {
    entityName: ctx.params.entityName!,
    urn: ctx.params.urn!,
    ...(withAspect ? { aspect: ctx.params.aspectName! } : {}),
  });
  return resolved as ResolvedEntityAddress & { urn: string };
}

function notFound(what: string): CatalogError {
  return new CatalogError('NOT_FOUND', `${what} does not exist`);
}

async function getEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const aspects = query.strings('aspects');
  query.done();
  const view = await ctx.catalog.entities.get(ctx.actorUrn, urn, aspects.length ? { aspects } : {});
  if (!view) throw notFound(urn);
  return { body: { urn, aspects: aspectsOf(view) } };
}

async function getAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  if (aspectKind === 'timeseries') {
    const value = await latestTimeseriesValue(ctx.catalog, ctx.actorUrn, urn, aspect!);
    if (value === undefined) throw notFound(`${aspect} of ${urn}`);
    return { body: { value } };
  }
  // `?version=N`: one kept version, numbered like DataHub (0 the latest, N >= 1 the N-th value written; docs/changes.md).
  const version = new QueryReader(ctx.query).integer('version');
  if (version !== undefined) {
    const kept = await ctx.catalog.entities.aspectVersion(ctx.actorUrn, urn, aspect!, version);
    if (!kept) throw notFound(`version ${version} of ${aspect} of ${urn}`);
    return { body: { value: kept.value, version: kept.version, created: kept.created, lastModified: kept.lastModified } };
  }
  const view = await ctx.catalog.entities.getAspect(ctx.actorUrn, urn, aspect!);
  if (!view) throw notFound(`${aspect} of ${urn}`);
  return { body: { value: view.value } };
}

async function postAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  if (aspectKind === 'timeseries') {
    const value = await appendTimeseriesAspect(ctx.catalog, ctx.actorUrn, urn, aspect!, ctx.body);
    return { body: { urn, aspects: { [aspect!]: { value } } } };
  }
  const view = await ctx.catalog.entities.upsertAspect(ctx.actorUrn, urn, aspect!, ctx.body as JsonObject);
  const written = view.aspects[aspect!];
  return { body: { urn, aspects: written ? { [aspect!]: { value: written.value } } : {} } };
}

async function patchStructuredProperties(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const properties = await ctx.catalog.properties.patchValues(ctx.actorUrn, urn, ctx.body as PropertyPatchRequest);
  return { body: { urn, aspects: { structuredProperties: { value: { properties } } } } };
}

async function deleteAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect } = address(ctx, true);
  if (!(await ctx.catalog.entities.deleteAspect(ctx.actorUrn, urn, aspect!))) throw notFound(`${aspect} of ${urn}`);
  return { body: { urn, aspect } };
}

/**
 * The reported delete (`catalog.entities.deleteEntity`): `hard` as given (left out, the entity type's
 * default of CONTRACT section 4), `dryRun` to check and count only. The answer is the report.
 */
async function deleteEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const hard = query.boolean('hard');
  const dryRun = query.boolean('dryRun');
  query.done();
  const deletion = await ctx.catalog.entities.deleteEntity(ctx.actorUrn, urn, { ...(hard !== undefined ? { hard } : {}), ...(dryRun !== undefined ? { dryRun } : {}) });
  return { body: deletion };
}

const SCROLL_PREFIX = 'after:';

function decodeScrollId(scrollId: string | undefined): string | undefined {
  if (scrollId === undefined || scrollId === '') return undefined;
  const text = Buffer.from(scrollId, 'base64url').toString('utf8');
  if (!text.startsWith(SCROLL_PREFIX)) {
    const message = 'is not a scrollId of this listing (pass back the one of the previous page)';
    throw new CatalogError('INVALID_INPUT', `scrollId ${message}`, { details: [{ path: 'scrollId', message }] });
  }
  return text.slice(SCROLL_PREFIX.length);
}

async function listEntities(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const count = query.integer('count') ?? 10;
  const afterUrn = decodeScrollId(query.string('scrollId'));
  query.done();
  const views = await ctx.catalog.entities.list(ctx.actorUrn, { entityType, limit: count, ...(afterUrn !== undefined ? { afterUrn } : {}) });
  const last = views[views.length - 1];
  return {
    body: {
      entities: views.map((view) => ({ urn: view.urn, aspects: aspectsOf(view) })),
      ...(last && views.length === count ? { scrollId: Buffer.from(`${SCROLL_PREFIX}${last.urn}`).toString('base64url') } : {}),
    },
  };
}

export const entityRoutes: readonly RouteSpec[] = [
  { pattern: '/openapi/v2/entity/{entityName}', methods: { GET: { body: 'none', handle: listEntities } } },
  {
    pattern: '/openapi/v2/entity/{entityName}/{urn}',
    methods: { GET: { body: 'none', handle: getEntity }, DELETE: { body: 'none', handle: deleteEntity } },
  },
  {
    pattern: '/openapi/v2/entity/{entityName}/{urn}/{aspectName}',
    methods: {
      GET: { body: 'none', handle: getAspect },
      POST: { body: 'json', handle: postAspect },
      DELETE: { body: 'none', handle: deleteAspect },
    },
  },
  {
    pattern: '/openapi/v2/entity/{entityName}/{urn}/structuredProperties',
    methods: {
      GET: { body: 'none', handle: (ctx) => getAspect(withAspect(ctx, 'structuredProperties')) },
      POST: { body: 'json', handle: (ctx) => postAspect(withAspect(ctx, 'structuredProperties')) },
      PATCH: { body: 'json-patch', handle: patchStructuredProperties },
    },
  },
  {
    pattern: '/openapi/v2/entity/structuredProperty/{urn}/propertyDefinition',
    methods: {
      GET: { body: 'none', handle: (ctx) => getAspect(withAspect({ ...ctx, params: { ...ctx.params, entityName: 'structuredProperty' } }, 'propertyDefinition')) },
      POST: { body: 'json', handle: (ctx) => postAspect(withAspect({ ...ctx, params: { ...ctx.params, entityName: 'structuredProperty' } }, 'propertyDefinition')) },
    },
  },
];

function withAspect(ctx: RouteContext, aspectName: string): RouteContext {
  return { ...ctx, params: { ...ctx.params, aspectName } };
}
