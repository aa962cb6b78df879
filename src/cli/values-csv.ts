import { createRequire } from 'node:module';
import type * as CsvParse from 'csv-parse/sync';
import type * as CsvStringify from 'csv-stringify/sync';
import type { PropertyValue, PropertyValuesEdit, Violation } from '../index';
import type { PropertyRecord } from './backend';
import { decodeCell, encodeCell, typedValue } from './values-cell';

/**
 * The property values CSV (docs/structured-properties.md, "Edit values as CSV"): a `urn` column and one
 * column per property, named by its qualified name (or its URN on import). RFC 4180 quoting through
 * csv-parse and csv-stringify; the cells are read by values-cell.ts.
 */

const URN_COLUMN = 'urn';

/**
 * The CSV packages, loaded on the first use (about 40 ms and 17 modules together): every command and `serve`
 * share this module graph, and only the two values commands read or write CSV.
 */
let csvParse: typeof CsvParse | undefined;
let csvStringify: typeof CsvStringify | undefined;
const parse: typeof CsvParse.parse = (...args: Parameters<typeof CsvParse.parse>) =>
  (csvParse ??= createRequire(import.meta.url)('csv-parse/sync') as typeof CsvParse).parse(...args);
const stringify: typeof CsvStringify.stringify = (...args: Parameters<typeof CsvStringify.stringify>) =>
  (csvStringify ??= createRequire(import.meta.url)('csv-stringify/sync') as typeof CsvStringify).stringify(...args);

/** A column of the file: the property it stands for. */
export interface ValueColumn {
  /** As the header names it. */
  name: string;
  property: PropertyRecord;
}

/** Where a problem is in the file (`line 12, column "retention.days"`) and what it is. */
export interface FileProblem {
  where: string;
  message: string;
}

/** The edits of a file, with where each came from (to say violations in the file's terms). */
export interface DecodedFile {
  edits: PropertyValuesEdit[];
  /** Per edit: its line, and the column of each `set` and `remove` entry. */
  origins: Array<{ line: number; set: string[]; remove: string[] }>;
  problems: FileProblem[];
}

const numeric = (property: PropertyRecord): boolean => property.definition.valueType === 'urn:li:dataType:datahub.number';

/** The export's header: `urn`, then the properties' qualified names. */
export function headerLine(columns: readonly PropertyRecord[]): string {
  return stringify([[URN_COLUMN, ...columns.map((p) => p.definition.qualifiedName)]]);
}

/** Rows of the export: each entity's visible values, one cell per column (empty when it has none). */
export function rowLines(
  entities: ReadonlyArray<{ urn: string; properties: ReadonlyArray<{ propertyUrn: string; values: ReadonlyArray<string | number> }> }>,
  columns: readonly PropertyRecord[],
): string {
  if (entities.length === 0) return '';
  return stringify(
    entities.map((entity) => {
      const byUrn = new Map(entity.properties.map((p) => [p.propertyUrn, p.values] as const));
      return [entity.urn, ...columns.map((c) => encodeCell(byUrn.get(c.urn) ?? []))];
    }),
  );
}

/** Splits the file into records, each with the line it starts on. Malformed CSV throws csv-parse's error (it names the line). */
export function readRecords(text: string): Array<{ line: number; cells: string[] }> {
  // Without the byte-order mark, `info.bytes` counts from the first character of the header.
  const buffer = Buffer.from(text.replace(/^\ufeff/, ''), 'utf8');
  const parsed = parse(buffer, { info: true, skip_empty_lines: true, relax_column_count: false }) as unknown as Array<{
    record: string[];
    info: { bytes: number };
  }>;
  // csv-parse counts a CRLF inside a quoted cell as two lines: count the line breaks before each record instead.
  const records: Array<{ line: number; cells: string[] }> = [];
  let offset = 0;
  let line = 1;
  for (const { record, info } of parsed) {
    // Empty lines before the record (skipped by the parser).
    for (; offset < buffer.length && (buffer[offset] === 0x0a || buffer[offset] === 0x0d); offset++) if (buffer[offset] === 0x0a) line++;
    records.push({ line, cells: record });
    for (; offset < info.bytes; offset++) if (buffer[offset] === 0x0a) line++;
  }
  return records;
}

/**
 * The header's columns: `urn` once, then known structured properties (by qualified name or URN), each
 * once, none soft-deleted. Every problem is listed.
 */
