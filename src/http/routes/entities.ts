import type { AspectMap, AspectName } from '../../core/entities';
import type { EntityView } from '../../core/entities';
import { resolveEntityAddress, type ResolvedEntityAddress } from '../../core/entities';
import { CatalogError } from '../../errors';
import type { PropertyPatchRequest } from '../../core/properties';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';
import { appendTimeseriesAspect } from './timeseries';

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
  const view = await ctx.catalog.entities.get(ctx.actor, urn, aspects.length ? { aspects } : {});
  if (!view) throw notFound(urn);
  return { body: { urn, aspects: aspectsOf(view) } };
}

async function getAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  if (aspectKind === 'timeseries') {
    const value = await ctx.catalog.timeseries.latest(ctx.actor, urn, aspect!);
    if (value === undefined) throw notFound(`${aspect} of ${urn}`);
    return { body: { value } };
  }
  // `?version=N`: one kept version, numbered like DataHub (0 the latest, N >= 1 the N-th value written; docs/changes.md).
  const version = new QueryReader(ctx.query).integer('version');
  if (version !== undefined) {
    const kept = await ctx.catalog.entities.aspectVersion(ctx.actor, urn, aspect as AspectName, version);
    if (!kept) throw notFound(`version ${version} of ${aspect} of ${urn}`);
    return { body: { value: kept.value, version: kept.version, created: kept.created, lastModified: kept.lastModified } };
  }
  // The aspect name comes from the path: the catalog checks it (the type is for callers in code).
  const view = await ctx.catalog.entities.getAspect(ctx.actor, urn, aspect as AspectName);
  if (!view) throw notFound(`${aspect} of ${urn}`);
  return { body: { value: view.value } };
}

async function postAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  if (aspectKind === 'timeseries') {
    const value = await appendTimeseriesAspect(ctx.catalog, ctx.actor, urn, aspect!, ctx.body);
    return { body: { urn, aspects: { [aspect!]: { value } } } };
  }
  const view = await ctx.catalog.entities.upsertAspect(ctx.actor, urn, aspect as AspectName, ctx.body as AspectMap[AspectName]);
  const written = view.aspects[aspect!];
  return { body: { urn, aspects: written ? { [aspect!]: { value: written.value } } : {} } };
}

async function patchStructuredProperties(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const properties = await ctx.catalog.properties.patchValues(ctx.actor, urn, ctx.body as PropertyPatchRequest);
  return { body: { urn, aspects: { structuredProperties: { value: { properties } } } } };
}

async function deleteAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect } = address(ctx, true);
  if (!(await ctx.catalog.entities.deleteAspect(ctx.actor, urn, aspect!))) throw notFound(`${aspect} of ${urn}`);
  return { body: { urn, aspect } };
}

/**
 * The reported delete (`catalog.entities.deleteEntity`): `hard` as given (left out, the entity type's
 * default (docs/http.md)), `dryRun` to check and count only. The answer is the report.
 */
async function deleteEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const hard = query.boolean('hard');
  const dryRun = query.boolean('dryRun');
  query.done();
  const deletion = await ctx.catalog.entities.deleteEntity(ctx.actor, urn, {
    ...(hard !== undefined ? { hard } : {}),
    ...(dryRun !== undefined ? { dryRun } : {}),
  });
  return { body: deletion };
}

async function listEntities(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const count = query.integer('count');
  const scrollId = query.string('scrollId');
  query.done();
  const page = await ctx.catalog.entities.scroll(ctx.actor, {
    entityType,
    ...(count !== undefined ? { count } : {}),
    ...(scrollId !== undefined ? { scrollId } : {}),
  });
  return {
    body: {
      entities: page.entities.map((view) => ({ urn: view.urn, aspects: aspectsOf(view) })),
      ...(page.scrollId !== undefined ? { scrollId: page.scrollId } : {}),
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
      GET: {
        body: 'none',
        handle: (ctx) =>
          getAspect(withAspect({ ...ctx, params: { ...ctx.params, entityName: 'structuredProperty' } }, 'propertyDefinition')),
      },
      POST: {
        body: 'json',
        handle: (ctx) =>
          postAspect(withAspect({ ...ctx, params: { ...ctx.params, entityName: 'structuredProperty' } }, 'propertyDefinition')),
      },
    },
  },
];

function withAspect(ctx: RouteContext, aspectName: string): RouteContext {
  return { ...ctx, params: { ...ctx.params, aspectName } };
}
