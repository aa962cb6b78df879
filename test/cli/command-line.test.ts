import { once } from 'node:events';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createCatalog } from '../../src/index';
import {
  ADMIN,
  cliEnv,
  EXAMPLE_YAML,
  HAS_SCRIPT,
  removeTempDirs,
  requireBuiltCli,
  runCli,
  runCliOnTerminal,
  serveInProcess,
  tempDir,
} from './helpers';

// Each test runs the CLI as a child process many times (about half a second each, more on a busy machine).
vi.setConfig({ testTimeout: 180_000 });

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

const COMMANDS = [
  'init',
  'properties',
  'properties upsert',
  'properties get',
  'properties list',
  'delete',
  'tokens',
  'tokens create',
  'tokens list',
  'tokens revoke',
  'index-sizes',
  'truncate-timeseries',
  'system-update',
];

describe('help and usage errors', () => {
  it('--help of every command prints its usage and exits 0', async () => {
    for (const command of COMMANDS) {
      const result = await runCli([...command.split(' '), '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toMatch(new RegExp(`^Usage: metacatalog ${command} `));
      expect(result.stderr, command).toBe('');
    }
    // The bin itself, as a user runs it (the other cases call the CLI's main in this process).
    const top = await runCli(['--help'], { spawn: true });
    expect(top.code).toBe(0);
    for (const command of ['serve', 'init', 'properties', 'delete', 'tokens', 'index-sizes', 'truncate-timeseries', 'system-update']) {
      expect(top.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
  });

  it('usage errors exit 2 with one line on stderr (JSON with --json)', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['properties', 'upsert', '--db', 'x.db'],
        'metacatalog properties upsert: -f <file.yaml> is required (see metacatalog properties upsert --help)\n',
      ],
      [['properties', 'get'], 'metacatalog properties get: --urn is required (see metacatalog properties get --help)\n'],
      [
        ['properties', 'list'],
        'metacatalog properties list: no catalog given: pass --db <file> or --server <url> (or set METACATALOG_SERVER, or run metacatalog init) (see metacatalog properties list --help)\n',
      ],
      [
        ['properties', 'list', '--db', 'a.db', '--server', 'http://localhost:1/gms'],
        'metacatalog properties list: give either --db or --server, not both (see metacatalog properties list --help)\n',
      ],
      [
        ['properties', 'list', '--server', 'http://localhost:1/gms'],
        'metacatalog properties list: no access token for http://localhost:1/gms: pass --token, set METACATALOG_TOKEN, or run metacatalog init (see metacatalog properties list --help)\n',
      ],
      [
        ['properties', 'list', '--server', 'localhost:8080'],
        'metacatalog properties list: --server must be an http(s) address without query such as http://localhost:8080/gms, got "localhost:8080" (see metacatalog properties list --help)\n',
      ],
      [
        ['properties', 'list', '--db', 'a.db', '--token', 't'],
        'metacatalog properties list: --token is for --server; with --db the command acts as --actor (see metacatalog properties list --help)\n',
      ],
      [
        ['delete', '--urn', 'not a name', '--db', 'a.db'],
        'metacatalog delete: --urn must be a structured property URN (urn:li:structuredProperty:<name>) or its name, got "not a name" (see metacatalog delete --help)\n',
      ],
      [
        ['restore', '--urn', 'urn:li:', '--db', 'a.db'],
        'metacatalog restore: --urn must be a URN (urn:li:<type>:<key>) or a structured property name, got "urn:li:" (see metacatalog restore --help)\n',
      ],
      [
        ['properties', 'get', '--urn', 'urn:li:dataset:x', '--db', 'a.db'],
        'metacatalog properties get: --urn must be a structured property URN (urn:li:structuredProperty:<name>) or its name, got "urn:li:dataset:x" (see metacatalog properties get --help)\n',
      ],
      [['properties', 'frobnicate'], 'metacatalog properties: unknown command "frobnicate" (see metacatalog properties --help)\n'],
      [['tokens'], 'metacatalog tokens: a command is needed: create, list, revoke (see metacatalog tokens --help)\n'],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(args);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr });
    }
    const unknown = await runCli(['properties', 'list', '--colour', 'red', '--db', 'a.db']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^metacatalog properties list: Unknown option '--colour'.*\(see metacatalog properties list --help\)\n$/,
    );
    const json = await runCli(['properties', 'get', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'USAGE', message: '--urn is required', exitCode: 2 } });
  });

  it('a missing database file is an error for commands that only read (exit 1), and is created by upsert', async () => {
    const db = join(tempDir(), 'new', 'catalog.db');
    const read = await runCli(['properties', 'list', '--db', db], { spawn: true });
    expect(read).toMatchObject({
      code: 1,
      stderr: `metacatalog properties list: there is no database at ${db} (check --db; properties upsert and tokens create make a new one)\n`,
    });
    expect((await runCli(['properties', 'upsert', '-f', EXAMPLE_YAML, '--db', db], { spawn: true })).code).toBe(0);
    expect((await runCli(['properties', 'list', '--db', db], { spawn: true })).stdout.split('\n').filter(Boolean)).toHaveLength(3);
  });
});

