import type { CreatePolicyInput, StoredPolicy } from '../../index';
import { defineCommand, defineGroup } from '../define-command';
import { CommandError, readInput, UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, parseInteger, required } from '../options';
import { parseYaml } from '../yaml';

const CREATE_USAGE = `Usage: metacatalog policies create -f <file.yaml|file.json> [--db file | --server url] [--json]

Stores the policies of a YAML or JSON file (one policy, or a list), each as catalog.policies.create
takes it (needs MANAGE_POLICIES), for example:

  name: finance stewards
  type: METADATA                      # PLATFORM (default): every resource
  privileges: [EDIT_ENTITY_PROPERTIES]
  actors: { users: ['urn:li:corpuser:ana'] }
  resources:
    type: dataset
    filter:
      criteria:
        - { field: structuredProperties.finance.domain, condition: EQUALS, values: [finance] }
    properties: ['finance.*']

Each is checked before it is stored; prints the URN of each. docs/access.md explains the model.

  -f, --file <file>    the file ("-" reads stdin)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 stored, 1 refused (the policies before the refused one are stored), 2 usage error.
`;

const LIST_USAGE = `Usage: metacatalog policies list [--query text] [--start n] [--count n] [--db file | --server url] [--json]

Lists the stored policies by name (needs MANAGE_POLICIES).

  --query <text>       only policies whose name or description contains it
  --start <n>          offset (default 0)
  --count <n>          page size, 1 to 1000 (default 100)

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 listed, 1 refused, 2 usage error.
`;

const DELETE_USAGE = `Usage: metacatalog policies delete <policy urn> [--db file | --server url] [--json]

Deletes a stored policy (needs MANAGE_POLICIES): what it granted is gone on the next call.

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 deleted, 1 refused or no such policy, 2 usage error.
`;

function describePolicy(p: StoredPolicy): string {
  const r = p.resources;
  const where = !r
    ? 'everywhere'
    : [
        r.type ? `type ${r.type}` : '',
        r.resources ? `${r.resources.length} URN(s)` : '',
        ...(r.filter?.criteria ?? []).map((c) => `${c.field} ${c.condition} ${c.values.join('|')}`),
        r.properties ? `properties ${r.properties.join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('; ');
  const who = p.actors.allUsers ? 'all users' : p.actors.users.join(', ') || 'nobody';
  return `${p.urn}  "${p.name}"  ${p.type} ${p.state}  ${p.privileges.join(', ')}  to ${who}  on ${where}`;
}

const policiesCreateCommand = defineCommand({
  name: 'policies create',
  summary: 'store policies from a YAML or JSON file',
  usage: CREATE_USAGE,
  options: { file: { type: 'string', short: 'f' } },
  connects: true,
  async run(cli) {
    const file = required(cli.values.file, '-f <file>');
    let parsed: unknown;
    try {
      parsed = parseYaml(await readInput(file));
    } catch (error) {
      throw new CommandError(`${file} is not readable YAML or JSON: ${(error as Error).message}`);
    }
    const policies = (Array.isArray(parsed) ? parsed : [parsed]) as CreatePolicyInput[];
    if (!policies.length || policies.some((p) => typeof p !== 'object' || p === null))
      throw new CommandError(`${file} must hold a policy object or a list of them`);
    const backend = await cli.backend({ create: true });
    const urns: string[] = [];
    for (const policy of policies) urns.push(await backend.createPolicy(policy));
    if (cli.json) cli.printJson(urns.map((urn) => ({ urn })));
    else for (const urn of urns) cli.print(`Created policy ${urn}`);
  },
});

const policiesListCommand = defineCommand({
  name: 'policies list',
  summary: 'list stored policies',
  usage: LIST_USAGE,
  options: { query: { type: 'string' }, start: { type: 'string' }, count: { type: 'string' } },
  connects: true,
  async run(cli) {
    const start = parseInteger(cli.values.start, '--start', 0, 1_000_000_000) ?? 0;
    const count = parseInteger(cli.values.count, '--count', 1, 1000) ?? 100;
    const list = await (await cli.backend()).listPolicies({ start, count, ...(cli.values.query ? { query: cli.values.query } : {}) });
    if (cli.json) {
      cli.printJson(list);
      return;
    }
    for (const p of list.policies) cli.print(describePolicy(p));
    cli.note(`${list.count} of ${list.total} policies${list.start ? ` from ${list.start}` : ''}`);
  },
});

const policiesDeleteCommand = defineCommand({
  name: 'policies delete',
  summary: 'delete a stored policy',
  usage: DELETE_USAGE,
  options: {},
  positionals: true,
  connects: true,
  async run(cli) {
    if (cli.positionals.length !== 1) throw new UsageError('give one policy URN');
    const urn = cli.positionals[0]!;
    await (await cli.backend()).deletePolicy(urn);
    if (cli.json) cli.printJson({ urn, deleted: true });
    else cli.print(`Deleted policy ${urn}`);
  },
});

export const policiesCommand = defineGroup('policies', 'access policies: create, list, delete', [
  policiesCreateCommand,
  policiesListCommand,
  policiesDeleteCommand,
]);
