import { isCatalogError } from '../index';
import { isExportRecordLike, type ExportCounts } from '../core/transfer';
import type { CliBackend } from './backend';

/**
 * `metacatalog ingest` of a file that `metacatalog export` wrote: its first line is the export's header.
 * Lines go back in chunks (one atomic import each, see catalog.importRecords); a bad or unreadable line
 * refuses its chunk, named by line number; a file without its end line was cut short, and says so.
 */

export interface ExportImportSummary extends ExportCounts {
  chunks: number;
  lines: number;
  badLines: number;
  /** False when the file ended before the export's end line (a truncated copy). */
  complete: boolean;
}

type NumberedLine = { line: number; text: string; bytes: number };

/** Whether a line is the header an export starts with. */
export function isExportHeader(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return isExportRecordLike(value) && (value as { kind: string }).kind === 'header';
  } catch {
    return false;
  }
}

export async function ingestExport(
  backend: CliBackend,
  lines: AsyncIterable<NumberedLine>,
  options: {
    chunkSize: number;
    maxChunkBytes: number;
    /** An initial load (catalog.importRecords with `initial`): into an empty catalog, search built at the end. */
    initial?: boolean;
    onChunk: (linesRead: number, bytesRead: number) => void;
    onRefused: (refusals: ReadonlyArray<{ line: number; message: string }>) => void;
  },
): Promise<ExportImportSummary> {
  const summary: ExportImportSummary = {
    entities: 0,
    aspects: 0,
    timeseries: 0,
    versions: 0,
    changes: 0,
    jobs: 0,
    chunks: 0,
    lines: 0,
    badLines: 0,
    complete: false,
  };
  let chunk: Array<{ line: number; record: unknown } | { line: number; problem: string }> = [];
  let bytes = 0;
  let bytesRead = 0;

  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    const lines = chunk;
    chunk = [];
    bytes = 0;
    const unreadable = lines.flatMap((l) => ('problem' in l ? [{ line: l.line, message: l.problem }] : []));
    const refusals = unreadable.length
      ? unreadable
      : await importChunk(backend, lines as Array<{ line: number; record: unknown }>, summary, options.initial === true);
    if (refusals.length) {
      summary.badLines += new Set(refusals.map((r) => r.line)).size;
      options.onRefused(refusals);
    } else summary.chunks++;
    options.onChunk(summary.lines, bytesRead);
  };

  for await (const { line, text, bytes: size } of lines) {
    summary.lines++;
    bytesRead += size;
    if (summary.complete) {
      chunk.push({ line, problem: 'comes after the end line of the export' });
      continue;
    }
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch (error) {
      chunk.push({ line, problem: `invalid JSON: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    }
    if (isExportRecordLike(record) && (record as { kind: string }).kind === 'end') summary.complete = true;
    if (chunk.length > 0 && (chunk.length >= options.chunkSize || bytes + size > options.maxChunkBytes)) await flush();
    chunk.push({ line, record });
    bytes += size;
  }
  await flush();
  return summary;
}

/** Imports one chunk; the refused lines (by number, with why), none when it was written. */
async function importChunk(
  backend: CliBackend,
  lines: ReadonlyArray<{ line: number; record: unknown }>,
  summary: ExportImportSummary,
  initial: boolean,
): Promise<Array<{ line: number; message: string }>> {
  // The header and end lines carry no data; they are checked with the rest.
  try {
    const records = lines.map((l) => l.record);
    const counts = await (initial ? backend.importRecords(records, { initial: true }) : backend.importRecords(records));
    summary.entities += counts.entities;
    summary.aspects += counts.aspects;
    summary.timeseries += counts.timeseries;
    summary.versions += counts.versions;
    summary.changes += counts.changes;
    summary.jobs += counts.jobs;
    return [];
  } catch (error) {
    if (!isCatalogError(error) || error.code !== 'INVALID_INPUT' || error.details.length === 0) throw error;
    const placed = error.details.map((d) => {
      const match = /^\/(\d+)(\/.*)?$/.exec(d.path);
      const line = match ? lines[Number(match[1])]?.line : undefined;
      return line === undefined ? undefined : { line, message: match![2] ? `${match![2]}: ${d.message}` : d.message };
    });
    if (placed.some((p) => p === undefined)) throw error;
    return placed as Array<{ line: number; message: string }>;
  }
}

/** The first item of a stream, and the whole stream again (the first item included) to read on. */
export async function peekFirst<T>(items: AsyncIterable<T>): Promise<{ first: T | undefined; all: AsyncIterable<T> }> {
  const iterator = items[Symbol.asyncIterator]();
  const head = await iterator.next();
  async function* all(): AsyncGenerator<T> {
    if (head.done) return;
    yield head.value;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { first: head.done ? undefined : head.value, all: all() };
}
