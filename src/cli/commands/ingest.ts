import { statSync } from 'node:fs';
import { CatalogError, isCatalogError } from '../../index';
import { defineCommand, EXIT } from '../define-command';
import { chunksOf, numberedLines, placeOfViolation, type IngestChunk } from '../ingest-lines';
import { CommandError, UsageError } from '../io';
import { ingestExport, isExportHeader, peekFirst, type ExportImportSummary } from '../ingest-export';
import type { CommandContext } from '../define-command';
import { CONNECTION_HELP, OUTPUT_HELP, parseInteger } from '../options';

const USAGE = `Usage: metacatalog ingest <file | -> [--chunk-size n] [--initial] [--db file | --server url] [--json]

Writes the JSON lines of a file (or of standard input, with -). Each line is either a whole entity,
  {"urn": "urn:li:dataset:(...)", "aspects": {"datasetProperties": {...}, "structuredProperties": {...}}}
or one change proposal as DataHub's clients send it,
  {"entityUrn": "...", "changeType": "UPSERT", "aspectName": "status", "aspect": {"value": "{\\"removed\\": false}", "contentType": "application/json"}}
(changeType UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE; "aspect": {"json": {...}} is taken too).

Lines are written in chunks (--chunk-size lines, default 1000, and at most about 512 KB): every line of
a chunk is checked before any is written, and a chunk of upserts is written atomically. A bad line
(invalid JSON, a wrong shape, a value the catalog refuses) is reported with its line number, nothing of
its chunk is written, the other chunks are, and the command exits with 1.

  --chunk-size <n>      lines per chunk (1 to 10000, default 1000)
  --initial             an initial load of an export into an empty catalog: stored rows first, search
                        structures built once at the end; all or nothing (a load cut short leaves the
                        catalog empty: run the command again). Refused when the catalog holds entities.

${CONNECTION_HELP}
${OUTPUT_HELP}

On a terminal (stdout and stderr both) a progress line is drawn on stderr. The summary at the end counts the entities, aspects,
chunks written, the lines refused and the time taken.

A failure that names no line (the storage unavailable: a full disk, a lost database connection; no
privilege) stops the command; its message names the lines of the chunk being written and what was
written before it.

A file written by \`metacatalog export\` (its first line is the export's header) is read back as it
was exported: values, versions and who-and-when stamps are kept, not re-stamped; importing the same
file twice leaves the catalog as after once; a file cut short (no end line) is reported (docs/deploy.md).

Exit codes: 0 every line written, 1 a line was refused or the catalog refused the work, 2 usage error,
75 the storage is unavailable (run the command again later: a line written twice ends the same).
`;

const MAX_CHUNK_BYTES = 512 * 1024;

interface Summary {
  entities: number;
  aspects: number;
  chunks: number;
  lines: number;
  badLines: number;
  seconds: number;
}

export const ingestCommand = defineCommand({
  name: 'ingest',
  summary: 'write entities and change proposals from a JSON lines file (- for stdin)',
  usage: USAGE,
  options: { 'chunk-size': { type: 'string' }, initial: { type: 'boolean' } },
  connects: true,
  positionals: true,
  async run(cli) {
    const [source, ...extra] = cli.positionals;
    if (source === undefined) throw new UsageError('a file to ingest is needed (- reads standard input)');
    if (extra.length) throw new UsageError(`one file at a time; also given: ${extra.join(' ')}`);
    const chunkSize = parseInteger(cli.values['chunk-size'], '--chunk-size', 1, 10_000) ?? 1000;
    const initial = cli.values.initial === true;
    let size: number | undefined;
    if (source !== '-') {
      try {
        size = statSync(source).size;
      } catch {
        throw new UsageError(`cannot read ${source}`);
      }
    }
    // Embedded mode may create the file: an ingest into a new database is a normal first step.
    const backend = await cli.backend({ create: true });
    const started = Date.now();
    // Drawn only for a person watching: both outputs on a terminal (a redirected summary means a script).
    const watched = !cli.json && cli.terminal.canDrawProgress && process.stdout.isTTY === true;
    const bar = watched ? cli.terminal.progress(source === '-' ? 'Ingesting lines' : 'Ingesting bytes') : undefined;
    const summary: Summary = { entities: 0, aspects: 0, chunks: 0, lines: 0, badLines: 0, seconds: 0 };
    const entities = new Set<string>();
    const refusals: Array<{ line: number; message: string }> = [];
    let bytesDone = 0;
    try {
      const { first, all } = await peekFirst(numberedLines(source));
      if (first !== undefined && isExportHeader(first.text)) {
        const imported = await ingestExport(backend, all, {
          chunkSize,
          initial,
          maxChunkBytes: MAX_CHUNK_BYTES,
          onChunk: (lines, bytes) => bar?.update(source === '-' ? lines : bytes, size),
          onRefused: (bad) => {
            refusals.push(...bad);
            if (cli.json) return;
            bar?.finish();
            for (const b of bad) cli.note(`line ${b.line}: ${b.message}`);
          },
        });
        bar?.finish();
        return reportExportImport(cli, imported, refusals, Date.now() - started);
      }
      if (initial) throw new UsageError('--initial loads a file written by metacatalog export (its first line is the export header)');
      for await (const chunk of chunksOf(all, chunkSize, MAX_CHUNK_BYTES)) {
        summary.lines += chunk.lines.length;
        bytesDone += chunk.bytes;
        let bad: Array<{ line: number; message: string }>;
        try {
          bad = await writeChunk(chunk, (proposals) => backend.ingestProposals(proposals));
        } catch (error) {
          bar?.finish();
          summary.entities = entities.size;
          summary.seconds = Math.round((Date.now() - started) / 10) / 100;
          const failed = { firstLine: chunk.lines[0]!.line, lastLine: chunk.lines.at(-1)!.line };
          if (cli.json) cli.printJson({ ...summary, refused: refusals, failedChunk: failed });
          throw chunkFailure(error, failed, summary);
        }
        if (bad.length) {
          refusals.push(...bad);
          summary.badLines += new Set(bad.map((b) => b.line)).size;
          if (!cli.json) {
            bar?.finish();
            for (const b of bad) cli.note(`line ${b.line}: ${b.message}`);
          }
        } else {
          summary.chunks++;
          summary.aspects += chunk.proposals.length;
          for (const line of chunk.lines) if ('urns' in line) for (const urn of line.urns) entities.add(urn);
        }
        bar?.update(source === '-' ? summary.lines : bytesDone, size);
      }
    } finally {
      bar?.finish();
    }
    summary.entities = entities.size;
    summary.seconds = Math.round((Date.now() - started) / 10) / 100;
    if (cli.json) cli.printJson({ ...summary, refused: refusals });
    else {
      const refused = summary.badLines
        ? `; ${summary.badLines} line${summary.badLines === 1 ? '' : 's'} refused, their chunks not written`
        : '';
      cli.print(
        `Ingested ${summary.entities} entities (${summary.aspects} aspects) in ${summary.chunks} chunk${summary.chunks === 1 ? '' : 's'} in ${summary.seconds.toFixed(2)} s${refused}`,
      );
    }
    return summary.badLines ? EXIT.failed : EXIT.ok;
  },
});

