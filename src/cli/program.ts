import { existsSync, readFileSync } from 'node:fs';
import { COMMANDS } from './commands/index';
import { exitCodeOf } from './define-command';
import { CommandError, processIo, UsageError, type CommandIo } from './io';

/**
 * The `metacatalog` command: a dispatcher over src/cli/commands (one file per command). Exit codes:
 * 0 done, 1 the command failed, 2 a usage error (unknown command, bad option), 75 the storage is unavailable
 * for now (try again later).
 */
function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: metacatalog <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

  --help       show this help (metacatalog <command> --help for a command's options)
  --version    print the version
`;
}

function version(): string {
  // dist/cli.js is one folder below package.json; the sources (run by the tests) are two.
  const file = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find((url) => existsSync(url));
  const pkg = JSON.parse(readFileSync(file ?? new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: readonly string[], io: CommandIo = processIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.stdout(usage());
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-v') {
    io.stdout(`${version()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (!command) {
    io.stderr(`metacatalog: unknown command "${first}" (see metacatalog --help)\n`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`metacatalog ${command.name}: ${error.message} (see metacatalog ${command.name} --help)\n`);
      return 2;
    }
    if (error instanceof CommandError) {
      io.stderr(`metacatalog ${command.name}: ${error.message}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`metacatalog ${command.name}: ${message}\n`);
    return exitCodeOf(error);
  }
}
