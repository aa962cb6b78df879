import type { AspectMap, AspectName, JsonPatchOperation, ResolvedEntityAddress } from '../../core/entities';
import { resolveEntityAddress } from '../../core/entities';
import { CatalogError, withPaths } from '../../errors';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';
import { aspectNames, batchGet, scrollAcrossTypes, scrollEntities } from './openapi-v3-listing';
import {
  aspectV3,
  batchToPatches,
  batchToUpserts,
  entityV3,
  readEnvelope,
  envelopePath,
  patchItemPath,
  v3BatchPath,
} from './openapi-v3-shapes';
import { appendTimeseriesAspect } from './timeseries';

/**
 * DataHub's OpenAPI v3 entity family, `/openapi/v3/entity/{entityName}[/{urn}[/{aspectName}]]`:
 * batch writes and scrolls of a type, entity and aspect reads, writes, patches and deletes, in v3's
 * shapes (openapi-v3-shapes.ts). Every write is done when the answer is sent (`async` is accepted and
 * changes nothing). docs/http.md lists the flags each route takes.
 */

const BASE = '/openapi/v3/entity';

function address(ctx: RouteContext, withAspect: boolean): ResolvedEntityAddress & { urn: string } {
  return resolveEntityAddress(ctx.catalog.registry, {
    entityName: ctx.params.entityName!,
    urn: ctx.params.urn!,
    ...(withAspect ? { aspect: ctx.params.aspectName! } : {}),
  }) as ResolvedEntityAddress & { urn: string };
}

function notFound(what: string): CatalogError {
  return new CatalogError('NOT_FOUND', `${what} does not exist`);
}

/** `async` (accepted, the write is synchronous anyway) and `systemMetadata` (answer each aspect's system metadata). */
function readWriteFlags(query: QueryReader): { withSystemMetadata: boolean } {
  query.boolean('async');
  return { withSystemMetadata: query.boolean('systemMetadata') === true };
}

/** The batch write: every entity checked first, then one bulk write (`catalog.entities.upsertMany`, atomic per chunk). */
async function postEntities(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const { withSystemMetadata } = readWriteFlags(query);
  query.done();
  const items = batchToUpserts(ctx.body, entityType);
  const written = new Map<string, Set<string>>();
  for (const item of items) written.set(item.urn, new Set([...(written.get(item.urn) ?? []), ...Object.keys(item.aspects)]));
  let views;
  try {
    views = await ctx.catalog.entities.upsertMany(ctx.actor, items, { systemMetadata: withSystemMetadata });
  } catch (error) {
    throw withPaths(error, v3BatchPath(items.length), items.length === 1 ? 'invalid entity' : 'invalid entities');
  }
  return { body: views.map((view) => entityV3(view, withSystemMetadata, written.get(view.urn))) };
}

/**
 * The batch patch: `[{ urn, <aspect>: { value: { patch, arrayPrimaryKeys? } } }]`, every patch applied in
 * one atomic step (`catalog.entities.patchMany`); answers the patched aspects (200, also with `async=true`).
 */
async function patchEntities(ctx: RouteContext): Promise<RouteResult> {
  const { entityType } = resolveEntityAddress(ctx.catalog.registry, { entityName: ctx.params.entityName! });
  const query = new QueryReader(ctx.query);
  const { withSystemMetadata } = readWriteFlags(query);
  query.done();
  const items = batchToPatches(ctx.body, entityType);
  const patched = new Map<string, Set<string>>();
  for (const item of items) patched.set(item.urn, new Set([...(patched.get(item.urn) ?? []), item.aspect]));
  let views;
  try {
    views = await ctx.catalog.entities.patchMany(
      ctx.actor,
      items.map(({ urn, aspect, patch, arrayPrimaryKeys }) => ({ urn, aspect, patch, ...(arrayPrimaryKeys ? { arrayPrimaryKeys } : {}) })),
    );
  } catch (error) {
    throw withPaths(error, patchItemPath(items), 'invalid patches');
  }
  if (withSystemMetadata)
    views = await ctx.catalog.entities.getMany(
      ctx.actor,
      views.map((v) => v.urn),
      { systemMetadata: true },
    );
  return { body: views.map((view) => entityV3(view, withSystemMetadata, patched.get(view.urn))) };
}

