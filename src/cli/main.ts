#!/usr/bin/env node
import { readFileSync } from 'node:fs';

/**
 * The `metacatalog` command. The commands of CONTRACT section 7 arrive with the CLI issue; until
 * then it answers --help and --version and refuses anything else with exit code 2 (usage error).
 */
const USAGE = `Usage: metacatalog <command> [options]

Commands arrive with the command-line issue (serve, properties, delete, tokens, index-sizes,
truncate-timeseries, system-update). Until then:

  --help       show this help
  --version    print the version
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function main(argv: readonly string[]): number {
  const [first] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(USAGE);
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  process.stderr.write(`metacatalog: unknown command "${first}" (see metacatalog --help)\n`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));
