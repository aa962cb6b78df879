import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CommandError, UsageError } from './io';
import { parseYaml, stringifyYaml } from './yaml';

/** `~/.metacatalog.yaml`, or the file named by METACATALOG_CONFIG. */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return env.METACATALOG_CONFIG || join(homedir(), '.metacatalog.yaml');
}

/** What `metacatalog init` writes and the commands read. */
export interface CliConfig {
  server?: string;
  token?: string;
}

/** The configuration file, or `{}` when there is none; a file that cannot be read is an error naming it. */
function readConfig(file: string): CliConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CommandError(`cannot read the configuration file ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new CommandError(
      `the configuration file ${file} is not valid YAML: ${((error as Error).message.split('\n')[0] ?? '').replace(/:\s*$/, '')}`,
    );
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CommandError(`the configuration file ${file} must be a mapping with server and token`);
  const config: CliConfig = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== 'server' && key !== 'token')
      throw new CommandError(`the configuration file ${file} has an unknown key "${key}" (known: server, token)`);
    if (typeof value !== 'string') throw new CommandError(`the configuration file ${file}: ${key} must be a string`);
    config[key] = value;
  }
  return config;
}

/** Writes the configuration file with mode 0600 (it holds a token), replacing it atomically. */
export function writeConfig(file: string, config: Required<CliConfig>): void {
  const text = `# metacatalog command-line configuration, written by \`metacatalog init\`. Keep it private: it holds a token.\n${stringifyYaml(config)}`;
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } catch (error) {
    throw new CommandError(`cannot write the configuration file ${file}: ${(error as Error).message}`);
  }
}

/** A server address: http(s), no query; a trailing slash is dropped. */
export function normalizeServer(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${from} must be an http(s) address such as http://localhost:8080/gms, got "${text}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new UsageError(`${from} must be an http(s) address without query such as http://localhost:8080/gms, got "${text}"`);
  }
  return url.href.replace(/\/+$/, '');
}

const DEFAULT_ACTOR = 'urn:li:corpuser:admin';

/** Where a command's catalog is: a local SQLite file or a PostgreSQL database (embedded), or a server. */
export type Connection =
  | { mode: 'embedded'; store: { sqlite: string } | { postgres: string; schema?: string }; actor: string }
  | { mode: 'remote'; server: string; token: string };

/**
 * Chooses the catalog from the options, then the environment, then the configuration file:
 * `--db` (embedded) or `--server` (remote; both at once is a usage error); else METACATALOG_SERVER;
 * else the file's `server`. The token: `--token`, else METACATALOG_TOKEN, else the file's `token`.
 */
export function resolveConnection(
  options: { db?: string; postgres?: string; postgresSchema?: string; server?: string; token?: string; actor?: string },
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const given = (['db', 'postgres', 'server'] as const).filter((name) => options[name] !== undefined);
  if (given.length > 1) throw new UsageError(`give either ${given.map((g) => `--${g}`).join(' or ')}, not both`);
  if (options.postgresSchema !== undefined && options.postgres === undefined)
    throw new UsageError('--postgres-schema goes with --postgres');
  if (options.db !== undefined || options.postgres !== undefined) {
    if (options.db === '') throw new UsageError('--db needs a file name');
    if (options.postgres === '') throw new UsageError('--postgres needs a connection URL');
    if (options.token !== undefined)
      throw new UsageError(`--token is for --server; with --${options.db !== undefined ? 'db' : 'postgres'} the command acts as --actor`);
    const actor = options.actor ?? DEFAULT_ACTOR;
    if (!/^urn:li:corpuser:\S+$/.test(actor)) throw new UsageError(`--actor must be a user URN (urn:li:corpuser:<id>), got "${actor}"`);
    const store =
      options.postgres !== undefined
        ? { postgres: options.postgres, ...(options.postgresSchema !== undefined ? { schema: options.postgresSchema } : {}) }
        : { sqlite: options.db! };
    return { mode: 'embedded', store, actor };
  }
  if (options.actor !== undefined) throw new UsageError('--actor is for --db and --postgres; against a server the token says who acts');
  const file = configFilePath(env);
  let config: CliConfig | undefined;
  const fromFile = () => (config ??= readConfig(file));
  let server: string;
  if (options.server !== undefined) server = normalizeServer(options.server, '--server');
  else if (env.METACATALOG_SERVER) server = normalizeServer(env.METACATALOG_SERVER, 'METACATALOG_SERVER');
  else if (fromFile().server) server = normalizeServer(fromFile().server!, `server in ${file}`);
  else {
    throw new UsageError('no catalog given: pass --db <file> or --server <url> (or set METACATALOG_SERVER, or run metacatalog init)');
  }
  const token = options.token ?? (env.METACATALOG_TOKEN || undefined) ?? fromFile().token;
  if (!token) throw new UsageError(`no access token for ${server}: pass --token, set METACATALOG_TOKEN, or run metacatalog init`);
  return { mode: 'remote', server, token };
}
