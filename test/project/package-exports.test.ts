import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// These tests read the build (dist/): `npm test` builds first.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; import: string }>;
  bin: Record<string, string>;
};
const entries = Object.entries(pkg.exports).filter(([sub]) => sub !== './package.json') as Array<
  [string, { types: string; import: string }]
>;
const registerForbid = pathToFileURL(join(root, 'test/fixtures/register-forbid.mjs')).href;

function importInChild(target: string): { status: number | null; stderr: string } {
  const child = spawnSync(
    process.execPath,
    ['--import', registerForbid, '--input-type=module', '-e', `await import(${JSON.stringify(target)})`],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  return { status: child.status, stderr: child.stderr };
}

const registerHidePeers = fileURLToPath(new URL('../fixtures/register-hide-peers.mjs', import.meta.url));

/** Imports `target` in a child process where the named peers look uninstalled; its exit status and stderr. */
function importWithoutPeers(target: string, peers: readonly string[]): { status: number | null; stderr: string } {
  const child = spawnSync(
    process.execPath,
    ['--import', registerHidePeers, '--input-type=module', '-e', `await import(${JSON.stringify(target)})`],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, METACATALOG_HIDDEN_PEERS: peers.join(',') },
    },
  );
  return { status: child.status, stderr: child.stderr };
}

describe('a missing optional peer', () => {
  it.each([
    ['metacatalog/adapters/sqlite', 'better-sqlite3'],
    ['metacatalog/adapters/memory', 'lunr'],
    ['metacatalog/adapters/postgres', 'pg'],
    ['metacatalog/graphql', 'graphql'],
    ['metacatalog/graphql', '@graphql-tools/schema'],
  ])('%s without %s names the package and the install command', (entry, peer) => {
    const result = importWithoutPeers(entry, [peer]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      `${entry} needs the package ${peer}, an optional peer dependency that is not installed: npm install ${peer}`,
    );
  });

  it('without graphql and @graphql-tools/schema, metacatalog/graphql names both in one install command', () => {
    const result = importWithoutPeers('metacatalog/graphql', ['graphql', '@graphql-tools/schema']);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      'metacatalog/graphql needs the packages graphql, @graphql-tools/schema, optional peer dependencies that are not installed: npm install graphql @graphql-tools/schema',
    );
  });

  it('the root entry needs none of them', () => {
    expect(
      importWithoutPeers('metacatalog', ['better-sqlite3', 'lunr', 'pg', 'graphql', '@graphql-tools', 'prom-client', '@opentelemetry']),
    ).toEqual({
      status: 0,
      stderr: '',
    });
  });

  it('without @opentelemetry/api a catalog works, traces nothing and still measures', () => {
    const script = `
      const { createCatalog } = await import('metacatalog');
      const { createMemoryAdapter } = await import('metacatalog/adapters/memory');
      const { createMetricsHandler } = await import('metacatalog/http');
      const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: ['urn:li:corpuser:a'], jobs: { background: false } });
      await catalog.ready();
      const metrics = createMetricsHandler(catalog, { processMetrics: false });
      await catalog.entities.upsertAspect('urn:li:corpuser:a', 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', 'datasetProperties', { name: 't' });
      const text = await metrics.metrics();
      await catalog.close();
      if (!text.includes('metacatalog_operations_total{operation="upsert"')) throw new Error('no upsert counted: ' + text);
    `;
    const child = spawnSync(process.execPath, ['--import', registerHidePeers, '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, METACATALOG_HIDDEN_PEERS: '@opentelemetry' },
    });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
  });
});