export function readHeader(
  cells: readonly string[],
  properties: readonly PropertyRecord[],
): { urnIndex: number; columns: Array<ValueColumn | undefined>; problems: FileProblem[] } {
  const byName = new Map<string, PropertyRecord>();
  for (const p of properties) {
    byName.set(p.urn, p);
    byName.set(p.definition.qualifiedName, p);
  }
  const problems: FileProblem[] = [];
  const seen = new Map<string, string>();
  let urnIndex = -1;
  const columns = cells.map((cell, i): ValueColumn | undefined => {
    const name = cell.trim();
    const where = `line 1, column ${i + 1} ("${name}")`;
    if (name === URN_COLUMN) {
      if (urnIndex >= 0) problems.push({ where, message: 'the urn column appears twice' });
      urnIndex = i;
      return undefined;
    }
    const property = byName.get(name);
    if (!property) {
      problems.push({ where, message: `"${name}" is not a structured property (give its qualified name or URN)` });
      return undefined;
    }
    if (property.removed) {
      problems.push({
        where,
        message: `structured property ${property.urn} is soft-deleted: its values cannot be edited until it is restored`,
      });
      return undefined;
    }
    const earlier = seen.get(property.urn);
    if (earlier !== undefined) problems.push({ where, message: `${property.urn} has a column already ("${earlier}")` });
    seen.set(property.urn, name);
    return { name, property };
  });
  if (urnIndex < 0) problems.unshift({ where: 'line 1', message: 'the header has no urn column' });
  return { urnIndex, columns, problems };
}

/** The records after the header as per-entity edits; an empty cell edits nothing. */
export function decodeRows(
  records: ReadonlyArray<{ line: number; cells: string[] }>,
  urnIndex: number,
  columns: ReadonlyArray<ValueColumn | undefined>,
): DecodedFile {
  const decoded: DecodedFile = { edits: [], origins: [], problems: [] };
  const lineOf = new Map<string, number>();
  for (const { line, cells } of records) {
    const urn = cells[urnIndex]!.trim();
    if (urn === '') {
      decoded.problems.push({ where: `line ${line}, column "${URN_COLUMN}"`, message: 'the urn is empty' });
      continue;
    }
    const earlier = lineOf.get(urn);
    if (earlier !== undefined) {
      decoded.problems.push({ where: `line ${line}, column "${URN_COLUMN}"`, message: `${urn} is on line ${earlier} already` });
      continue;
    }
    lineOf.set(urn, line);
    const set: Array<{ propertyUrn: string; values: PropertyValue[] }> = [];
    const remove: string[] = [];
    const origin = { line, set: [] as string[], remove: [] as string[] };
    columns.forEach((column, i) => {
      if (!column) return;
      const cell = decodeCell(cells[i]!);
      if (cell.kind === 'error') decoded.problems.push({ where: `line ${line}, column "${column.name}"`, message: cell.message });
      else if (cell.kind === 'remove') {
        remove.push(column.property.urn);
        origin.remove.push(column.name);
      } else if (cell.kind === 'values') {
        const values = cell.values.map((v) => typedValue(v, numeric(column.property)));
        set.push({ propertyUrn: column.property.urn, values });
        origin.set.push(column.name);
      }
    });
    decoded.edits.push({ urn, ...(set.length ? { set } : {}), ...(remove.length ? { remove } : {}) });
    decoded.origins.push(origin);
  }
  return decoded;
}

/** A violation of the catalog (`/<edit>/set/<j>/values/<k>`, `/<edit>/remove/<j>`, `/<edit>/urn`) in the file's terms. */
export function inFileTerms(violation: Violation, file: Pick<DecodedFile, 'edits' | 'origins'>): FileProblem {
  const match = /^\/(\d+)(?:\/(set|remove|urn)(?:\/(\d+))?(?:\/values(?:\/(\d+))?)?)?/.exec(violation.path);
  const origin = match ? file.origins[Number(match[1])] : undefined;
  if (!match || !origin) return { where: violation.path || 'file', message: violation.message };
  const [, , part, j, k] = match;
  let column: string | undefined;
  if (part === 'urn') column = URN_COLUMN;
  else if (part === 'set' && j !== undefined) column = origin.set[Number(j)];
  else if (part === 'remove' && j !== undefined) column = origin.remove[Number(j)];
  const values = part === 'set' && j !== undefined ? file.edits[Number(match[1])]?.set?.[Number(j)]?.values.length : undefined;
  const which = k !== undefined && (values ?? 0) > 1 ? `, value ${Number(k) + 1}` : '';
  return { where: `line ${origin.line}${column !== undefined ? `, column "${column}"` : ''}${which}`, message: violation.message };
}