/**
 * The error that stopped the command at a chunk, with the chunk's lines and what was written before it
 * in its message; a CatalogError keeps its code (UNAVAILABLE: exit code 75, try again later).
 */
function chunkFailure(error: unknown, failed: { firstLine: number; lastLine: number }, summary: Summary): Error {
  const message = error instanceof Error ? error.message : String(error);
  const lines = failed.firstLine === failed.lastLine ? `line ${failed.firstLine}` : `lines ${failed.firstLine}-${failed.lastLine}`;
  const before =
    summary.chunks === 0
      ? 'nothing was written before it'
      : `written before it: ${summary.entities} entities (${summary.aspects} aspects) in ${summary.chunks} chunk${summary.chunks === 1 ? '' : 's'}`;
  const refused = summary.badLines ? `, ${summary.badLines} line${summary.badLines === 1 ? '' : 's'} refused` : '';
  const text = `${message} (writing the chunk of ${lines}; ${before}${refused})`;
  if (isCatalogError(error)) return new CatalogError(error.code, text, { details: error.details, cause: error, reason: error.reason });
  return new CommandError(text);
}

/**
 * Writes one chunk unless a line of it is bad; returns the bad lines (by number, with why). A refusal
 * that names no line (no privilege, the server unreachable) stops the command.
 */
async function writeChunk(
  chunk: IngestChunk,
  ingest: (proposals: readonly unknown[]) => Promise<void>,
): Promise<Array<{ line: number; message: string }>> {
  const unreadable = chunk.lines.flatMap((l) => ('problem' in l ? [{ line: l.line, message: l.problem }] : []));
  if (unreadable.length) return unreadable;
  try {
    await ingest(chunk.proposals);
    return [];
  } catch (error) {
    if (!isCatalogError(error) || error.code !== 'INVALID_INPUT' || error.details.length === 0) throw error;
    const placed = error.details.map((d) => ({ place: placeOfViolation(d.path, chunk), message: d.message }));
    if (placed.some((p) => p.place === undefined)) throw error;
    return placed.map((p) => ({ line: p.place!.line, message: p.place!.path ? `${p.place!.path}: ${p.message}` : p.message }));
  }
}

/** The summary of an import of an export file, and its exit code (1 when a line was refused or the file was cut short). */
function reportExportImport(
  cli: Pick<CommandContext<Record<string, unknown>>, 'json' | 'print' | 'printJson' | 'note'>,
  imported: ExportImportSummary,
  refusals: ReadonlyArray<{ line: number; message: string }>,
  millis: number,
): number {
  const seconds = Math.round(millis / 10) / 100;
  if (cli.json) cli.printJson({ ...imported, seconds, refused: refusals });
  else {
    const refused = imported.badLines
      ? `; ${imported.badLines} line${imported.badLines === 1 ? '' : 's'} refused, their chunks not written`
      : '';
    cli.print(
      `Imported ${imported.entities} entities (${imported.aspects} aspects), ${imported.timeseries} timeseries rows, ${imported.versions} versions, ${imported.changes} change events, ${imported.jobs} jobs in ${imported.chunks} chunk${imported.chunks === 1 ? '' : 's'} in ${seconds.toFixed(2)} s${refused}`,
    );
    if (!imported.complete) cli.note("the file ends before the export's end line: it was cut short, and what it lacks was not imported");
  }
  return imported.badLines || !imported.complete ? EXIT.failed : EXIT.ok;
}