async function getEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const aspects = aspectNames(query);
  const withSystemMetadata = query.boolean('systemMetadata') === true;
  query.done();
  const view = await ctx.catalog.entities.get(ctx.actor, urn, {
    ...(aspects.length ? { aspects } : {}),
    systemMetadata: withSystemMetadata,
  });
  if (!view || Object.keys(view.aspects).length === 0)
    throw notFound(aspects.length ? `${urn} with any of the aspects ${aspects.join(', ')}` : urn);
  return { body: entityV3(view, withSystemMetadata) };
}

/** 204 when the entity exists (soft-deleted ones only with `includeSoftDelete=true`), 404 otherwise; never a body. */
async function headEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const includeSoftDeleted = query.boolean('includeSoftDelete') === true;
  query.done();
  return { status: (await ctx.catalog.entities.exists(ctx.actor, urn, { includeSoftDeleted })) ? 204 : 404, body: undefined };
}

/**
 * A hard delete of the entity (`catalog.entities.deleteEntity` with `hard: true`; a structured
 * property's values then go in the background), or with `aspects=a,b` only those aspects, atomically.
 * 200 without a body, also when there was nothing to delete.
 */
async function deleteEntity(ctx: RouteContext): Promise<RouteResult> {
  const { urn } = address(ctx, false);
  const query = new QueryReader(ctx.query);
  const aspects = query.strings('aspects');
  const clear = query.boolean('clear') === true;
  query.done();
  if (clear) {
    const message =
      'clear=true (remove every aspect but the key) is not available: entities have no key aspect here; delete the entity, or name the aspects';
    throw new CatalogError('UNSUPPORTED', message, { details: [{ path: 'clear', message }] });
  }
  if (aspects.length) await ctx.catalog.entities.deleteAspects(ctx.actor, urn, aspects);
  else {
    try {
      await ctx.catalog.entities.deleteEntity(ctx.actor, urn, { hard: true });
    } catch (error) {
      // Idempotent as on the platform: an entity that is not there is deleted already.
      if (!(error instanceof CatalogError && error.code === 'NOT_FOUND')) throw error;
    }
  }
  return { body: undefined };
}

/** The aspect `{ value, systemMetadata? }`; `version=N` reads a kept version (0 the latest). */
async function getAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  const query = new QueryReader(ctx.query);
  const version = query.integer('version');
  const withSystemMetadata = query.boolean('systemMetadata') === true;
  query.done();
  if (aspectKind === 'timeseries') {
    const value = await ctx.catalog.timeseries.latest(ctx.actor, urn, aspect!);
    if (value === undefined) throw notFound(`${aspect} of ${urn}`);
    return { body: { value } };
  }
  if (version !== undefined && version !== 0) {
    const kept = await ctx.catalog.entities.aspectVersion(ctx.actor, urn, aspect as AspectName, version, {
      systemMetadata: withSystemMetadata,
    });
    if (!kept) throw notFound(`version ${version} of ${aspect} of ${urn}`);
    return { body: aspectV3(kept, withSystemMetadata) };
  }
  const view = await ctx.catalog.entities.get(ctx.actor, urn, { aspects: [aspect!], systemMetadata: withSystemMetadata });
  const found = view?.aspects[aspect!];
  if (!found) throw notFound(`${aspect} of ${urn}`);
  return { body: aspectV3(found, withSystemMetadata) };
}

async function headAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect } = address(ctx, true);
  const query = new QueryReader(ctx.query);
  const includeSoftDeleted = query.boolean('includeSoftDelete') === true;
  query.done();
  return {
    status: (await ctx.catalog.entities.exists(ctx.actor, urn, { aspect: aspect!, includeSoftDeleted })) ? 204 : 404,
    body: undefined,
  };
}

/**
 * Writes one aspect from `{ value, systemMetadata? }`. As on the platform, the write only creates
 * the aspect unless `createIfNotExists=false`; `createEntityIfNotExists=true` only creates the
 * entity (either refusal is CONFLICT). A timeseries aspect appends the value as a row.
 */
