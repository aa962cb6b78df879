import type { JsonObject } from '../../adapter/types';
import type { AspectName, EntityView } from '../../core/entities';
import { keyAspectName } from '../../core/entities';
import { parseUrn } from '../../core/urn';
import { CatalogError } from '../../errors';
import { QueryReader } from '../query';
import type { MethodSpec, RouteContext, RouteResult, RouteSpec } from '../router';
import { pegasusClassOf } from './pegasus-classes';

/**
 * DataHub's Rest.li endpoints as its Python SDK and `datahub` command line call them
 * (docs/datahub-clients.md): server configuration, change proposals, aspect and entity reads, hard
 * delete. The catalog decides everything; these routes translate shapes.
 */

/**
 * The DataHub release reported in `/config`. Its SDK chooses its write path from it: from 1.0.1 on, the
 * SDK (not the command line) writes through OpenAPI v3; below, every client writes through
 * `ingestProposal(Batch)`, which this catalog serves in full. docs/datahub-clients.md explains the choice.
 */
const REPORTED_DATAHUB_VERSION = 'v1.0.0';

const RESTLI: Pick<MethodSpec, 'restliErrors'> = { restliErrors: {} };
const PROPOSALS: Pick<MethodSpec, 'restliErrors'> = { restliErrors: { invalidInputStatus: 422 } };

function serverConfig(): JsonObject {
  return {
    // The SDK refuses a server whose `noCode` is not the string "true" (it takes it for the web front).
    noCode: 'true',
    versions: { 'acryldata/datahub': { version: REPORTED_DATAHUB_VERSION, commit: 'metacatalog' } },
    // `core`: not the hosted product (another value changes how the SDK behaves).
    datahub: { serverType: 'metacatalog', serverEnv: 'core' },
    patchCapable: true,
    statefulIngestionCapable: false,
    supportsImpactAnalysis: false,
    retention: 'true',
    managedIngestion: { enabled: false },
    // The command line then sends no usage telemetry.
    telemetry: { enabledCli: false, enabledIngestion: false },
  };
}

function bodyObject(ctx: RouteContext, shape: string): Record<string, unknown> {
  const body = ctx.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    const message = `the body must be ${shape}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: '/', message }] });
  }
  return body as Record<string, unknown>;
}

function checkAsync(body: Record<string, unknown>): void {
  // Writes are always synchronous here; `async` ("true" / "false") is accepted and has no effect.
  const flag = body.async;
  if (flag !== undefined && flag !== 'true' && flag !== 'false' && typeof flag !== 'boolean') {
    const message = 'must be "true" or "false"';
    throw new CatalogError('INVALID_INPUT', `async ${message}`, { details: [{ path: '/async', message }] });
  }
}

async function ingestProposal(ctx: RouteContext): Promise<RouteResult> {
  const body = bodyObject(ctx, '{ proposal: { entityType, entityUrn, changeType, aspectName, aspect }, async? }');
  checkAsync(body);
  if (body.proposal === undefined) {
    const message = 'is required';
    throw new CatalogError('INVALID_INPUT', `proposal ${message}`, { details: [{ path: '/proposal', message }] });
  }
  const [outcome] = await ctx.catalog.entities.applyProposals(ctx.actor, [body.proposal], { prefix: '/proposal' });
  return { body: { value: outcome!.urn } };
}

async function ingestProposalBatch(ctx: RouteContext): Promise<RouteResult> {
  const body = bodyObject(ctx, '{ proposals: [...], async? }');
  checkAsync(body);
  if (!Array.isArray(body.proposals)) {
    const message = 'must be a list of change proposals';
    throw new CatalogError('INVALID_INPUT', `proposals ${message}`, { details: [{ path: '/proposals', message }] });
  }
  await ctx.catalog.entities.applyProposals(ctx.actor, body.proposals, { prefix: '/proposals' });
  return { body: { value: 'success' } };
}

const ASPECT_ACTIONS: Record<string, (ctx: RouteContext) => Promise<RouteResult>> = { ingestProposal, ingestProposalBatch };

async function aspectAction(ctx: RouteContext): Promise<RouteResult> {
  const action = ctx.query.get('action');
  const run = action !== null && Object.hasOwn(ASPECT_ACTIONS, action) ? ASPECT_ACTIONS[action] : undefined;
  if (!run) {
    const message = `${action === null ? 'no action given' : `unknown action "${action.slice(0, 60)}"`}; the actions are ${Object.keys(ASPECT_ACTIONS).join(', ')}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'action', message }] });
  }
  return run(ctx);
}

