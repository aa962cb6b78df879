import {
  CatalogError,
  isCatalogError,
  parseYamlDefinitions,
  type DefinitionChangePreview,
  type PropertyValue,
  type Violation,
} from '../../index';
import { defineCommand } from '../define-command';
import { CommandError, readInput } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const USAGE = `Usage: metacatalog properties upsert -f <file.yaml> [--dry-run] [--db file | --server url] [--json]

Creates or updates the structured property definitions of a YAML file: a list of entries with the keys
id, urn, qualified_name, type, cardinality, version, display_name, entity_types, description,
allowed_values ([{ value, description }]), type_qualifier ({ allowed_types }), immutable.
Every entry is checked before anything is written; when one is bad, nothing is written and the error
names each bad entry and field. Prints "Created structured property <urn>", "Updated ..." or
"Unchanged ..." for each entry.

  -f, --file <file>    the YAML file ("-" reads stdin)
  --dry-run            write nothing; print each entry's impact: what the upsert would do (create,
                       update, leave unchanged, refuse), whether the change is breaking and why, how many
                       entities hold values it would invalidate or hide, and a few of them with their values

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 written (or previewed, even when the preview says an entry would be refused), 1 the
file or an entry was refused (nothing written), 2 usage error.
`;

const VERBS = { created: 'Created', updated: 'Updated', unchanged: 'Unchanged' } as const;
const DRY_VERBS = {
  created: 'would create',
  updated: 'would update',
  unchanged: 'would leave unchanged',
  refused: 'would refuse the change to',
} as const;

const entities = (n: number) => `${n} ${n === 1 ? 'entity holds' : 'entities hold'}`;
const shown = (v: PropertyValue) => ('string' in v ? JSON.stringify(v.string) : String(v.double));

/** The lines `--dry-run` prints for one entry. */
function impactLines(p: DefinitionChangePreview): string[] {
  const lines = [`Dry run: ${DRY_VERBS[p.outcome]} structured property ${p.urn}${p.breaking ? ' (breaking)' : ''}`];
  for (const reason of p.reasons) lines.push(`  - ${reason}`);
  if (p.breaking || p.affected > 0) {
    const effect = p.outcome === 'refused' ? 'the new definition refuses' : 'the new version would hide';
    lines.push(`  ${entities(p.affected)} values ${effect}${p.sample.length ? ', for example:' : ''}`);
    for (const s of p.sample) lines.push(`    ${s.urn}: ${s.values.map(shown).join(', ')}`);
  }
  return lines;
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
  options: { file: { type: 'string', short: 'f' }, 'dry-run': { type: 'boolean' } },
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
    const dryRun = cli.values['dry-run'] === true;
    // A dry run makes no database either.
    const backend = await cli.backend({ create: !dryRun });
    let outcomes;
    try {
      if (dryRun) {
        const previews = await backend.previewProperties(entries);
        if (cli.json) cli.printJson(previews);
        else for (const line of previews.flatMap(impactLines)) cli.print(line);
        return;
      }
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
