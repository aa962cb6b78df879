import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './io';

/** The option table of a command, as `node:util` `parseArgs` takes it. */
export type OptionTable = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes. */
export const OUTPUT_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionTable;

/** Options of the commands that work on a catalog: where it is and how to reach it. */
export const CONNECTION_OPTIONS = {
  db: { type: 'string' },
  postgres: { type: 'string' },
  'postgres-schema': { type: 'string' },
  server: { type: 'string' },
  token: { type: 'string' },
  actor: { type: 'string' },
} as const satisfies OptionTable;

/** Help lines of CONNECTION_OPTIONS and OUTPUT_OPTIONS, for the commands' usage texts. */
export const CONNECTION_HELP = `Where the catalog is (one of):
  --db <file>          a local SQLite file (embedded mode; acts as a super user, see --actor)
  --postgres <url>     a PostgreSQL database, embedded like --db (--postgres-schema <name>, default
                       metacatalog); tokens made this way need METACATALOG_SIGNING_KEY
  --server <url>       a metacatalog server, e.g. http://localhost:8080/gms (or METACATALOG_SERVER)
  --token <token>      access token for --server (or METACATALOG_TOKEN; prefer the variable or
                       ~/.metacatalog.yaml written by metacatalog init: arguments show in ps)
  --actor <urn>        embedded mode: the user to act as, a super user (default urn:li:corpuser:admin)`;

export const OUTPUT_HELP = `  --json               JSON on stdout for scripts; errors as one JSON line on stderr
  -h, --help           this text`;

/** The parsed values of an option table: strings and booleans (lists of strings for a repeatable option), each possibly absent. */
export type OptionValues<T extends OptionTable> = {
  [K in keyof T]?: T[K] extends { type: 'boolean' } ? boolean : T[K] extends { multiple: true } ? string[] : string;
};

/** Parses a command's arguments; anything `parseArgs` refuses is a usage error (exit code 2). */
export function parseOptions<T extends OptionTable>(
  argv: readonly string[],
  options: T,
  allowPositionals = false,
): { values: OptionValues<T>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals });
    return { values: parsed.values as OptionValues<T>, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message.replace(/\s+/g, ' ').trim() : String(error));
  }
}

/** Was `--json` among the arguments? (Known before parsing succeeds, so that a usage error is reported as JSON too.) */
export function wantsJson(argv: readonly string[]): boolean {
  return argv.includes('--json');
}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `45s`, `2w` in milliseconds; anything else is a usage error naming the option. */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d{1,9})([smhdw])$/.exec(text.trim());
  if (!match) throw new UsageError(`${option} must be a number followed by s, m, h, d or w (e.g. 30d), got "${text}"`);
  return Number(match[1]) * DURATION_UNITS[match[2]!]!;
}

/** A whole number within bounds, or a usage error naming the option. */
export function parseInteger(text: string | undefined, option: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${option} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

/** A required option, or a usage error naming it. */
export function required<T>(value: T | undefined, option: string): T {
  if (value === undefined || value === '') throw new UsageError(`${option} is required`);
  return value;
}