function notFound(what: string): CatalogError {
  return new CatalogError('NOT_FOUND', `${what} does not exist`);
}

/** `GET /aspects/{urn}?aspect=&version=`: `{ urn, version, aspect: { <class>: value }, created?, systemMetadata? }`; 404 when absent. */
async function getAspect(ctx: RouteContext): Promise<RouteResult> {
  const urn = ctx.params.urn!;
  const query = new QueryReader(ctx.query);
  const aspect = query.string('aspect');
  const version = query.integer('version') ?? 0;
  query.done();
  if (aspect === undefined || aspect === '') {
    const message = 'is required (the aspect name)';
    throw new CatalogError('INVALID_INPUT', `aspect ${message}`, { details: [{ path: 'aspect', message }] });
  }
  const parsed = parseUrn(urn);
  if (aspect.endsWith('Key') && !ctx.catalog.registry.hasAspect(aspect)) {
    // A key aspect exists while the entity does: derived from its URN (also for entity and data types).
    const key = version === 0 ? await ctx.catalog.entities.keyAspect(ctx.actor, urn) : undefined;
    if (!key || key.name !== aspect) throw notFound(`${aspect} of ${urn}`);
    return { body: { urn, version: 0, aspect: { [pegasusClassOf(aspect)]: key.value } } };
  }
  if (ctx.catalog.registry.hasAspect(aspect) && ctx.catalog.registry.aspect(aspect).timeseries) {
    const message = `"${aspect}" is a timeseries aspect: read its rows with GET /openapi/v2/timeseries/${parsed.entityType}/${aspect}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'aspect', message }] });
  }
  if (version === 0) {
    const view = await ctx.catalog.entities.getAspect(ctx.actor, urn, aspect as AspectName, { systemMetadata: true });
    if (!view) throw notFound(`${aspect} of ${urn}`);
    return {
      body: {
        urn,
        version: 0,
        aspect: { [pegasusClassOf(aspect)]: view.value },
        created: view.lastModified,
        ...(view.systemMetadata ? { systemMetadata: view.systemMetadata } : {}),
      },
    };
  }
  const kept = await ctx.catalog.entities.aspectVersion(ctx.actor, urn, aspect as AspectName, version);
  if (!kept) throw notFound(`version ${version} of ${aspect} of ${urn}`);
  return { body: { urn, version, aspect: { [pegasusClassOf(aspect)]: kept.value }, created: kept.lastModified } };
}

/** `List(a,b)` (Rest.li protocol 2), or `a,b`, or repeated parameters. */
function aspectList(query: URLSearchParams): string[] | undefined {
  const given = query.getAll('aspects');
  if (given.length === 0) return undefined;
  return given.flatMap(restliList);
}

function envelope(name: string, aspect: EntityView['aspects'][string]): JsonObject {
  return {
    name,
    type: 'VERSIONED',
    version: 0,
    value: aspect.value,
    created: { ...aspect.lastModified },
    ...(aspect.systemMetadata ? { systemMetadata: aspect.systemMetadata } : {}),
  };
}

/** One entity in DataHub's `EntityResponse` shape, or undefined when it does not exist. */
async function entityResponse(ctx: RouteContext, urn: string, requested: readonly string[] | undefined): Promise<JsonObject | undefined> {
  const parsed = parseUrn(urn);
  const keyName = keyAspectName(parsed.entityType);
  const stored = requested?.filter((name) => name !== keyName);
  // Named aspects must be the type's (the catalog refuses others); a read of only the key still reads the entity.
  for (const name of stored ?? []) ctx.catalog.registry.requireAspectOf(parsed.entityType, name);
  // The whole entity is read (existence, the key's stamp); only the named aspects are answered.
  const view = await ctx.catalog.entities.get(ctx.actor, urn, { systemMetadata: true });
  if (!view) return undefined;
  const key = await ctx.catalog.entities.keyAspect(ctx.actor, urn);
  const aspects: Record<string, JsonObject> = {};
  for (const [name, aspect] of Object.entries(view.aspects)) {
    if (stored && !stored.includes(name)) continue;
    if (ctx.catalog.registry.hasAspect(name) && ctx.catalog.registry.aspect(name).timeseries) continue;
    aspects[name] = envelope(name, aspect);
  }
  if (key && (requested === undefined || requested.includes(key.name))) {
    aspects[key.name] = { name: key.name, type: 'VERSIONED', version: 0, value: key.value, created: { ...firstCreated(view) } };
  }
  return { entityName: parsed.entityType, urn, aspects };
}

/** `GET /entitiesV2/{urn}?aspects=List(a,b)`: `{ entityName, urn, aspects: { name: { name, type, version, value, created, systemMetadata? } } }`. */
async function getEntityV2(ctx: RouteContext): Promise<RouteResult> {
  const urn = ctx.params.urn!;
  const answer = await entityResponse(ctx, urn, aspectList(ctx.query));
  if (!answer) throw notFound(urn);
  return { body: answer };
}

/** The members of a Rest.li list `List(a,b)` split at its top level (a tuple URN keeps its own commas). */
function restliList(text: string): string[] {
  const inner = /^List\((.*)\)$/s.exec(text)?.[1] ?? text;
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of inner) {
    if (ch === ',' && depth === 0) {
      items.push(current);
      current = '';
      continue;
    }
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    current += ch;
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

/** Entities read at once (the SDK's and tests' batch get): every URN checked first. */
const MAX_BATCH_GET = 1000;

/** `GET /entitiesV2?ids=List(u1,u2)&aspects=List(a,b)`: `{ results: { <urn>: EntityResponse }, statuses: {}, errors: {} }`; absent entities are left out. */
async function batchGetEntitiesV2(ctx: RouteContext): Promise<RouteResult> {
  const ids = ctx.query.getAll('ids').flatMap(restliList);
  if (ids.length === 0 || ids.length > MAX_BATCH_GET) {
    const message = `must name 1 to ${MAX_BATCH_GET} URNs: ids=List(<urn>,<urn>)`;
    throw new CatalogError('INVALID_INPUT', `ids ${message}`, { details: [{ path: 'ids', message }] });
  }
  const problems = ids.flatMap((urn, i) => {
    try {
      parseUrn(urn, `ids/${i}`);
      return [];
    } catch (error) {
      return error instanceof CatalogError ? [...error.details] : [{ path: `ids/${i}`, message: String(error) }];
    }
  });
  if (problems.length)
    throw new CatalogError('INVALID_INPUT', `invalid ids: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, {
      details: problems,
    });
  const requested = aspectList(ctx.query);
  const results: Record<string, JsonObject> = {};
  for (const urn of new Set(ids)) {
    const answer = await entityResponse(ctx, urn, requested);
    if (answer) results[urn] = answer;
  }
  return { body: { results, statuses: {}, errors: {} } };
}