async function postAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect, aspectKind } = address(ctx, true);
  const query = new QueryReader(ctx.query);
  const { withSystemMetadata } = readWriteFlags(query);
  const createIfNotExists = query.boolean('createIfNotExists');
  const createEntityIfNotExists = query.boolean('createEntityIfNotExists') ?? query.boolean('createIfEntityNotExists');
  query.done();
  const violations: Array<{ path: string; message: string }> = [];
  const envelope = readEnvelope(ctx.body, '', violations);
  if (!envelope)
    throw new CatalogError('INVALID_INPUT', `invalid aspect: ${violations.map((v) => `${v.path || '/'} ${v.message}`).join('; ')}`, {
      details: violations,
    });
  if (aspectKind === 'timeseries') {
    const value = await appendTimeseriesAspect(ctx.catalog, ctx.actor, urn, aspect!, envelope.value);
    return { body: { urn, [aspect!]: { value } } };
  }
  const onlyIfAbsent = createEntityIfNotExists === true ? 'entity' : createIfNotExists === false ? undefined : 'aspect';
  const written = await ctx.catalog.entities
    .upsertAspect(ctx.actor, urn, aspect as AspectName, envelope.value as AspectMap[AspectName], {
      ...(envelope.systemMetadata ? { systemMetadata: envelope.systemMetadata } : {}),
      ...(onlyIfAbsent ? { onlyIfAbsent } : {}),
    })
    .catch((error: unknown) => {
      throw withPaths(error, envelopePath(aspect!), 'invalid aspect');
    });
  const view = withSystemMetadata ? await ctx.catalog.entities.get(ctx.actor, urn, { aspects: [aspect!], systemMetadata: true }) : written;
  return { body: entityV3(view ?? written, withSystemMetadata, new Set([aspect!])) };
}

/** `{ patch: [...], arrayPrimaryKeys? }` applied to the aspect (`catalog.entities.patchAspect`). */
async function patchAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect } = address(ctx, true);
  const query = new QueryReader(ctx.query);
  const { withSystemMetadata } = readWriteFlags(query);
  query.done();
  const body = ctx.body as { patch?: unknown; arrayPrimaryKeys?: unknown } | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const message = 'the body must be { patch: [JSON Patch operations], arrayPrimaryKeys? }';
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/', message: 'must be an object with a patch list' }] });
  }
  const written = await ctx.catalog.entities.patchAspect(ctx.actor, urn, aspect!, body.patch as JsonPatchOperation[], {
    ...(body.arrayPrimaryKeys !== undefined ? { arrayPrimaryKeys: body.arrayPrimaryKeys as Record<string, string[]> } : {}),
  });
  const view = withSystemMetadata ? await ctx.catalog.entities.get(ctx.actor, urn, { aspects: [aspect!], systemMetadata: true }) : written;
  return { body: entityV3(view ?? written, withSystemMetadata, new Set([aspect!])) };
}

/** Idempotent as on the platform: 200 whether or not the entity had the aspect. */
async function deleteAspect(ctx: RouteContext): Promise<RouteResult> {
  const { urn, aspect } = address(ctx, true);
  await ctx.catalog.entities.deleteAspect(ctx.actor, urn, aspect!);
  return { body: undefined };
}

export const openapiV3Routes: readonly RouteSpec[] = [
  { pattern: `${BASE}/scroll`, methods: { POST: { body: 'optional-json', handle: scrollAcrossTypes } } },
  { pattern: `${BASE}/{entityName}/batchGet`, methods: { POST: { body: 'json', handle: batchGet } } },
  {
    pattern: `${BASE}/{entityName}`,
    methods: {
      GET: { body: 'none', handle: scrollEntities },
      POST: { body: 'json', handle: postEntities },
      PATCH: { body: 'json-or-json-patch', handle: patchEntities },
    },
  },
  {
    pattern: `${BASE}/{entityName}/{urn}`,
    methods: {
      GET: { body: 'none', handle: getEntity },
      HEAD: { body: 'none', handle: headEntity },
      DELETE: { body: 'none', handle: deleteEntity },
    },
  },
  {
    pattern: `${BASE}/{entityName}/{urn}/{aspectName}`,
    methods: {
      GET: { body: 'none', handle: getAspect },
      HEAD: { body: 'none', handle: headAspect },
      POST: { body: 'json', handle: postAspect },
      PATCH: { body: 'json-or-json-patch', handle: patchAspect },
      DELETE: { body: 'none', handle: deleteAspect },
    },
  },
];
