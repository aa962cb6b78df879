import { readFile } from 'node:fs/promises';
import { CatalogError, isCatalogError, parseYamlDefinitions, type Violation } from '../../index';
import { defineCommand } from '../define-command';
import { CommandError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const USAGE = `Usage: metacatalog properties upsert -f <file.yaml> [--db file | --server url] [--json]

Creates or updates the structured property definitions of a YAML file: a list of entries with the keys
id, urn, qualified_name, type, cardinality, version, display_name, entity_types, description,
allowed_values ([{ value, description }]), type_qualifier ({ allowed_types }), immutable.
Every entry is checked before anything is written; when one is bad, nothing is written and the error
names each bad entry and field. Prints "Created structured property <urn>", "Updated ..." or
"Unchanged ..." for each entry.

  -f, --file <file>    the YAML file ("-" reads stdin)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 written, 1 the file or an entry was refused (nothing written), 2 usage error.
`;

const VERBS = { created: 'Created', updated: 'Updated', unchanged: 'Unchanged' } as const;

async function readInput(file: string): Promise<string> {
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** `/1/allowed_values/0/value` → `entry 1 (io.acme.tier), field allowed_values[0].value`. */
function whereInFile(path: string, entries: readonly unknown[]): string {
  const match = /^\/(\d+)(?:\/(.*))?$/.exec(path);
  if (!match) return path === '/' || path === '' ? 'file' : path;
  const index = Number(match[1]);
  const entry = entries[index] as Record<string, unknown> | undefined;
  const name = [entry?.id, entry?.qualified_name, entry?.urn].find((v) => typeof v === 'string');
  const field = (match[2] ?? '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.');
  return `entry ${index}${name ? ` (${String(name)})` : ''}${field ? `, field ${field}` : ''}`;
}

/** The catalog's violations, with their JSON paths said as entries and fields of the file. */
function inFileTerms(error: CatalogError, entries: readonly unknown[], file: string): CatalogError {
  if (!error.details.length) return error;
  const summary = error.message.includes(':') ? error.message.slice(0, error.message.indexOf(':')) : error.message;
  const listed = error.details.map((v: Violation) => `${whereInFile(v.path, entries)}: ${v.message}`).join('; ');
  return new CatalogError(error.code, `${file}: ${summary}; nothing was written: ${listed}`, { details: error.details, cause: error });
}

export const propertiesUpsertCommand = defineCommand({
  name: 'properties upsert',
  summary: 'create or update structured property definitions from a YAML file',
  usage: USAGE,
  options: { file: { type: 'string', short: 'f' } },
  connects: true,
  async run(cli) {
    const file = required(cli.values.file, '-f <file.yaml>');
    const text = await readInput(file);
    let entries: unknown[];
    try {
      entries = parseYamlDefinitions(text);
    } catch (error) {
      if (isCatalogError(error)) throw new CatalogError(error.code, `${file}: ${error.message}`, { details: error.details, cause: error });
      throw error;
    }
    if (entries.length === 0) throw new CommandError(`${file} holds no definitions (expected a YAML list of entries)`);
    const backend = await cli.backend({ create: true });
    let outcomes;
    try {
      outcomes = await backend.upsertProperties(entries);
    } catch (error) {
      throw isCatalogError(error) && error.code !== 'FORBIDDEN' && error.code !== 'UNAUTHENTICATED'
        ? inFileTerms(error, entries, file)
        : error;
    }
    if (cli.json) cli.printJson(outcomes);
    else for (const { urn, outcome } of outcomes) cli.print(`${VERBS[outcome]} structured property ${urn}`);
  },
});
