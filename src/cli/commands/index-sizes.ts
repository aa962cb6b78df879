import { defineCommand } from '../define-command';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog index-sizes [--db file | --server url] [--json]

Prints the size of every timeseries index (one line each: index, entity type, aspect, size in MB),
to decide what truncate-timeseries should remove. Needs GET_TIMESERIES_INDEX_SIZES.
With --json: [{ aspectName, sizeMb, indexName, entityName }].

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 printed, 1 refused, 2 usage error.
`;

export const indexSizesCommand = defineCommand({
  name: 'index-sizes',
  summary: 'print the sizes of the timeseries indices',
  usage: USAGE,
  options: {},
  connects: true,
  async run(cli) {
    const sizes = await (await cli.backend()).indexSizes();
    if (cli.json) {
      cli.printJson(sizes);
      return;
    }
    const width = Math.max(10, ...sizes.map((s) => s.indexName.length));
    cli.print(`${'index'.padEnd(width)}  ${'entity'.padEnd(12)}  ${'aspect'.padEnd(26)}  size (MB)`);
    for (const s of sizes)
      cli.print(`${s.indexName.padEnd(width)}  ${s.entityName.padEnd(12)}  ${s.aspectName.padEnd(26)}  ${s.sizeMb.toFixed(6)}`);
  },
});
