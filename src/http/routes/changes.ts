import type { Actor } from '../../core/access';
import type { ChangeEvent } from '../../adapter/types';
import type { Catalog } from '../../catalog';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/** A comment line every this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/**
 * The change feed over HTTP (docs/changes.md): `GET /openapi/v2/changes?after=&limit=&entityTypes=&aspects=`
 * answers `{ events, next }` (catalog.changes.read, VIEW_CHANGE_FEED). With `Accept: text/event-stream`
 * the same route streams server-sent events (catalog.changes.follow): each event as `id: <id>` and
 * `data: <event JSON>`, resumable with `Last-Event-ID` (or `after`), a `: heartbeat` comment every 15 s.
 */
async function readChanges(ctx: RouteContext): Promise<RouteResult> {
  const query = new QueryReader(ctx.query);
  const after = query.string('after');
  const limit = query.integer('limit');
  const entityTypes = query.strings('entityTypes');
  const aspects = query.strings('aspects');
  query.done();
  if (ctx.header?.('accept')?.includes('text/event-stream')) {
    const resume = ctx.header('last-event-id') ?? after;
    const filters = { ...(entityTypes.length ? { entityTypes } : {}), ...(aspects.length ? { aspects } : {}) };
    // Privilege and cursor are checked before the stream starts, so a refusal is an ordinary error answer.
    await ctx.catalog.changes.read(ctx.actor, { ...(resume ? { after: resume } : {}), limit: 1, ...filters });
    const controller = new AbortController();
    return {
      body: null,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
      stream: {
        chunks: eventStream(ctx.catalog, ctx.actor, resume || undefined, filters, controller.signal),
        cancel: () => controller.abort(),
      },
    };
  }
  const page = await ctx.catalog.changes.read(ctx.actor, {
    ...(after !== undefined && after !== '' ? { after } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(entityTypes.length ? { entityTypes } : {}),
    ...(aspects.length ? { aspects } : {}),
  });
  return { body: page };
}

export const changeRoutes: readonly RouteSpec[] = [
  { pattern: '/openapi/v2/changes', methods: { GET: { body: 'none', handle: readChanges } } },
];

/** Server-sent events from `follow`, with heartbeats while nothing happens; ends when `signal` aborts. */
async function* eventStream(
  catalog: Catalog,
  actor: Actor,
  after: string | undefined,
  filters: { entityTypes?: string[]; aspects?: string[] },
  signal: AbortSignal,
): AsyncGenerator<string> {
  const events = catalog.changes.follow(actor, { ...(after ? { after } : {}), ...filters, signal })[Symbol.asyncIterator]();
  yield 'retry: 1000\n: connected\n\n';
  let pending: Promise<IteratorResult<ChangeEvent>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<'stop'>((resolve) => signal.addEventListener('abort', () => resolve('stop'), { once: true }));
  try {
    while (!signal.aborted) {
      pending ??= events.next();
      const beat = new Promise<'beat'>((resolve) => {
        timer = setTimeout(() => resolve('beat'), HEARTBEAT_MS);
      });
      const outcome = await Promise.race([pending, beat, stopped]);
      clearTimeout(timer);
      if (outcome === 'stop') return;
      if (outcome === 'beat') {
        yield ': heartbeat\n\n';
        continue;
      }
      pending = undefined;
      if (outcome.done) return;
      yield `id: ${outcome.value.id}\ndata: ${JSON.stringify(outcome.value)}\n\n`;
    }
  } finally {
    clearTimeout(timer);
    // follow ends on the aborted signal; its pending read settles and is dropped.
    await events.return?.(undefined).catch(() => undefined);
  }
}
