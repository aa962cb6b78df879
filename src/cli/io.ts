import { readFile } from 'node:fs/promises';
/** Where a command writes; tests and embedding hosts pass their own. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const processIo: CommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** A wrong command line: exit code 2 with the message and a pointer to the help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command that ran and failed for a reason the user can act on: exit code 1 with the message, no stack. */
export class CommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandError';
  }
}

/** One command of the `metacatalog` tool (one file per command under src/cli/commands). */
export interface Command {
  name: string;
  /** One line for `metacatalog --help`. */
  summary: string;
  /** The command's own help text (`metacatalog <name> --help`). */
  usage: string;
  /** Runs the command; resolves with the exit code. */
  run(argv: readonly string[], io: CommandIo): Promise<number>;
}

/** A file's text, or standard input's for `-`; a file that cannot be read is a CommandError naming it. */
export async function readInput(file: string): Promise<string> {
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
