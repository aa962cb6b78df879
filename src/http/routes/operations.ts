import type { JsonValue } from '../../adapter/types';
import { CatalogError } from '../../errors';
import { isTruncationFinal, type TruncateInput } from '../../core/timeseries';
import { previewYamlDefinitions, upsertYamlDefinitions } from '../property-yaml';
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
 * catalog's message ("Delete N out of M rows (P%). ...") for a dry run, the task id for a real run;
 * getEsTaskStatus `{ task }`: the truncation's status as JSON text `{ completed, taskId, status,
 * runTimeNanos }` (`{ error }` for an unknown id). Added for the command line (docs/cli.md):
 * upsertStructuredPropertyDefinitions (the YAML definitions file, as JSON entries; the value is
 * `[{ urn, outcome }]`), previewStructuredPropertyDefinitions (the same entries; the value is each one's
 * impact `[{ urn, outcome, breaking, reasons, affected, sample }]`, nothing written), reindex (the value is the final progress) and importRecords `{ records }` (a chunk of
 * an export written back; the value counts what was written).
 */
const ACTIONS: Record<string, (ctx: RouteContext) => Promise<JsonValue>> = {
  getIndexSizes: async (ctx) => JSON.stringify(await ctx.catalog.timeseries.getIndexSizes(ctx.actor)),
  truncateTimeseriesAspect: async (ctx) => {
    if (ctx.body === undefined) {
      const message = 'truncateTimeseriesAspect needs a JSON body { entityType, aspect, endTimeMillis, dryRun?, ... }';
      throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
    }
    const result = await ctx.catalog.timeseries.truncate(ctx.actor, ctx.body as TruncateInput);
    // A real run answers its task id alone, as the established platform does; getEsTaskStatus reads it back.
    return result.dryRun ? result.message : (result.taskId ?? result.message);
  },
  getEsTaskStatus: async (ctx) => {
    const body = requireBody(ctx, 'getEsTaskStatus', '{ task: "<task id of a truncation>" }');
    const task = typeof body.task === 'string' ? body.task : typeof body.taskId === 'string' ? body.taskId : undefined;
    if (task === undefined) {
      const message = 'give the task id a truncation answered, as task';
      throw new CatalogError('INVALID_INPUT', `getEsTaskStatus: ${message}`, { details: [{ path: 'body/task', message }] });
    }
    const status = await ctx.catalog.timeseries.getTruncation(ctx.actor, task);
    if (!status) return JSON.stringify({ error: `no truncation has the task id ${task}` });
    const runTimeNanos = status.startedAt === null ? 0 : ((status.finishedAt ?? status.startedAt) - status.startedAt) * 1_000_000;
    return JSON.stringify({ completed: isTruncationFinal(status.state), taskId: status.taskId, status, runTimeNanos });
  },
  upsertStructuredPropertyDefinitions: async (ctx) => {
    const body = requireBody(ctx, 'upsertStructuredPropertyDefinitions', '{ entries: [<definitions of the YAML file>] }');
    if (!Array.isArray(body.entries) || Object.keys(body).some((k) => k !== 'entries')) {
      const message = 'must be { entries: [...] }, the definitions of the YAML file';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const results = await upsertYamlDefinitions(ctx.catalog, ctx.actor, body.entries);
    return results.map((r) => ({ urn: r.property.urn, outcome: r.outcome }));
  },
  previewStructuredPropertyDefinitions: async (ctx) => {
    const body = requireBody(ctx, 'previewStructuredPropertyDefinitions', '{ entries: [<definitions of the YAML file>] }');
    if (!Array.isArray(body.entries) || Object.keys(body).some((k) => k !== 'entries')) {
      const message = 'must be { entries: [...] }, the definitions of the YAML file';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const previews = await previewYamlDefinitions(ctx.catalog, ctx.actor, body.entries);
    return previews.map((p) => ({ ...p, reasons: [...p.reasons], sample: p.sample.map((s) => ({ urn: s.urn, values: [...s.values] })) }));
  },
  importRecords: async (ctx) => {
    const body = requireBody(ctx, 'importRecords', '{ records: [<export records>], initial? }');
    if (
      !Array.isArray(body.records) ||
      Object.keys(body).some((k) => k !== 'records' && k !== 'initial') ||
      (body.initial !== undefined && typeof body.initial !== 'boolean')
    ) {
      const message = 'must be { records: [...], initial?: boolean }, lines of an export';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const options = body.initial === true ? { initial: true } : {};
    return { ...(await ctx.catalog.importRecordsAs(ctx.actor, body.records, options)) };
  },
  reindex: async (ctx) => {
    const body = ctx.body === undefined ? {} : requireBody(ctx, 'reindex', '{ batchSize? }');
    if (Object.keys(body).some((k) => k !== 'batchSize')) {
      const message = 'may hold only batchSize';
      throw new CatalogError('INVALID_INPUT', `body ${message}`, { details: [{ path: 'body', message }] });
    }
    const { lastUrn: _lastUrn, ...progress } = await ctx.catalog.reindexAs(
      ctx.actor,
      body.batchSize === undefined ? {} : { batchSize: body.batchSize as number },
    );
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

export const operationRoutes: readonly RouteSpec[] = [
  { pattern: '/operations', methods: { POST: { body: 'optional-json', handle: runAction } } },
];
