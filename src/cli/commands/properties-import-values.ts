import { CatalogError, isCatalogError, type EditValuesSummary } from '../../index';
import { defineCommand } from '../define-command';
import { CommandError, readInput, UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';
import { decodeRows, inFileTerms, readHeader, readRecords, type FileProblem } from '../values-csv';

const USAGE = `Usage: metacatalog properties import-values <file.csv | -> [--dry-run] [--db file | --server url] [--json]

Sets and removes structured property values from a CSV file as properties export-values writes it: a
urn column and one column per property (its qualified name or URN). In each cell:

  (empty)      leaves the property as it is
  <remove>     removes the property from the entity
  a|b          sets the values (replacing those the entity has); inside a value \\| is a |, \\\\ a
               backslash, \\< a < (so \\<remove> is the text "<remove>"), and <empty> the empty text

Every cell is checked first (the entity exists; the property allows its entity type; value type,
allowed values, cardinality; an immutable value already held stays): when one is wrong, nothing is
written and each problem is listed with its line and column. Then the file is written in atomic chunks
of 500 entities, with a progress bar on a terminal.

  --dry-run            check everything and count what would change; write nothing

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 written (or checked, with --dry-run), 1 a problem in the file (nothing written) or a
refusal, 2 usage error.
`;

/** Problems listed on stderr; the rest are counted (--json lists every one). */
const LISTED_PROBLEMS = 100;

function describe(summary: EditValuesSummary, rows: number): string {
  const verb = summary.dryRun ? 'would change' : 'changed';
  return (
    `${rows} rows: ${summary.changed} entities ${verb} (${summary.set} properties set, ${summary.removed} removed), ` +
    `${summary.unchanged} unchanged`
  );
}

export const propertiesImportValuesCommand = defineCommand({
  name: 'properties import-values',
  summary: 'set and remove structured property values from a CSV file',
  usage: USAGE,
  options: { 'dry-run': { type: 'boolean' } },
  positionals: true,
  connects: true,
  async run(cli) {
    if (cli.positionals.length !== 1) throw new UsageError('give one CSV file (or - for standard input)');
    const file = cli.positionals[0]!;
    const dryRun = cli.values['dry-run'] === true;
    let records;
    try {
      records = readRecords(await readInput(file));
    } catch (error) {
      if (error instanceof CommandError) throw error;
      throw new CommandError(`${file} is not a readable CSV file: ${(error as Error).message}`);
    }
    if (records.length === 0) throw new CommandError(`${file} is empty (expected a header: urn and property columns)`);
    const backend = await cli.backend();
    const header = readHeader(records[0]!.cells, await backend.listProperties());
    const refuse = (problems: readonly FileProblem[]): never => {
      const shown = problems.slice(0, LISTED_PROBLEMS);
      if (!cli.json) for (const p of shown) cli.note(`${file}: ${p.where}: ${p.message}`);
      const more = problems.length - shown.length;
      const summary = `${file}: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}${more > 0 ? ` (${more} not listed)` : ''}; nothing was written`;
      throw new CatalogError('INVALID_INPUT', cli.json ? summary : `${summary} (listed above)`, {
        details: problems.map((p) => ({ path: p.where, message: p.message })),
      });
    };
    if (header.problems.length) refuse(header.problems);
    const decoded = decodeRows(records.slice(1), header.urnIndex, header.columns);
    if (decoded.problems.length) refuse(decoded.problems);

    const bar = !dryRun && !cli.json && cli.terminal.canDrawProgress ? cli.terminal.progress('Writing values') : undefined;
    let summary: EditValuesSummary;
    try {
      summary = await backend.editValues(decoded.edits, { dryRun, ...(bar ? { onChunk: (done, total) => bar.update(done, total) } : {}) });
    } catch (error) {
      if (isCatalogError(error) && error.code === 'INVALID_INPUT' && error.details.length) {
        const problems = error.details.map((v) => inFileTerms(v, decoded));
        refuse(problems);
      }
      throw error;
    } finally {
      bar?.finish();
    }
    if (cli.json) cli.printJson({ file, rows: decoded.edits.length, ...summary });
    else {
      cli.print(`${file}: ${describe(summary, decoded.edits.length)}`);
      if (dryRun) cli.print('This was a dry run: nothing was written. Run it again without --dry-run to write.');
    }
  },
});