describe('package exports', () => {
  it('names the package metacatalog and maps the entry points of the contract', () => {
    expect(pkg.name).toBe('metacatalog');
    expect(Object.keys(pkg.exports)).toEqual(
      expect.arrayContaining(['.', './adapters/memory', './adapters/sqlite', './adapters/postgres', './graphql', './http', './testing']),
    );
    expect(pkg.bin.metacatalog).toBe('./dist/cli.js');
  });

  // Each entry's declaration file (its `types`) is checked on the packed package, where a TypeScript
  // application compiles against it (test/pack/pack-install.mjs): `npm test` builds the JavaScript only.
  it.each(entries)('%s is built and loads', async (_sub, target) => {
    expect(existsSync(join(root, target.import)), `${target.import} is built`).toBe(true);
    expect(target.types, 'the entry names its declaration file').toBe(target.import.replace(/\.js$/, '.d.ts'));
    const mod = (await import(pathToFileURL(join(root, target.import)).href)) as Record<string, unknown>;
    expect(Object.keys(mod).length).toBeGreaterThan(0);
  });

  it('exports createCatalog, CatalogError, the URN helpers and the privileges from the root', async () => {
    const mod = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
    for (const name of ['createCatalog', 'CatalogError', 'parseUrn', 'formatUrn', 'PRIVILEGES']) expect(mod).toHaveProperty(name);
  });

  it('exports the public API only: adding a runtime name to the root is a decision, made here', async () => {
    const mod = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
    expect(Object.keys(mod).sort()).toEqual(
      [
        'ACCESS_TOKEN_DURATIONS',
        'ACCESS_TOKEN_DURATION_MS',
        'ACCESS_TOKEN_TYPES',
        'CatalogError',
        'DATA_TYPE_URN_PREFIX',
        'DEFAULT_SCROLL_COUNT',
        'ENTITY_TYPE_URN_PREFIX',
        'ERROR_CODES',
        'FILTER_OPERATORS',
        'PRIVILEGES',
        'PRIVILEGE_DESCRIPTIONS',
        'READ_ONLY',
        'VALUE_TYPE_NAMES',
        'analyzeText',
        'composeAdapter',
        'createCatalog',
        'createScanSearchIndex',
        'decodeUrnFromPath',
        'encodeUrnForPath',
        'entityTypeOf',
        'formatFacetNumber',
        'formatUrn',
        'invalidInput',
        'isCatalogError',
        'isPrivilege',
        'isUrn',
        'parseTextQuery',
        'parseUrn',
        'parseYamlDefinitions',
        'timeseriesIndexName',
        'toGraphqlInput',
        'toReadBack',
        'toRestInput',
        'toYamlEntry',
        'urnKey',
        'urnProblem',
      ].sort(),
    );
  });

  it("import 'metacatalog' loads no native module, no lunr and no graphql", () => {
    const result = importInChild('metacatalog');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('the check above can fail: the SQLite entry does load better-sqlite3', () => {
    const result = importInChild('metacatalog/adapters/sqlite');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('forbidden module load: better-sqlite3');
  });

  it('the PostgreSQL entry loads pg (and only that entry does)', () => {
    const result = importInChild('metacatalog/adapters/postgres');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('forbidden module load: pg');
  });

  it('a command that reads no CSV loads no CSV package; the one that reads CSV does (the check can fail)', () => {
    const cli = join(root, pkg.bin.metacatalog!);
    const forbidCsv = pathToFileURL(join(root, 'test/fixtures/forbid-csv.mjs')).href;
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-csv-load-'));
    try {
      const db = join(dir, 'catalog.db');
      const run = (args: string[]) => spawnSync(process.execPath, ['--import', forbidCsv, cli, ...args], { cwd: dir, encoding: 'utf8' });
      const token = run(['tokens', 'create', '--db', db, '--name', 'n', '--actor', 'urn:li:corpuser:a']);
      expect(token.stderr).not.toContain('forbidden module load');
      expect(token.status).toBe(0);
      writeFileSync(join(dir, 'values.csv'), 'urn\n');
      const csv = run(['properties', 'import-values', join(dir, 'values.csv'), '--db', db]);
      expect(csv.stderr).toContain('forbidden module load: csv-parse');
      expect(csv.status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the bin answers --version and refuses an unknown command with exit code 2', () => {
    const cli = join(root, pkg.bin.metacatalog!);
    expect(execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
    const unknown = spawnSync(process.execPath, [cli, 'no-such-command'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown command');
  });
});
