import { toReadBack } from '../../index';
import { defineCommand } from '../define-command';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog properties list [--details] [--db file | --server url] [--json]

Lists the structured property definitions in URN order, soft-deleted ones marked. Prints one URN a
line; with --details, the read-back form of each (as properties get prints it) as a JSON list.
With --json: [{ urn, removed }], or with --details [{ ...read-back, removed }].

  --details            the whole definitions

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 listed, 1 the listing failed, 2 usage error.
`;

export const propertiesListCommand = defineCommand({
  name: 'properties list',
  summary: 'list the structured property definitions',
  usage: USAGE,
  options: { details: { type: 'boolean' } },
  connects: true,
  async run(cli) {
    const records = await (await cli.backend()).listProperties();
    if (cli.values.details) {
      cli.printJson(records.map((r) => ({ ...toReadBack(r.urn, r.definition), removed: r.removed })));
    } else if (cli.json) {
      cli.printJson(records.map((r) => ({ urn: r.urn, removed: r.removed })));
    } else {
      for (const r of records) cli.print(r.removed ? `${r.urn} (soft-deleted)` : r.urn);
    }
  },
});