function firstCreated(view: EntityView): { time: number; actor: string } {
  const stamps = Object.values(view.aspects).map((a) => a.created);
  return stamps.reduce((a, b) => (b.time < a.time ? b : a), stamps[0] ?? { time: 0, actor: 'urn:li:corpuser:unknown' });
}

/** `POST /entities?action=delete { urn }`: hard delete; `{ value: { urn, rows, timeseriesRows } }` (what was removed). */
async function entityAction(ctx: RouteContext): Promise<RouteResult> {
  const action = ctx.query.get('action');
  if (action === 'deleteReferences') {
    // The command line asks for it before hard-deleting a user, group, tag or domain.
    const message = 'deleteReferences is not supported: references between entities are not indexed here; delete the entity itself';
    throw new CatalogError('UNSUPPORTED', message, { details: [{ path: 'action', message }] });
  }
  if (action !== 'delete') {
    const message = `${action === null ? 'no action given' : `unknown action "${action.slice(0, 60)}"`}; the actions are delete`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'action', message }] });
  }
  const body = bodyObject(ctx, '{ urn }');
  const extra = Object.keys(body).filter((k) => k !== 'urn');
  if (extra.length) {
    const message = `${extra.join(', ')} ${extra.length === 1 ? 'is' : 'are'} not supported: this action deletes a whole entity`;
    throw new CatalogError('UNSUPPORTED', message, { details: extra.map((k) => ({ path: `/${k}`, message: 'not supported' })) });
  }
  if (typeof body.urn !== 'string') {
    const message = 'must be the URN of the entity to delete';
    throw new CatalogError('INVALID_INPUT', `urn ${message}`, { details: [{ path: '/urn', message }] });
  }
  const urn = body.urn;
  const { entityType } = parseUrn(urn, '/urn');
  const view = await ctx.catalog.entities.get(ctx.actor, urn, { systemMetadata: true });
  if (!view) {
    // Nothing to remove: zero rows, as the platform answers, once the caller is found allowed to delete.
    try {
      await ctx.catalog.entities.deleteEntity(ctx.actor, urn, { hard: true, dryRun: true });
    } catch (error) {
      if (!(error instanceof CatalogError && error.code === 'NOT_FOUND')) throw error;
    }
    return { body: { value: { urn, rows: 0, timeseriesRows: 0 } } };
  }
  const timeseriesRows = await countTimeseriesRows(ctx, urn, entityType);
  await ctx.catalog.entities.deleteEntity(ctx.actor, urn, { hard: true });
  // A key aspect is a row of its own on the platform; it is counted the same way here.
  const rows = Object.keys(view.aspects).length + (keyAspectName(entityType) ? 1 : 0);
  return { body: { value: { urn, rows, timeseriesRows } } };
}

