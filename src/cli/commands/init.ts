import { existsSync } from 'node:fs';
import { defineCommand, EXIT } from '../define-command';
import { configFilePath, normalizeServer, writeConfig } from '../config';
import { CommandError, UsageError } from '../io';
import { OUTPUT_HELP } from '../options';

const USAGE = `Usage: metacatalog init [--server <url>] [--token <token>] [--force] [--json]

Writes the configuration file ~/.metacatalog.yaml (or the file METACATALOG_CONFIG names) with the
server address and access token that the other commands use when neither --db nor --server is given.
Asks for what is not given when on a terminal. The file is written with mode 0600.

  --server <url>       e.g. http://localhost:8080/gms
  --token <token>      an access token (metacatalog serve prints one at its first start)
  --force              replace an existing file without asking

${OUTPUT_HELP}

Order of precedence for the other commands: --db / --server and --token, then METACATALOG_SERVER
and METACATALOG_TOKEN, then this file.

Exit codes: 0 written, 1 not written (the file exists, or it cannot be written), 2 usage error.
`;

export const initCommand = defineCommand({
  name: 'init',
  summary: 'write ~/.metacatalog.yaml (server address and token)',
  usage: USAGE,
  options: { server: { type: 'string' }, token: { type: 'string' }, force: { type: 'boolean' } },
  connects: false,
  async run(cli) {
    const file = configFilePath();
    const interactive = cli.terminal.interactive;
    let server = cli.values.server;
    if (server === undefined) {
      if (!interactive) throw new UsageError('--server is required when not on a terminal');
      server = await cli.terminal.ask('Server address (e.g. http://localhost:8080/gms): ');
    }
    server = normalizeServer(server, '--server');
    let token = cli.values.token;
    if (token === undefined) {
      if (!interactive) throw new UsageError('--token is required when not on a terminal');
      token = await cli.terminal.ask('Access token: ');
    }
    if (token.trim() === '') throw new UsageError('the access token is empty');
    if (existsSync(file) && !cli.values.force) {
      if (!interactive) throw new CommandError(`${file} exists; pass --force to replace it`);
      if (!(await cli.terminal.confirm(`${file} exists. Replace it?`))) {
        cli.note('Not replaced');
        return EXIT.failed;
      }
    }
    writeConfig(file, { server, token: token.trim() });
    if (cli.json) cli.printJson({ file, server });
    else cli.print(`Wrote ${file} (server ${server})`);
  },
});
