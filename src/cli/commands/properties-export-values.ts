import { createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { EntityScope, PropertyRecord } from '../backend';
import { defineCommand } from '../define-command';
import { scopeOf, SCOPE_HELP, SCOPE_OPTIONS } from '../entity-scope';
import { CommandError, processIo, UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP } from '../options';
import { headerLine, rowLines } from '../values-csv';

const USAGE = `Usage: metacatalog properties export-values [--query Q] [--type T] [--filter F=V ...] [--property QN ...] [-o FILE.csv] [--force] [--db file | --server url]

Writes the structured property values of the matching entities as CSV (RFC 4180): a urn column, then
one column per property named by its qualified name, columns sorted by qualified name. Several values
of one property share a cell, joined by |; inside a value, | is written \\|, a backslash \\\\, a < that
starts a value \\<, and the empty text <empty>. Numbers are written as JavaScript writes them (1.5),
dates as stored (YYYY-MM-DD). Edit the file and read it back with properties import-values.

${SCOPE_HELP}
  --property <name>    export this property (qualified name or URN); repeatable. Default: every
                       property that has values among the matching entities (soft-deleted ones never)
  -o, --output <file>  write to this file (made as FILE.partial, renamed when complete); default stdout
  --force              replace an existing output file

Without --query and --filter, the entities are those that hold a value of at least one exported
property. Pages of ${'1000'} entities are read and written in turn: the catalog is never held in memory.

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 written, 1 refused or failed, 2 usage error.
`;

/** Entities per page read (GraphQL's cost limit bounds a remote page: each entity's values are asked with it). */
const PAGE = { embedded: 1000, remote: 200 };

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** The columns: the properties asked for, or those with values among the matches; by qualified name. */
function columnsOf(
  properties: readonly PropertyRecord[],
  asked: readonly string[] | undefined,
  withValues: readonly string[],
): PropertyRecord[] {
  const byName = new Map<string, PropertyRecord>();
  for (const p of properties) {
    byName.set(p.urn, p);
    byName.set(p.definition.qualifiedName, p);
  }
  let chosen: PropertyRecord[];
  if (asked?.length) {
    chosen = asked.map((name) => {
      const property = byName.get(name);
      if (!property) throw new CommandError(`--property ${name}: no structured property has this qualified name or URN`);
      if (property.removed) throw new CommandError(`--property ${name}: ${property.urn} is soft-deleted (restore it to export its values)`);
      return property;
    });
  } else chosen = withValues.flatMap((name) => byName.get(name) ?? []).filter((p) => !p.removed);
  const unique = [...new Map(chosen.map((p) => [p.urn, p])).values()];
  return unique.sort((a, b) =>
    a.definition.qualifiedName < b.definition.qualifiedName ? -1 : a.definition.qualifiedName > b.definition.qualifiedName ? 1 : 0,
  );
}

export const propertiesExportValuesCommand = defineCommand({
  name: 'properties export-values',
  summary: 'write the structured property values of matching entities as CSV',
  usage: USAGE,
  options: {
    ...SCOPE_OPTIONS,
    property: { type: 'string', multiple: true },
    output: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
  },
  connects: true,
  async run(cli) {
    const { scope: asked, chosen } = scopeOf(cli.values);
    const file = cli.values.output;
    if (file === '') throw new UsageError('--output needs a file name');
    if (file !== undefined && existsSync(file) && cli.values.force !== true)
      throw new UsageError(`${file} exists; pass --force to replace it`);
    const backend = await cli.backend();
    const properties = await backend.listProperties();
    // Without a query or filter: the entities that carry any property at all (the columns are found among them).
    const everything: EntityScope = { query: '*', ...(asked.types ? { types: asked.types } : {}) };
    const withValues = cli.values.property?.length ? [] : await backend.propertiesWithValues(chosen ? asked : everything);
    const columns = columnsOf(properties, cli.values.property, withValues);
    const scope: EntityScope | undefined = chosen
      ? asked
      : columns.length
        ? {
            ...everything,
            orFilters: columns.map((c) => ({
              and: [{ field: `structuredProperties.${c.definition.qualifiedName}`, condition: 'EXISTS' as const }],
            })),
          }
        : undefined;

    const partial = file === undefined ? undefined : `${file}.partial`;
    const out: Writable | undefined = partial === undefined ? undefined : createWriteStream(partial, { mode: 0o600 });
    const emit = async (text: string): Promise<void> => {
      if (out) return write(out, text);
      cli.io.stdout(text);
      if (cli.io === processIo && process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
    };
    const bar = !cli.json && cli.terminal.canDrawProgress && partial !== undefined ? cli.terminal.progress('Exporting values') : undefined;
    const count = backend.where.startsWith('http') ? PAGE.remote : PAGE.embedded;
    let rows = 0;
    try {
      await emit(headerLine(columns));
      let scrollId: string | undefined;
      while (scope) {
        const page = await backend.scrollValues(scope, { count, ...(scrollId ? { scrollId } : {}) });
        await emit(rowLines(page.entities, columns));
        rows += page.entities.length;
        bar?.update(rows, page.total);
        if (!page.nextScrollId) break;
        scrollId = page.nextScrollId;
      }
      if (out && partial && file) {
        out.end();
        await once(out, 'finish');
        renameSync(partial, file);
      }
    } catch (error) {
      if (out && partial) {
        out.destroy();
        rmSync(partial, { force: true });
      }
      throw error;
    } finally {
      bar?.finish();
    }
    const summary = { rows, columns: columns.map((c) => c.definition.qualifiedName), ...(file ? { file } : {}) };
    if (cli.json && file) cli.printJson(summary);
    else if (file) cli.print(`Wrote ${rows} entities and ${columns.length} property columns to ${file}`);
    else cli.note(`Wrote ${rows} entities and ${columns.length} property columns`);
  },
});
