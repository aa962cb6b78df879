import type { ServiceAccount } from '../../index';
import { defineCommand, defineGroup } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const FOOTER = `${CONNECTION_HELP}
${OUTPUT_HELP}`;

const CREATE_USAGE = `Usage: metacatalog service-accounts create --id <id> [--display-name text] [--description text] [--db file | --server url] [--json]

Creates the service account urn:li:corpuser:service_<id> (needs MANAGE_SERVICE_ACCOUNTS): a non-human
actor that policies name like a user. Make its tokens with
  metacatalog tokens create --for urn:li:corpuser:service_<id> ...   (needs MANAGE_ACCESS_TOKENS)

  --id <id>               letters, digits, "_", "." or "-"
  --display-name <text>
  --description <text>

${FOOTER}

Exit codes: 0 created, 1 refused or exists already, 2 usage error.
`;

const LIST_USAGE = `Usage: metacatalog service-accounts list [--db file | --server url] [--json]

Lists the service accounts (needs MANAGE_SERVICE_ACCOUNTS).

${FOOTER}

Exit codes: 0 listed, 1 refused, 2 usage error.
`;

const toggleUsage = (
  verb: 'disable' | 'enable',
  effect: string,
) => `Usage: metacatalog service-accounts ${verb} <account urn> [--db file | --server url] [--json]

${effect} (needs MANAGE_SERVICE_ACCOUNTS).

${FOOTER}

Exit codes: 0 done, 1 refused or no such account, 2 usage error.
`;

function line(a: ServiceAccount): string {
  return `${a.urn}  ${a.disabled ? 'DISABLED' : 'enabled'}${a.displayName ? `  "${a.displayName}"` : ''}  created by ${a.createdBy}`;
}

const serviceAccountsCreateCommand = defineCommand({
  name: 'service-accounts create',
  summary: 'create a service account',
  usage: CREATE_USAGE,
  options: { id: { type: 'string' }, 'display-name': { type: 'string' }, description: { type: 'string' } },
  connects: true,
  async run(cli) {
    const id = required(cli.values.id, '--id');
    const account = await (
      await cli.backend()
    ).createServiceAccount({
      id,
      ...(cli.values['display-name'] !== undefined ? { displayName: cli.values['display-name'] } : {}),
      ...(cli.values.description !== undefined ? { description: cli.values.description } : {}),
    });
    if (cli.json) cli.printJson(account);
    else cli.print(`Created service account ${account.urn}`);
  },
});

const serviceAccountsListCommand = defineCommand({
  name: 'service-accounts list',
  summary: 'list service accounts',
  usage: LIST_USAGE,
  options: {},
  connects: true,
  async run(cli) {
    const accounts = await (await cli.backend()).listServiceAccounts();
    if (cli.json) cli.printJson(accounts);
    else for (const a of accounts) cli.print(line(a));
  },
});

function toggle(verb: 'disable' | 'enable', effect: string) {
  return defineCommand({
    name: `service-accounts ${verb}`,
    summary: `${verb} a service account`,
    usage: toggleUsage(verb, effect),
    options: {},
    positionals: true,
    connects: true,
    async run(cli) {
      if (cli.positionals.length !== 1) throw new UsageError('give one service account URN');
      const backend = await cli.backend();
      const account =
        verb === 'disable'
          ? await backend.disableServiceAccount(cli.positionals[0]!)
          : await backend.enableServiceAccount(cli.positionals[0]!);
      if (cli.json) cli.printJson(account);
      else cli.print(`${verb === 'disable' ? 'Disabled' : 'Enabled'} service account ${account.urn}`);
    },
  });
}

export const serviceAccountsCommand = defineGroup('service-accounts', 'service accounts: create, list, disable, enable', [
  serviceAccountsCreateCommand,
  serviceAccountsListCommand,
  toggle('disable', 'Disables a service account: every token of it is revoked at once, and it holds no privilege until enabled'),
  toggle('enable', 'Enables a disabled service account (make new tokens: those revoked when it was disabled stay revoked)'),
]);
