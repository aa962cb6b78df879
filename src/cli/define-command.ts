import { isCatalogError } from '../index';
import type { CliBackend, OpenRequirements } from './backend';
import { resolveConnection } from './config';
import { CommandError, UsageError, type Command, type CommandIo } from './io';
import { CONNECTION_OPTIONS, OUTPUT_OPTIONS, parseOptions, wantsJson, type OptionTable, type OptionValues } from './options';
import { processTerminal, type Terminal } from './terminal';

/** Where a command runs: its parsed options, its output, the terminal, and (for catalog commands) the backend. */
export interface CommandContext<V> {
  values: V;
  positionals: string[];
  io: CommandIo;
  /** `--json` was given. */
  json: boolean;
  terminal: Terminal;
  /** Prints a line on stdout (text mode). */
  print(text: string): void;
  /** Prints a value as JSON on stdout. */
  printJson(value: unknown): void;
  /** Prints a note on stderr (both modes: notes are not the answer). */
  note(text: string): void;
  /** Opens the catalog named by --db / --server / the environment / the configuration file (once). */
  backend(requirements?: OpenRequirements): Promise<CliBackend>;
}

export interface CommandSpec<T extends OptionTable> {
  /** The full name, e.g. `properties upsert`. */
  name: string;
  summary: string;
  usage: string;
  options: T;
  /** Takes --db, --postgres, --postgres-schema, --server, --token, --actor. */
  connects: boolean;
  positionals?: boolean;
  run(context: CommandContext<OptionValues<T & typeof OUTPUT_OPTIONS & typeof CONNECTION_OPTIONS>>): Promise<number | void>;
}

/**
 * The exit codes: 0 done, 1 the operation failed, 2 the command line is wrong, 75 the storage is
 * unavailable for now (EX_TEMPFAIL of sysexits.h: running the command again later may succeed).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unavailable: 75 } as const;

/** The exit code of a failure. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  return isCatalogError(error) && (error.code === 'UNAVAILABLE' || error.code === 'RATE_LIMITED') ? EXIT.unavailable : EXIT.failed;
}

function errorBody(error: unknown): { code: string; message: string; details?: unknown; reason?: string } {
  if (error instanceof UsageError) return { code: 'USAGE', message: error.message };
  if (isCatalogError(error)) {
    return {
      code: error.code,
      message: error.message,
      ...(error.details.length ? { details: error.details } : {}),
      ...(error.reason ? { reason: error.reason } : {}),
    };
  }
  if (error instanceof CommandError) return { code: 'FAILED', message: error.message };
  return { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

/** Reports an error on stderr in one line (JSON with --json); returns the exit code. */
function reportError(name: string, error: unknown, io: CommandIo, json: boolean): number {
  const body = errorBody(error);
  const exitCode = exitCodeOf(error);
  if (json) {
    io.stderr(`${JSON.stringify({ error: { ...body, exitCode } })}\n`);
  } else {
    const hint = error instanceof UsageError ? ` (see metacatalog ${name} --help)` : '';
    io.stderr(`metacatalog ${name}: ${body.message.replace(/\s*\n\s*/g, ' ')}${hint}\n`);
  }
  return exitCode;
}

/**
 * Builds a command from its spec: parses the arguments (strict; unknown options are usage errors),
 * answers --help, opens the catalog on demand and closes it afterwards, and turns every failure into
 * one line on stderr with its exit code. The spec's `run` is the command's whole logic: a few calls
 * on the backend and the printing of their answers.
 */
export function defineCommand<T extends OptionTable>(spec: CommandSpec<T>): Command {
  const table = { ...spec.options, ...OUTPUT_OPTIONS, ...(spec.connects ? CONNECTION_OPTIONS : {}) } as T &
    typeof OUTPUT_OPTIONS &
    typeof CONNECTION_OPTIONS;
  return {
    name: spec.name,
    summary: spec.summary,
    usage: spec.usage,
    async run(argv, io, terminal: Terminal = processTerminal) {
      const json = wantsJson(argv);
      let backend: CliBackend | undefined;
      let exitCode: number;
      try {
        const parsed = parseOptions(argv, table, spec.positionals === true);
        if (parsed.values.help) {
          io.stdout(spec.usage);
          return EXIT.ok;
        }
        const values = parsed.values as Record<string, unknown>;
        const context: CommandContext<typeof parsed.values> = {
          values: parsed.values,
          positionals: parsed.positionals,
          io,
          json,
          terminal,
          print: (text) => io.stdout(`${text}\n`),
          printJson: (value) => io.stdout(`${JSON.stringify(value, null, 2)}\n`),
          note: (text) => io.stderr(`${text}\n`),
          async backend(requirements = {}) {
            if (backend) return backend;
            const connection = resolveConnection({
              db: values.db as string | undefined,
              postgres: values.postgres as string | undefined,
              postgresSchema: values['postgres-schema'] as string | undefined,
              server: values.server as string | undefined,
              token: values.token as string | undefined,
              actor: values.actor as string | undefined,
            });
            if (connection.mode === 'embedded') {
              const { openEmbeddedBackend } = await import('./embedded-backend');
              backend = await openEmbeddedBackend(connection.store, connection.actor, requirements, io);
            } else {
              const { openRemoteBackend } = await import('./remote-backend');
              backend = openRemoteBackend(connection.server, connection.token);
            }
            return backend;
          },
        };
        exitCode = (await spec.run(context)) ?? EXIT.ok;
      } catch (error) {
        exitCode = reportError(spec.name, error, io, json);
      }
      if (backend) {
        try {
          await backend.close();
        } catch (error) {
          exitCode = reportError(spec.name, error, io, json);
        }
      }
      return exitCode;
    },
  };
}

/** A command with subcommands (`properties upsert|get|list`, `tokens create|list|revoke`). */
export function defineGroup(name: string, summary: string, subcommands: readonly Command[]): Command {
  const width = Math.max(...subcommands.map((c) => c.name.length));
  const usage = `Usage: metacatalog ${name} <command> [options]

${summary[0]!.toUpperCase()}${summary.slice(1)}.

Commands:
${subcommands.map((c) => `  metacatalog ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

metacatalog ${name} <command> --help shows a command's options.
`;
  return {
    name,
    summary,
    usage,
    async run(argv, io) {
      const [first, ...rest] = argv;
      if (first === '--help' || first === '-h' || first === 'help') {
        io.stdout(usage);
        return EXIT.ok;
      }
      const sub = subcommands.find((c) => c.name === `${name} ${first}`);
      if (!sub) {
        const error = new UsageError(
          first === undefined || first.startsWith('-')
            ? `a command is needed: ${subcommands.map((c) => c.name.slice(name.length + 1)).join(', ')}`
            : `unknown command "${first}"`,
        );
        return reportError(name, error, io, wantsJson(argv));
      }
      return sub.run(rest, io);
    },
  };
}
