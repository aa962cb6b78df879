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

  // The tarball as the registry would see it: publint (package.json fields against the files) and
  // arethetypeswrong (each entry's types resolve as its JavaScript does). The package is ESM only: attw's
  // esm-only profile leaves out the CommonJS resolutions (node10, require from node16).
  const bin = (name) => join(root, 'node_modules/.bin', name);
  check('publint finds nothing in the tarball (strict: warnings fail)', () => {
    run(bin('publint'), ['run', '--strict', tarball], { cwd: root });
  });
  check('arethetypeswrong finds no problem in any entry (esm-only profile)', () => {
    run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'ascii'], { cwd: root });
  });

  check('the tarball installs with only the peers the application uses', () => {
    // Not prom-client: metrics are not used here, and the checks below see the message that names it.
    const peers = ['graphql', '@graphql-tools/schema', 'lunr', 'better-sqlite3', 'vitest'].map((name) => `${name}@${versionOf(name)}`);
    // No install scripts: better-sqlite3 would compile from source; its compiled binding is copied below.
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...peers]);
    cpSync(join(root, 'node_modules/better-sqlite3/build'), join(app, 'node_modules/better-sqlite3/build'), { recursive: true });
  });

  check(
    'every entry point imports and works (memory, SQLite on a file committing on its shipped commit thread and searching on its reader thread, GraphQL, HTTP, testing)',
    () => {
      writeFileSync(
        join(app, 'use.mjs'),
        `import workerThreads from 'node:worker_threads';
import { syncBuiltinESMExports } from 'node:module';
const threads = [];
workerThreads.Worker = class extends workerThreads.Worker {
  constructor(program, options) {
    super(program, options);
    threads.push(String(program));
  }
};
syncBuiltinESMExports();
import { createCatalog, CatalogError } from 'metacatalog';
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
  // On a file the first search starts the reader thread.
  const found = await catalog.search.search(ADMIN, { types: ['DATASET'], query: 't', count: 1 });
  if (found.total !== 1) throw new Error('search ' + JSON.stringify(found));
  const response = await createFetchHandler(catalog, { trustActorHeader: true })(new Request('http://x/health'));
  if (response.status !== 200) throw new Error('health ' + response.status);
  await catalog.close();
}
if (!threads.some((program) => program.endsWith('/node_modules/metacatalog/dist/adapters/sqlite-commit-worker.js'))) {
  throw new Error('the SQLite adapter did not start its commit thread from the package: ' + JSON.stringify(threads));
}
if (!threads.some((program) => program.endsWith('/node_modules/metacatalog/dist/adapters/sqlite-read-worker.js'))) {
  throw new Error('the SQLite adapter did not start its reader thread from the package: ' + JSON.stringify(threads));
}
console.log('used');
`,
      );
      const out = run(process.execPath, ['use.mjs']);
      if (!out.includes('used')) throw new Error(out);
    },
  );

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

  check(
    'metacatalog serve answers GraphQL with its bootstrap token; --metrics-port without prom-client names npm install prom-client',
    () => {
      writeFileSync(
        join(app, 'serve.mjs'),
        `import { spawn, spawnSync } from 'node:child_process';
const bin = 'node_modules/metacatalog/dist/cli.js';
const server = spawn(process.execPath, [bin, 'serve', '--db', ':memory:', '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
let err = '';
server.stderr.on('data', (chunk) => (err += chunk));
try {
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no listening line in 20 s: ' + out + err)), 20_000);
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /listening on (http:\\S+)/.exec(out);
      if (found) { clearTimeout(timer); resolve(found[1]); }
    });
    server.on('exit', (code) => reject(new Error('serve exited ' + code + ': ' + err)));
  });
  const token = /export METACATALOG_TOKEN=(\\S+)/.exec(out)[1];
  const response = await fetch(url + '/api/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
    body: JSON.stringify({ query: '{ listAccessTokens(input: {}) { total } }' }),
  });
  const body = await response.json();
  if (body.data?.listAccessTokens?.total !== 1) throw new Error('GraphQL answered ' + JSON.stringify(body));
  if (err !== '') throw new Error('serve wrote on stderr: ' + err);
} finally {
  server.kill('SIGTERM');
}
const metrics = spawnSync(process.execPath, [bin, 'serve', '--db', ':memory:', '--port', '0', '--metrics-port', '0'], { encoding: 'utf8', timeout: 20_000 });
if (metrics.status !== 1 || !metrics.stderr.includes('optional peer dependency that is not installed: npm install prom-client'))
  throw new Error('--metrics-port without prom-client: exit ' + metrics.status + ' ' + metrics.stderr);
console.log('served');
`,
      );
      const out = run(process.execPath, ['serve.mjs'], { timeout: 60_000 });
      if (!out.includes('served')) throw new Error(out);
    },
  );

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
