import { writeFile } from 'node:fs/promises';
import { CatalogError, toReadBack, toYamlEntry } from '../../index';
import { defineCommand } from '../define-command';
import { CommandError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';
import { propertyUrnOf } from '../property-urn';
import { stringifyYaml } from '../yaml';

const USAGE = `Usage: metacatalog properties get --urn <urn or id> [--to-file <file.yaml>] [--db file | --server url] [--json]

Prints the read-back form of a structured property definition as JSON: urn, qualified_name, type,
description, display_name, entity_types, cardinality, allowed_values (values as strings), and version,
immutable and type_qualifier when set. With --to-file, writes the definition as a YAML file that
properties upsert accepts again instead.

  --urn <urn or id>    urn:li:structuredProperty:<name>, or just <name>
  --to-file <file>     write YAML for properties upsert (the file is replaced)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 found, 1 no such property (or the read failed), 2 usage error.
`;

export const propertiesGetCommand = defineCommand({
  name: 'properties get',
  summary: 'print a structured property definition, or write it as YAML',
  usage: USAGE,
  options: { urn: { type: 'string' }, 'to-file': { type: 'string' } },
  connects: true,
  async run(cli) {
    const urn = propertyUrnOf(required(cli.values.urn, '--urn'));
    const toFile = cli.values['to-file'];
    if (toFile === '') throw new CommandError('--to-file needs a file name');
    const backend = await cli.backend();
    const record = await backend.getProperty(urn);
    if (!record) throw new CatalogError('NOT_FOUND', `structured property ${urn} does not exist`);
    if (record.removed) cli.note(`note: ${urn} is soft-deleted (its values are hidden until it is restored)`);
    if (toFile !== undefined) {
      const yaml = stringifyYaml([toYamlEntry(record.definition)], { lineWidth: 0 });
      try {
        await writeFile(toFile, yaml);
      } catch (error) {
        throw new CommandError(`cannot write ${toFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      if (cli.json) cli.printJson({ urn, file: toFile });
      else cli.print(`Wrote ${urn} to ${toFile}`);
      return;
    }
    cli.printJson(toReadBack(record.urn, record.definition));
  },
});
