import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { EXPORT_EXTRAS, type ExportEndRecord, type ExportExtra } from '../../core/transfer';
import { defineCommand } from '../define-command';
import { processIo, UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog export [-o FILE] [--with history,changes] [--force] [--db file | --postgres url | --server url] [--json]

Writes the whole catalog as JSON lines: a header, every entity with every aspect as stored (values,
versions, who and when, the writer's system metadata: property definitions, soft-deleted ones included,
access tokens and policies are entities too), the timeseries rows, the pending background jobs, and an
end line that counts them. A token's secret is never stored, so it is never written: tokens keep
verifying after an import under the same signing key. \`metacatalog ingest FILE\` reads the file back
into any catalog (docs/deploy.md).

  -o, --output <file>  write to this file (default: standard output); made under FILE.partial and
                       renamed when complete, so a file of that name is always a whole export
  --with <list>        also export history (kept earlier aspect versions) and/or changes (the change
                       feed's kept events), comma-separated
  --force              replace an existing output file

${CONNECTION_HELP}
${OUTPUT_HELP}

Against a server the token needs MANAGE_SYSTEM_OPERATIONS. On a terminal a progress line is drawn on
stderr; the summary at the end (on stderr when the export goes to standard output) counts what was written.

Exit codes: 0 written, 1 refused or failed, 2 usage error.
`;

function parseExtras(text: string | undefined): ExportExtra[] {
  if (text === undefined) return [];
  const extras = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const unknown = extras.filter((e) => !EXPORT_EXTRAS.includes(e as ExportExtra));
  if (unknown.length) throw new UsageError(`--with takes ${EXPORT_EXTRAS.join(', ')}; not ${unknown.join(', ')}`);
  return extras as ExportExtra[];
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

export const exportCommand = defineCommand({
  name: 'export',
  summary: 'write the whole catalog as JSON lines (read back with ingest)',
  usage: USAGE,
  options: { output: { type: 'string', short: 'o' }, with: { type: 'string' }, force: { type: 'boolean' } },
  connects: true,
  async run(cli) {
    const extras = parseExtras(cli.values.with);
    const file = cli.values.output;
    if (file === '') throw new UsageError('--output needs a file name');
    if (file !== undefined && existsSync(file) && cli.values.force !== true)
      throw new UsageError(`${file} exists; pass --force to replace it`);
    const backend = await cli.backend();
    const started = Date.now();
    const partial = file === undefined ? undefined : `${file}.partial`;
    const out: Writable | undefined = partial === undefined ? undefined : createWriteStream(partial, { mode: 0o600 });
    const emit = async (text: string): Promise<void> => {
      if (out) return write(out, text);
      cli.io.stdout(text);
      // Standard output to a slow reader: wait rather than hold the whole catalog in its buffer.
      if (cli.io === processIo && process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
    };
    const bar =
      cli.terminal.canDrawProgress && (partial !== undefined || !process.stdout.isTTY)
        ? cli.terminal.progress('Exporting records')
        : undefined;
    let records = 0;
    let end: ExportEndRecord | undefined;
    try {
      for await (const record of backend.exportAll({ with: extras })) {
        await emit(`${JSON.stringify(record)}\n`);
        records++;
        if (record.kind === 'end') end = record;
        if (records % 500 === 0) bar?.update(records, undefined);
      }
      if (!end) throw new Error('the export ended before its end record (the connection was cut?)');
      if (out) {
        out.end();
        await once(out, 'finish');
        renameSync(partial!, file!);
      }
    } catch (error) {
      if (out) {
        out.destroy();
        rmSync(partial!, { force: true });
      }
      throw error;
    } finally {
      bar?.finish();
    }
    const seconds = (Date.now() - started) / 1000;
    const summary = { ...end.counts, seconds: Math.round(seconds * 100) / 100, ...(file !== undefined ? { file } : {}) };
    const c = end.counts;
    const text = `Exported ${c.entities} entities (${c.aspects} aspects), ${c.timeseries} timeseries rows, ${c.versions} versions, ${c.changes} change events, ${c.jobs} pending jobs in ${seconds.toFixed(2)} s${file !== undefined ? ` to ${file}` : ''}`;
    if (file === undefined) {
      // Standard output carries the records: the summary goes to stderr.
      cli.note(cli.json ? JSON.stringify(summary) : text);
    } else if (cli.json) cli.printJson(summary);
    else cli.print(text);
  },
});
