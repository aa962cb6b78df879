import type { ExportExtra, ExportRecord } from '../../core/transfer';
import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/**
 * `GET /openapi/v2/export?with=history,changes`: the whole catalog as JSON lines of export records
 * (catalog.exportAllAs, MANAGE_SYSTEM_OPERATIONS), streamed as it is read, for `metacatalog export
 * --server`. The privilege and the options are checked before the answer starts, so a refusal is an
 * ordinary error answer; the last line is the `end` record, which tells a whole answer from a cut one.
 */
async function exportCatalog(ctx: RouteContext): Promise<RouteResult> {
  const query = new QueryReader(ctx.query);
  const extras = query
    .strings('with')
    .flatMap((w) => w.split(','))
    .filter((w) => w !== '');
  query.done();
  const records = (await ctx.catalog.exportAllAs(ctx.actor, { with: extras as ExportExtra[] }))[Symbol.asyncIterator]();
  const first = await records.next();
  let cancelled = false;
  async function* lines(): AsyncGenerator<string> {
    try {
      if (!first.done) yield `${JSON.stringify(first.value)}\n`;
      for (let next = await records.next(); !next.done && !cancelled; next = await records.next()) yield `${JSON.stringify(next.value)}\n`;
    } finally {
      await records.return?.(undefined as unknown as ExportRecord).catch(() => undefined);
    }
  }
  return {
    body: null,
    headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' },
    stream: {
      chunks: lines(),
      cancel: () => {
        cancelled = true;
      },
    },
  };
}

export const exportRoutes: readonly RouteSpec[] = [
  { pattern: '/openapi/v2/export', methods: { GET: { body: 'none', handle: exportCatalog } } },
];
