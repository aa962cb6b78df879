import { defineCommand } from '../define-command';
import { CONNECTION_HELP, OUTPUT_HELP, required } from '../options';

const USAGE = `Usage: metacatalog tokens revoke --id <token id> [--db file | --server url] [--json]

Revokes an access token: it fails authentication at once. Its owner or a holder of
MANAGE_ACCESS_TOKENS may revoke it. The id is the one tokens list and tokens create show (or the
token's urn:li:accessToken: URN).

  --id <token id>

${CONNECTION_HELP}
${OUTPUT_HELP}

Exit codes: 0 revoked, 1 refused or no such token, 2 usage error.
`;

export const tokensRevokeCommand = defineCommand({
  name: 'tokens revoke',
  summary: 'revoke an access token',
  usage: USAGE,
  options: { id: { type: 'string' } },
  connects: true,
  async run(cli) {
    const tokenId = required(cli.values.id, '--id');
    const revoked = await (await cli.backend()).revokeToken(tokenId);
    if (cli.json) cli.printJson({ tokenId, revoked });
    else cli.print(`Revoked access token ${tokenId}`);
  },
});
