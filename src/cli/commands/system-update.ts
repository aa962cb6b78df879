import type { ReindexProgress } from '../../index';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog system-update --reindex [--db file | --server url] [--json]

Rebuilds every entity's search document from its stored aspects (after a hard delete, the operations
guide's "system update"). Shows a progress bar on a terminal in embedded mode; against a server the
work runs in the server and the command waits for it. Needs MANAGE_SYSTEM_OPERATIONS.
With --json: { processed, skipped, total?, done }.

  --reindex            rebuild the search documents (the only update there is)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 rebuilt, 1 refused or failed, 2 usage error.
`;

export const systemUpdateCommand = defineCommand({
  name: 'system-update',
  summary: 'rebuild the search documents (--reindex)',
  usage: USAGE,
  options: { reindex: { type: 'boolean' } },
  connects: true,
  async run(cli) {
    if (!cli.values.reindex) throw new UsageError('nothing to do: pass --reindex');
    const backend = await cli.backend();
    const bar = !cli.json && cli.terminal.canDrawProgress ? cli.terminal.progress('Reindexing') : undefined;
    if (bar && backend.where.startsWith('http')) cli.note(`Reindexing on ${backend.where}; this can take a while`);
    let result: ReindexProgress;
    try {
      result = await backend.reindex(bar ? (p) => bar.update(p.processed + p.skipped, p.total) : undefined);
    } finally {
      bar?.finish();
    }
    const { lastUrn: _lastUrn, ...summary } = result;
    if (cli.json) {
      cli.printJson(summary);
      return;
    }
    const skipped = result.skipped ? ` (${result.skipped} skipped: entity types this catalog does not know)` : '';
    cli.print(`Rebuilt the search documents of ${result.processed} ${result.processed === 1 ? 'entity' : 'entities'}${skipped}`);
  },
});
