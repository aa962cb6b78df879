import { DRY_RUN_ENDING } from '../../core/timeseries';
import { defineCommand, EXIT } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, parseDuration, parseInteger, required } from '../options';

const USAGE = `Usage: metacatalog truncate-timeseries --entity-type <type> --aspect <aspect> --older-than <age> [--dry-run] [--force] [--db file | --server url] [--json]

Removes the rows of one timeseries index that are older than the given age, and prints the catalog's
answer ("Delete N out of M rows (P%). ..."). With --dry-run it only counts. Without --dry-run it
deletes: on a terminal it first shows the count and asks; off a terminal it needs --force.
Needs TRUNCATE_TIMESERIES_INDEX (dry runs too).

  --entity-type <type>     e.g. dataset
  --aspect <aspect>        e.g. datasetUsageStatistics
  --older-than <age>       a number and a unit: s, m, h, d or w (e.g. 30d): rows at or before now minus this go
  --dry-run                count only
  --force                  do not ask
  --batch-size <n>         rows per delete batch (1 to 1000000, default 10000)
  --timeout-seconds <n>    stop after the batch in progress once this many seconds have passed

${CONNECTION_HELP}
${OUTPUT_HELP}

A real run is background work of the catalog: against a server the answer carries its task id and
the command returns at once; in embedded mode it runs to the end before the command exits.

Exit codes: 0 counted or done, 1 refused or not confirmed, 2 usage error (also a real run off a
terminal without --force).
`;

/** The catalog's answer in this command's words: its dry-run sentence names the HTTP body's flag, not ours. */
function inCommandTerms(message: string, ending: string): string {
  return message.endsWith(DRY_RUN_ENDING) ? `${message.slice(0, -DRY_RUN_ENDING.length)}${ending}`.trimEnd() : message;
}

export const truncateTimeseriesCommand = defineCommand({
  name: 'truncate-timeseries',
  summary: 'remove old rows of a timeseries index (--dry-run to count)',
  usage: USAGE,
  options: {
    'entity-type': { type: 'string' },
    aspect: { type: 'string' },
    'older-than': { type: 'string' },
    'dry-run': { type: 'boolean' },
    force: { type: 'boolean' },
    'batch-size': { type: 'string' },
    'timeout-seconds': { type: 'string' },
  },
  connects: true,
  async run(cli) {
    const entityType = required(cli.values['entity-type'], '--entity-type');
    const aspect = required(cli.values.aspect, '--aspect');
    const age = parseDuration(required(cli.values['older-than'], '--older-than'), '--older-than');
    const batchSize = parseInteger(cli.values['batch-size'], '--batch-size', 1, 1_000_000);
    const timeoutSeconds = parseInteger(cli.values['timeout-seconds'], '--timeout-seconds', 1, 1_000_000_000);
    const dryRun = cli.values['dry-run'] === true;
    const mustConfirm = !dryRun && cli.values.force !== true;
    if (mustConfirm && !cli.terminal.interactive) {
      throw new UsageError('a truncation deletes rows for good: run it on a terminal to confirm, pass --force, or count with --dry-run');
    }
    const input = {
      entityType,
      aspect,
      // The catalog counts the age back from its own clock, wherever it runs.
      olderThanMillis: age,
      ...(batchSize !== undefined ? { batchSize } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    };
    const backend = await cli.backend();
    if (mustConfirm) {
      const preview = await backend.truncateTimeseries({ ...input, dryRun: true });
      cli.note(inCommandTerms(preview.message, ''));
      if (!(await cli.terminal.confirm('Delete these rows? This cannot be undone.'))) {
        cli.note('Not confirmed; nothing was deleted');
        return EXIT.failed;
      }
    }
    // A real run in this process (embedded) draws its progress on a terminal; a server's runs in the background.
    const bar =
      !dryRun && !cli.json && cli.terminal.canDrawProgress && !backend.where.startsWith('http')
        ? cli.terminal.progress('Deleting rows')
        : undefined;
    let answer;
    try {
      answer = await backend.truncateTimeseries({ ...input, dryRun }, bar ? (deleted, total) => bar.update(deleted, total) : undefined);
    } finally {
      bar?.finish();
    }
    if (cli.json) cli.printJson(answer);
    else cli.print(inCommandTerms(answer.message, 'This was a dry run: run it again without --dry-run to delete them.'));
  },
});
