import type { FacetFilterInput } from '../../index';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, parseInteger } from '../options';

const USAGE = `Usage: metacatalog tokens list [--all | --owner <user urn>] [--start n] [--count n] [--db file | --server url] [--json]

Lists access tokens (never the tokens themselves), latest expiry first: your own by default.

  --all                every user's tokens (needs MANAGE_ACCESS_TOKENS)
  --owner <user urn>   the tokens created by that user (another user needs MANAGE_ACCESS_TOKENS)
  --start <n>          offset (default 0)
  --count <n>          page size, 1 to 1000 (default 100)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 listed, 1 refused, 2 usage error.
`;

export const tokensListCommand = defineCommand({
  name: 'tokens list',
  summary: 'list access tokens',
  usage: USAGE,
  options: { all: { type: 'boolean' }, owner: { type: 'string' }, start: { type: 'string' }, count: { type: 'string' } },
  connects: true,
  async run(cli) {
    if (cli.values.all && cli.values.owner !== undefined) throw new UsageError('give either --all or --owner, not both');
    const start = parseInteger(cli.values.start, '--start', 0, 1_000_000_000) ?? 0;
    const count = parseInteger(cli.values.count, '--count', 1, 1000) ?? 100;
    const backend = await cli.backend();
    const filters: FacetFilterInput[] = cli.values.all
      ? []
      : [{ field: 'ownerUrn', values: [cli.values.owner ?? (await backend.actor())] }];
    const list = await backend.listTokens({ start, count, filters });
    if (cli.json) {
      cli.printJson(list);
      return;
    }
    for (const t of list.tokens) {
      const expires = t.expiresAt === null ? 'never expires' : `expires ${new Date(t.expiresAt).toISOString()}`;
      cli.print(`${t.id}  "${t.name}"  for ${t.actorUrn}  by ${t.ownerUrn}  ${expires}`);
    }
    cli.note(`${list.count} of ${list.total} token(s)${list.start ? ` from ${list.start}` : ''}`);
  },
});