describe('reaching a server', () => {
  it('takes the server and token from the environment, then from the file metacatalog init writes', async () => {
    const server = await serveInProcess();
    try {
      const env = cliEnv({ METACATALOG_SERVER: server.url, METACATALOG_TOKEN: server.token });
      const upserted = await runCli(['properties', 'upsert', '-f', EXAMPLE_YAML], { env, spawn: true });
      expect(upserted).toMatchObject({ code: 0, stderr: '' });
      expect(upserted.stdout).toContain(`Created structured property ${RETENTION}`);

      const configEnv = cliEnv();
      const config = configEnv.METACATALOG_CONFIG!;
      const offTerminal = await runCli(['init', '--server', server.url], { env: configEnv });
      expect(offTerminal).toMatchObject({
        code: 2,
        stderr: 'metacatalog init: --token is required when not on a terminal (see metacatalog init --help)\n',
      });
      const init = await runCli(['init', '--server', `${server.url}/`, '--token', server.token], { env: configEnv });
      expect(init).toMatchObject({ code: 0, stdout: `Wrote ${config} (server ${server.url})\n` });
      expect(statSync(config).mode & 0o777).toBe(0o600);
      expect(parseYaml(readFileSync(config, 'utf8'))).toEqual({ server: server.url, token: server.token });
      const listed = await runCli(['properties', 'list'], { env: configEnv });
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(listed.stdout).toContain(RETENTION);

      const overwrite = await runCli(['init', '--server', server.url, '--token', 'other'], { env: configEnv });
      expect(overwrite).toMatchObject({ code: 1, stderr: `metacatalog init: ${config} exists; pass --force to replace it\n` });
      expect((await runCli(['init', '--server', server.url, '--token', 'not-a-token', '--force'], { env: configEnv })).code).toBe(0);
      // Options and variables come before the file.
      const badToken = await runCli(['properties', 'list'], { env: configEnv });
      expect(badToken.code).toBe(1);
      expect(badToken.stderr).toBe('metacatalog properties list: the access token is not a well-formed JWT\n');
      expect((await runCli(['properties', 'list', '--token', server.token], { env: configEnv })).code).toBe(0);
      expect((await runCli(['properties', 'list'], { env: { ...configEnv, METACATALOG_TOKEN: server.token } })).code).toBe(0);

      // A token the server does not know.
      const [header, claims] = server.token.split('.');
      const forged = await runCli(['properties', 'list', '--server', server.url, '--token', `${header}.${claims}.AAAA`]);
      expect(forged.code).toBe(1);
      expect(forged.stderr).toMatch(/^metacatalog properties list: .+\n$/);
      const forgedJson = await runCli(['properties', 'list', '--server', server.url, '--token', `${header}.${claims}.AAAA`, '--json']);
      expect(JSON.parse(forgedJson.stderr).error.code).toBe('UNAUTHENTICATED');
    } finally {
      await server.stop();
    }
  });

  it('a server that does not answer is an error naming it (exit 1)', async () => {
    const token = `${Buffer.from('{}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'urn:li:corpuser:admin' })).toString('base64url')}.x`;
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    probe.close();
    await once(probe, 'close');
    const result = await runCli(['properties', 'list', '--server', `http://127.0.0.1:${port}/gms`, '--token', token]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`metacatalog properties list: cannot reach http://127.0.0.1:${port}/gms: ECONNREFUSED\n`);
  });
});

