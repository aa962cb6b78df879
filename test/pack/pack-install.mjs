#!/usr/bin/env node
// Installs the package the way a user does, and uses it: `npm pack`, then a fresh application in a temp
// folder that installs the tarball with only the peers it uses (from npm's cache when it can), imports
// every entry point, runs the bin, and runs the schema under a host's plain vitest setup. Prints
// "N passed, M failed".
//   node test/pack/pack-install.mjs          (from the repository root; CI runs it)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const versionOf = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
const app = mkdtempSync(join(tmpdir(), 'metacatalog-host-'));
let passed = 0;
let failed = 0;
const check = (name, fn) => {
  try {
    fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${String(error?.stderr || error?.stdout || error?.message || error).slice(0, 2000)}`);
  }
};
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });

try {
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', app], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();
  const tarball = join(app, packed);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'host-app', version: '1.0.0', type: 'module', private: true }, null, 2));

  check('the tarball installs with only the peers the application uses', () => {
    const peers = ['graphql', 'lunr', 'better-sqlite3', 'vitest'].map((name) => `${name}@${versionOf(name)}`);
    // No install scripts: better-sqlite3 would compile from source; its compiled binding is copied below.
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...peers]);
    cpSync(join(root, 'node_modules/better-sqlite3/build'), join(app, 'node_modules/better-sqlite3/build'), { recursive: true });
  });

  check('every entry point imports and works (memory, SQLite on a file, GraphQL, HTTP, testing)', () => {
    writeFileSync(
      join(app, 'use.mjs'),
      `import { createCatalog, CatalogError } from 'metacatalog';
import { createMemoryAdapter } from 'metacatalog/adapters/memory';
import { createSqliteAdapter } from 'metacatalog/adapters/sqlite';
import { createGraphQLSchema } from 'metacatalog/graphql';
import { createFetchHandler } from 'metacatalog/http';
import { runConformanceSuite } from 'metacatalog/testing';
import { graphql } from 'graphql';
const ADMIN = 'urn:li:corpuser:admin';
if (typeof runConformanceSuite !== 'function' || typeof CatalogError !== 'function') throw new Error('missing exports');
for (const adapter of [createMemoryAdapter(), createSqliteAdapter({ filename: 'catalog.db' })]) {
  const catalog = createCatalog({ adapter, superUsers: [ADMIN] });
  await catalog.entities.upsertAspect(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', 'datasetProperties', { name: 't' });
  const result = await graphql({ schema: createGraphQLSchema(catalog), source: '{ entity(urn: "urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)") { urn type } }', contextValue: { actorUrn: ADMIN } });
  if (result.errors || result.data.entity.type !== 'DATASET') throw new Error(JSON.stringify(result));
  const response = await createFetchHandler(catalog, { trustActorHeader: true })(new Request('http://x/health'));
  if (response.status !== 200) throw new Error('health ' + response.status);
  await catalog.close();
}
console.log('used');
`,
    );
    const out = run(process.execPath, ['use.mjs']);
    if (!out.includes('used')) throw new Error(out);
  });

  check('every entry point ships its declarations, and a TypeScript application compiles against them', () => {
    const installed = join(app, 'node_modules/metacatalog');
    const { exports } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    for (const [sub, target] of Object.entries(exports)) {
      if (typeof target === 'string') continue;
      if (!existsSync(join(installed, target.types))) throw new Error(`${sub}: ${target.types} is not in the package`);
    }
    // Strict, resolved through the package's exports map (node16). The @ts-expect-error lines fail the
    // compile when a declaration is missing or loose (an untyped import would accept them).
    writeFileSync(
      join(app, 'use-types.ts'),
      `import { createCatalog, CatalogError, type Catalog } from 'metacatalog';
import { createMemoryAdapter } from 'metacatalog/adapters/memory';
import { createSqliteAdapter } from 'metacatalog/adapters/sqlite';
import { createPostgresAdapter } from 'metacatalog/adapters/postgres';
import { createGraphQLSchema } from 'metacatalog/graphql';
import { createFetchHandler } from 'metacatalog/http';
import { runConformanceSuite } from 'metacatalog/testing';
export const catalog: Catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: ['urn:li:corpuser:admin'] });
export const handler: (request: Request) => Promise<Response> = createFetchHandler(catalog);
export const uses = [CatalogError, createSqliteAdapter, createPostgresAdapter, createGraphQLSchema, runConformanceSuite];
// @ts-expect-error an adapter is an object, not a number
createCatalog({ adapter: 42 });
// @ts-expect-error the memory adapter takes no file name
createMemoryAdapter({ filename: 1 });
// @ts-expect-error the fetch handler needs a catalog
createFetchHandler();
// @ts-expect-error the schema factory needs a catalog
createGraphQLSchema('catalog');
`,
    );
    // And the repository's type tests written against the package name (test/types: a host's augmentation of
    // the aspect map, an adapter author's conformance harness), here against the packed declarations.
    const typeTests = ['augment-package.ts', 'conformance-harness.ts', 'my-adapter.ts'];
    for (const file of typeTests) {
      const text = readFileSync(join(root, 'test/types', file), 'utf8').replace(/from '\.\/([\w-]+)'/g, "from './$1.js'");
      writeFileSync(join(app, file), text);
    }
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          // Node's types from this repository (the application would install @types/node).
          typeRoots: [join(root, 'node_modules/@types')],
          types: ['node'],
          skipLibCheck: true,
        },
        files: ['use-types.ts', ...typeTests],
      }),
    );
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
  });

  check('the bin runs: npx metacatalog --version and --help', () => {
    const version = run('npx', ['--no-install', 'metacatalog', '--version']).trim();
    if (version !== JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version) throw new Error(`--version printed ${version}`);
    if (!run('npx', ['--no-install', 'metacatalog', '--help']).includes('serve')) throw new Error('--help does not list serve');
  });

  check("a host's plain vitest (no alias) runs the schema with metacatalog/graphql's graphql()", () => {
    writeFileSync(
      join(app, 'schema.test.mjs'),
      `import { test, expect } from 'vitest';
import { createCatalog } from 'metacatalog';
import { createMemoryAdapter } from 'metacatalog/adapters/memory';
import { createGraphQLSchema, graphql } from 'metacatalog/graphql';
test('schema', async () => {
  const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: ['urn:li:corpuser:admin'] });
  const result = await graphql({ schema: createGraphQLSchema(catalog), source: '{ listAccessTokens(input: {}) { total } }', contextValue: { actorUrn: 'urn:li:corpuser:admin' } });
  expect(result).toEqual({ data: { listAccessTokens: { total: 0 } } });
});
`,
    );
    run('npx', ['--no-install', 'vitest', 'run', 'schema.test.mjs'], { env: { ...process.env, CI: 'true' } });
  });
} finally {
  rmSync(app, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
