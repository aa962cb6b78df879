#!/usr/bin/env node
// The `metacatalog` bin: runs the program with the process's arguments (src/cli/program.ts is its body).
import { main } from './program';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`metacatalog: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