describe.runIf(HAS_SCRIPT)('on a terminal', () => {
  it('hard delete and truncation ask first; "n" changes nothing (exit 1), "y" goes ahead', async () => {
    const db = join(tempDir(), 'tty.db');
    const env = cliEnv();
    expect((await runCli(['properties', 'upsert', '-f', EXAMPLE_YAML, '--db', db])).code).toBe(0);

    const declined = await runCliOnTerminal(['delete', '--urn', RETENTION, '--hard', '--db', db], 'n', env);
    expect(declined.code).toBe(1);
    expect(declined.stdout).toContain(`Hard-delete ${RETENTION} and remove its values from 0 entities? This cannot be undone. [y/N]`);
    expect(declined.stdout).toContain('Not confirmed; nothing was deleted');
    expect((await runCli(['properties', 'get', '--urn', RETENTION, '--db', db])).code).toBe(0);

    const confirmed = await runCliOnTerminal(['delete', '--urn', RETENTION, '--hard', '--db', db], 'y', env);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain(
      `Hard-deleted structured property ${RETENTION}; the background clean-up will remove its values from 0 entities`,
    );
    expect((await runCli(['properties', 'get', '--urn', RETENTION, '--db', db])).code).toBe(1);

    const truncate = await runCliOnTerminal(
      ['truncate-timeseries', '--entity-type', 'dataset', '--aspect', 'operation', '--older-than', '2w', '--db', db],
      'n',
      env,
    );
    expect(truncate.code).toBe(1);
    expect(truncate.stdout).toContain('Delete 0 out of 0 rows (0.00%).');
    expect(truncate.stdout).toContain('Delete these rows? This cannot be undone. [y/N]');
  });

  it('a truncation draws its progress once confirmed', async () => {
    const db = join(tempDir(), 'truncate.db');
    const catalog = createCatalog({ adapter: createSqliteAdapter({ filename: db }), superUsers: [ADMIN], jobs: { background: false } });
    const old = Date.now() - 10 * 86_400_000;
    await catalog.timeseries.append(
      ADMIN,
      'urn:li:dataset:(urn:li:dataPlatform:hive,tty.t,PROD)',
      'operation',
      Array.from({ length: 10 }, (_, i) => ({ timestampMillis: old + i, operationType: 'INSERT' })),
    );
    await catalog.close();
    const result = await runCliOnTerminal(
      ['truncate-timeseries', '--entity-type', 'dataset', '--aspect', 'operation', '--older-than', '1d', '--batch-size', '3', '--db', db],
      'y',
      cliEnv(),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Deleting rows \[#{30}\] 100% 10\/10/);
  });

  it('system-update draws a progress bar', async () => {
    const db = join(tempDir(), 'bar.db');
    expect((await runCli(['properties', 'upsert', '-f', EXAMPLE_YAML, '--db', db])).code).toBe(0);
    const result = await runCliOnTerminal(['system-update', '--reindex', '--db', db], '', cliEnv());
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Reindexing \[#{30}\] 100% 3\/3/);
    expect(result.stdout).toContain('Rebuilt the search documents of 3 entities');
  });

  it('init asks for what is not given', async () => {
    const env = cliEnv();
    const file = env.METACATALOG_CONFIG!;
    writeFileSync(file, 'server: http://old.example/gms\ntoken: old\n');
    const result = await runCliOnTerminal(['init', '--server', 'http://localhost:8080/gms', '--token', 'abc'], 'y', env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${file} exists. Replace it? [y/N]`);
    expect(parseYaml(readFileSync(file, 'utf8'))).toEqual({ server: 'http://localhost:8080/gms', token: 'abc' });
  });
});
