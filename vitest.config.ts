import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const require = createRequire(import.meta.url);

function graphqlCommonJsEntry(): string | undefined {
  try {
    return require.resolve('graphql/index.js');
  } catch {
    return undefined;
  }
}
const graphqlEntry = graphqlCommonJsEntry();

/**
 * The files that take longest, slowest first (each file run alone on two busy cores). vitest starts the
 * files it has durations of longest first, but a fresh clone has none, and then it starts the largest
 * files first: these are small files (a conformance run, a process killed mid-way, spawned servers)
 * that would start last and end the run alone on one core.
 */
const SLOWEST_FILES: readonly string[] = [
  'test/cli/ingest-kill.test.ts',
  'test/conformance/postgres.test.ts',
  'test/adapters/postgres/replicas.test.ts',
  'test/core/properties/edit-values-csv.test.ts',
  'test/core/properties/preview-change.test.ts',
  'test/conformance/composed.test.ts',
  'test/cli/properties-values-postgres.test.ts',
  'test/conformance/sqlite.test.ts',
  'test/cli/properties-values.test.ts',
  'test/core/stewardship/apply-to-matches.test.ts',
  'test/cli/serve-postgres.test.ts',
  'test/cli/properties.test.ts',
  'test/core/properties/cleanup-kill.test.ts',
  'test/cli/serve-workers.test.ts',
  'test/cli/command-line.test.ts',
  'test/cli/serve.test.ts',
];

/**
 * Longest first: by the durations of the last run when vitest has them for every file, else the files
 * above first, then the rest as vitest orders them.
 */
class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (spec: TestSpecification) => relative(root, spec.moduleId).split('\\').join('/');
    const known = sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`) !== undefined);
    if (known) return sorted;
    const rank = (spec: TestSpecification) => {
      const i = SLOWEST_FILES.indexOf(path(spec));
      return i < 0 ? SLOWEST_FILES.length : i;
    };
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: within a rank, vitest's own order stays.
    return [...sorted].sort((a, b) => group(a) - group(b) || rank(a) - rank(b));
  }
}

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
    // The slowest files start first, also on a fresh clone that has no durations of an earlier run.
    sequence: { sequencer: SlowestFirstSequencer },
    // Many files wait on processes they spawn, servers and PostgreSQL, but the run as a whole is CPU-bound on
    // two cores: four forks keep both busy, and each fork more would transform and import the library again.
    maxWorkers: 4,
    // The soak test measures the heap after a full collection (test/support/soak-suite.ts).
    execArgv: ['--expose-gc'],
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
      // running (a timer, a server closing) allocates meanwhile. They run after the other files (groupOrder), side
      // by side on the two cores: beside four forks of the other files they took five times as long and came near
      // their timeout.
      {
        extends: true,
        test: { name: 'isolated', include: ['test/soak/**/*.test.ts'], isolate: true, sequence: { groupOrder: 1 } },
      },
    ],
    // The JSON report lets .ci/run print one closing "N passed, M failed" line for the whole run.
    reporters: ['default', ['json', { outputFile: '.vitest-tmp/results.json' }]],
  },
});
