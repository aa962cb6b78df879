import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineConfig } from 'tsup';

// One build, shared chunks: every entry sees the same CatalogError class and registry.
export const entries = {
  index: 'src/index.ts',
  // The entries of optional peers load their implementation dynamically, to name a missing peer.
  'adapters/memory': 'adapters/memory/entry.ts',
  'adapters/sqlite': 'adapters/sqlite/entry.ts',
  // The SQLite adapter's commit thread (a worker_threads program, not an export: commit-worker-host.ts finds it).
  'adapters/sqlite-commit-worker': 'adapters/sqlite/commit-worker.ts',
  // Its reader threads (searches off the event loop: read-pool.ts finds it).
  'adapters/sqlite-read-worker': 'adapters/sqlite/read-worker.ts',
  'adapters/postgres': 'adapters/postgres/entry.ts',
  graphql: 'src/graphql/entry.ts',
  http: 'src/http/index.ts',
  testing: 'src/testing/index.ts',
  cli: 'src/cli/main.ts',
};

/**
 * Writes the documents under docs/ that are generated: docs/openapi.json (a copy of the OpenAPI document the
 * HTTP layer serves, src/http/openapi.json) and docs/schema.graphql: the printed executable schema of a default catalog, built from the
 * files just written to dist/ (test/graphql/schema-file.test.ts checks that the committed file matches).
 */
async function writeSchemaDocument(): Promise<void> {
  const load = (file: string) => import(`${pathToFileURL(resolve('dist', file)).href}?build=${Date.now()}`);
  const [{ createCatalog }, { createMemoryAdapter }, { createGraphQLSchema }, { printSchema }] = await Promise.all([
    load('index.js'),
    load('adapters/memory.js'),
    load('graphql.js'),
    import('graphql'),
  ]);
  await copyFile('src/http/openapi.json', 'docs/openapi.json');
  const catalog = createCatalog({ adapter: createMemoryAdapter(), jobs: { background: false } });
  try {
    await writeFile('docs/schema.graphql', `${printSchema(createGraphQLSchema(catalog))}\n`);
  } finally {
    await catalog.close();
  }
}

/** GraphiQL's browser files, from their npm packages into dist/graphiql/ (the HTTP layer serves them: no CDN). */
async function copyGraphiqlAssets(): Promise<void> {
  const require = createRequire(import.meta.url);
  // Their exports maps hide these files from require.resolve: resolve each package's folder instead.
  const folder = (name: string) => dirname(require.resolve(`${name}/package.json`));
  const files: Record<string, string> = {
    'graphiql.min.js': join(folder('graphiql'), 'graphiql.min.js'),
    'graphiql.min.css': join(folder('graphiql'), 'graphiql.min.css'),
    'react.production.min.js': join(folder('react'), 'umd/react.production.min.js'),
    'react-dom.production.min.js': join(folder('react-dom'), 'umd/react-dom.production.min.js'),
  };
  await mkdir('dist/graphiql', { recursive: true });
  await Promise.all(Object.entries(files).map(([name, from]) => copyFile(from, `dist/graphiql/${name}`)));
}

export default defineConfig({
  entry: entries,
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // `npm test` builds the JavaScript only (METACATALOG_BUILD=js): the declarations are built by `npm run build`
  // and checked on the packed package (test/pack/pack-install.mjs); `tsc --noEmit` type-checks beside the tests.
  dts: process.env.METACATALOG_BUILD !== 'js',
  splitting: true,
  sourcemap: true,
  clean: true,
  shims: false,
  loader: { '.graphql': 'text' },
  onSuccess: async () => {
    await copyGraphiqlAssets();
    await writeSchemaDocument();
  },
});
