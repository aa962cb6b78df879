import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { useRamTmpdir } from './test/support/ram-tmpdir.js';
import { LongestFirstSequencer } from './test/support/sequencer.js';

const require = createRequire(import.meta.url);

function graphqlCommonJsEntry(): string | undefined {
  try {
    return require.resolve('graphql/index.js');
  } catch {
    return undefined;
  }
}
const graphqlEntry = graphqlCommonJsEntry();

// The files tests make go to the RAM file system where there is one (test/support/ram-tmpdir.ts): the forks
// and the processes they start inherit TMPDIR.
useRamTmpdir();

export default defineConfig({
  plugins: [
    {
      // tsup loads .graphql files as text; do the same under vitest.
      name: 'graphql-text',
      transform(_code, id) {
        if (!id.endsWith('.graphql')) return null;
        return { code: `export default ${JSON.stringify(readFileSync(id, 'utf8'))};`, map: null };
      },
    },
  ],
  resolve: {
    // graphql ships .mjs and .js; @graphql-tools loads the .js one. Make ours the same module.
    alias: graphqlEntry ? [{ find: /^graphql$/, replacement: graphqlEntry }] : [],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // After each file, whatever process it started and left running is killed (a test that timed out before
    // stopping its server): no child outlives its file.
    setupFiles: ['test/support/kill-children.ts'],
    pool: 'forks',
    // Longest files first, by committed durations: a fresh clone has no record of the last run.
    sequence: { sequencer: LongestFirstSequencer },
    // Many files wait on processes they spawn, servers and PostgreSQL, but the run as a whole is CPU-bound on
    // two cores: four forks keep both busy, and each fork more would transform and import the library again.
    maxWorkers: 4,
    // Without V8's optimizing compiler (TurboFan) in the forks: test code runs each path a few times, and optimizing
    // it took more CPU than it saved (a fifth of the suite's files, four pairs of runs alternated: 8-19% less CPU
    // without it, every pair). The processes the tests start (`serve`, the command line) run as users run them.
    execArgv: ['--no-turbofan'],
    projects: [
      // Files share a fork's loaded modules (no isolation), which saves the import of the library per
      // file; every file builds its own catalogs and servers.
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: ['test/soak/**'],
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      // The soak tests measure their process's heap: each file a fork of its own, where nothing another file left
      // running (a timer, a server closing) allocates meanwhile. In the same group as the other files and, as the
      // longest, started first (test/support/sequencer.ts): run after the others, alone, they left a core idle for
      // the last 10-25 s of the run.
      {
        extends: true,
        // Without V8's optimizing compilers and bytecode flushing (test/support/soak-suite.ts): the heap then measures
        // what the code keeps, not optimized code still being made a thousand rounds in, nor the bytecode of code run
        // once being dropped, which moved the measurement by up to a megabyte.
        test: {
          name: 'isolated',
          include: ['test/soak/**/*.test.ts'],
          isolate: true,
          sequence: { groupOrder: 0 },
          execArgv: ['--expose-gc', '--no-turbofan', '--no-maglev', '--no-flush-bytecode'],
        },
      },
    ],
    // The JSON report lets .ci/run print one closing "N passed, M failed" line for the whole run.
    reporters: ['default', ['json', { outputFile: '.vitest-tmp/results.json' }]],
  },
});
