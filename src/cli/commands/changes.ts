import type { ChangeEvent } from '../../adapter/types';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog changes [--after ID] [--limit N] [--follow] [--db file | --server url] [--json]

Prints the change feed: one line per committed aspect change (id, time, actor, change type, entity,
aspect), oldest first. --after ID starts after that event (the id of the last one you saw);
--follow keeps printing new events as they are committed (Ctrl-C stops). Needs VIEW_CHANGE_FEED.
With --json: one event per line as JSON (JSON lines), the whole event with its aspect values.

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 printed, 1 refused, 2 usage error.
`;

function line(e: ChangeEvent): string {
  return `${e.id}  ${new Date(e.created.time).toISOString()}  ${e.created.actor}  ${e.changeType.padEnd(6)}  ${e.entityUrn}  ${e.aspectName}`;
}

export const changesCommand = defineCommand({
  name: 'changes',
  summary: 'print (and with --follow, follow) the change feed',
  usage: USAGE,
  options: { after: { type: 'string' }, limit: { type: 'string' }, follow: { type: 'boolean' } },
  connects: true,
  async run(cli) {
    const after = cli.values.after;
    if (after !== undefined && !/^\d+$/.test(after)) throw new UsageError(`--after must be an event id (digits), got "${after}"`);
    const limit = cli.values.limit === undefined ? 1000 : Number(cli.values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new UsageError(`--limit must be an integer from 1 to 1000, got "${cli.values.limit}"`);
    const backend = await cli.backend();
    const show = (e: ChangeEvent): void => (cli.json ? cli.print(JSON.stringify(e)) : cli.print(line(e)));
    if (cli.values.follow === true) {
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        for await (const event of backend.followChanges({ ...(after ? { after } : {}), signal: controller.signal })) show(event);
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      return;
    }
    const page = await backend.readChanges({ ...(after ? { after } : {}), limit });
    for (const event of page.events) show(event);
    if (!cli.json) cli.note(`next: ${page.next}`);
  },
});
