import { isUrn, type EntityDeletion } from '../../index';
import { propertyUrnOf } from '../property-urn';
import { defineCommand, EXIT } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const USAGE = `Usage: metacatalog delete --urn <urn> [--hard] [--force] [--dry-run] [--db file | --server url] [--json]

Deletes an entity. Soft by default: the entity gets status { removed: true } and nothing is lost (for a
structured property, its values are hidden until it is restored). With --hard the entity is removed
for good; for a structured property, its values are removed from every entity by background work
(in embedded mode, before the command exits). Prints what was done and, for a structured property,
how many entities carry its values.

  --urn <urn>          the entity to delete
  --hard               remove it for good (asks for confirmation on a terminal)
  --force              do not ask (needed for --hard when not on a terminal)
  --dry-run            say what would be done, change nothing

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 done (or dry run), 1 refused, not found or not confirmed, 2 usage error (also --hard
off a terminal without --force).
`;

const entities = (n: number) => `${n} ${n === 1 ? 'entity' : 'entities'}`;

function describe(d: EntityDeletion): string {
  const what = d.entityType === 'structuredProperty' ? `structured property ${d.urn}` : d.urn;
  const values = d.entitiesWithValues;
  if (d.mode === 'soft') {
    if (!d.changed) return `${what} is soft-deleted already; nothing changed`;
    const verb = d.dryRun ? 'Dry run: would soft-delete' : 'Soft-deleted';
    const kept =
      values === undefined
        ? ''
        : `; its values on ${entities(values)} ${d.dryRun ? 'would be' : 'are'} hidden, not removed (they come back when it is restored)`;
    return `${verb} ${what}${kept}`;
  }
  const verb = d.dryRun ? 'Dry run: would hard-delete' : 'Hard-deleted';
  const cleanup =
    values === undefined
      ? ''
      : `; the background clean-up ${d.dryRun ? 'would remove' : 'will remove'} its values from ${entities(values)}`;
  return `${verb} ${what}${cleanup}`;
}

export const deleteCommand = defineCommand({
  name: 'delete',
  summary: 'soft-delete (default) or hard-delete an entity, e.g. a structured property',
  usage: USAGE,
  options: { urn: { type: 'string' }, hard: { type: 'boolean' }, force: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
  connects: true,
  async run(cli) {
    const given = required(cli.values.urn, '--urn');
    // As in properties get: a name that is not a URN names a structured property.
    const urn = given.startsWith('urn:') ? given : propertyUrnOf(given);
    if (!isUrn(urn)) throw new UsageError(`--urn must be a URN (urn:li:<type>:<key>) or a structured property name, got "${given}"`);
    const hard = cli.values.hard === true;
    const dryRun = cli.values['dry-run'] === true;
    const mustConfirm = hard && !dryRun && cli.values.force !== true;
    if (mustConfirm && !cli.terminal.interactive) {
      throw new UsageError('a hard delete cannot be undone: run it on a terminal to confirm, or pass --force');
    }
    const backend = await cli.backend();
    if (mustConfirm) {
      // The dry run checks existence and privileges, and gives the count for the question.
      const preview = await backend.deleteEntity(urn, { hard, dryRun: true });
      const values = preview.entitiesWithValues === undefined ? '' : ` and remove its values from ${entities(preview.entitiesWithValues)}`;
      if (!(await cli.terminal.confirm(`Hard-delete ${urn}${values}? This cannot be undone.`))) {
        cli.note('Not confirmed; nothing was deleted');
        return EXIT.failed;
      }
    }
    const deletion = await backend.deleteEntity(urn, { hard, dryRun });
    if (cli.json) cli.printJson(deletion);
    else cli.print(describe(deletion));
  },
});
