import { defineConfig } from 'tsup';

// One build, shared chunks: every entry sees the same CatalogError class and registry.
export const entries = {
  index: 'src/index.ts',
  'adapters/memory': 'adapters/memory/index.ts',
  'adapters/sqlite': 'adapters/sqlite/index.ts',
  'adapters/postgres': 'adapters/postgres/index.ts',
  graphql: 'src/graphql/index.ts',
  http: 'src/http/index.ts',
  testing: 'src/testing/index.ts',
  cli: 'src/cli/main.ts',
};

export default defineConfig({
  entry: entries,
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  splitting: true,
  sourcemap: true,
  clean: true,
  shims: false,
  loader: { '.graphql': 'text' },
});
