import { isUrn } from '../../index';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';
import { propertyUrnOf } from '../property-urn';

const USAGE = `Usage: metacatalog restore --urn <urn or property name> [--db file | --server url] [--json]

Brings a soft-deleted entity back (its status aspect: removed false). A structured property comes back
with every value it had on entities. A name that is not a URN names a structured property, as in
properties get. Needs what writing the entity needs (MANAGE_STRUCTURED_PROPERTIES for a property,
EDIT_ENTITY otherwise).

  --urn <urn>          the entity to restore

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 restored (or was not deleted), 1 refused or not found, 2 usage error.
`;

export const restoreCommand = defineCommand({
  name: 'restore',
  summary: 'bring a soft-deleted entity or structured property back',
  usage: USAGE,
  options: { urn: { type: 'string' } },
  connects: true,
  async run(cli) {
    const given = required(cli.values.urn, '--urn');
    const urn = given.startsWith('urn:') ? given : propertyUrnOf(given);
    if (!isUrn(urn)) throw new UsageError(`--urn must be a URN (urn:li:<type>:<key>) or a structured property name, got "${given}"`);
    const backend = await cli.backend();
    await backend.restoreEntity(urn);
    if (cli.json) cli.printJson({ urn, restored: true });
    else cli.print(`Restored ${urn}`);
  },
});
