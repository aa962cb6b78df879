import { ACCESS_TOKEN_DURATIONS, type AccessTokenDuration } from '../../index';
import { defineCommand } from '../define-command';
import { UsageError } from '../io';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const USAGE = `Usage: metacatalog tokens create --name <name> [--duration <d>] [--description <text>] [--for <user urn>] [--privileges <list>] [--db file | --server url] [--json]

Creates a personal access token and prints it on stdout (shown only now; its id and expiry go to
stderr). With --json: { accessToken, metadata }.

  --name <name>          a name to recognise it by
  --duration <d>         ${ACCESS_TOKEN_DURATIONS.join(', ')} (default ONE_MONTH)
  --description <text>
  --for <user urn>       the user the token acts as (default: yourself; another user needs MANAGE_ACCESS_TOKENS)
  --privileges <list>    scope the token: comma-separated privileges the user holds, or READ_ONLY
                         (e.g. EDIT_ENTITY_PROPERTIES); requests with it may use only those

${CONNECTION_HELP}
${OUTPUT_HELP}

In embedded mode the token is signed with the key beside the database (<file>.signing-key, created
when missing), so it works against metacatalog serve on the same file.

Exit codes: 0 created, 1 refused, 2 usage error.
`;

export const tokensCreateCommand = defineCommand({
  name: 'tokens create',
  summary: 'create an access token',
  usage: USAGE,
  options: {
    name: { type: 'string' },
    duration: { type: 'string' },
    description: { type: 'string' },
    for: { type: 'string' },
    privileges: { type: 'string' },
  },
  connects: true,
  async run(cli) {
    const name = required(cli.values.name, '--name');
    const duration = (cli.values.duration ?? 'ONE_MONTH').toUpperCase();
    if (!(ACCESS_TOKEN_DURATIONS as readonly string[]).includes(duration)) {
      throw new UsageError(`--duration must be one of ${ACCESS_TOKEN_DURATIONS.join(', ')}, got "${cli.values.duration}"`);
    }
    const backend = await cli.backend({ create: true, signingKey: true });
    const created = await backend.createToken({
      type: 'PERSONAL',
      actorUrn: cli.values.for ?? (await backend.actor()),
      duration: duration as AccessTokenDuration,
      name,
      ...(cli.values.description !== undefined ? { description: cli.values.description } : {}),
      ...(cli.values.privileges !== undefined
        ? {
            privileges: cli.values.privileges
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean),
          }
        : {}),
    });
    if (cli.json) {
      cli.printJson(created);
      return;
    }
    const { metadata } = created;
    const expires = metadata.expiresAt === null ? 'never expires' : `expires ${new Date(metadata.expiresAt).toISOString()}`;
    const scopes = metadata.privileges ? `, scoped to ${metadata.privileges.join(', ')}` : '';
    cli.note(`Created access token ${metadata.id} "${metadata.name}" for ${metadata.actorUrn}${scopes}, ${expires}; it is shown only now:`);
    cli.print(created.accessToken);
  },
});