async function countTimeseriesRows(ctx: RouteContext, urn: string, entityType: string): Promise<number> {
  let total = 0;
  for (const aspect of ctx.catalog.registry.timeseriesAspectsOf(entityType)) {
    let scrollId: string | undefined;
    do {
      const page = await ctx.catalog.timeseries.query(ctx.actor, { aspect, urn, count: 10_000, ...(scrollId ? { scrollId } : {}) });
      total += page.results.length;
      scrollId = page.scrollId;
    } while (scrollId);
  }
  return total;
}

export const restliRoutes: readonly RouteSpec[] = [
  { pattern: '/config', methods: { GET: { body: 'none', public: true, ...RESTLI, handle: async () => ({ body: serverConfig() }) } } },
  { pattern: '/aspects', methods: { POST: { body: 'json', bodyLimit: 'proposals', ...PROPOSALS, handle: aspectAction } } },
  { pattern: '/aspects/{urn}', methods: { GET: { body: 'none', ...RESTLI, handle: getAspect } } },
  { pattern: '/entitiesV2', methods: { GET: { body: 'none', ...RESTLI, handle: batchGetEntitiesV2 } } },
  { pattern: '/entitiesV2/{urn}', methods: { GET: { body: 'none', ...RESTLI, handle: getEntityV2 } } },
  { pattern: '/entities', methods: { POST: { body: 'json', ...RESTLI, handle: entityAction } } },
];
