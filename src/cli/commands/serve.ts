import { openCatalog } from '../open-catalog';
import { mkdirSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Catalog } from '../../catalog';
import { repeatLimitedErrorLog } from '../../http/error-log';
import type { RunningServer } from '../../http/server';
import { CommandError, UsageError, type Command, type CommandIo } from '../io';
import { algorithmOfKey, generateSigningKey, loadOrCreateSigningKey, signingKeyFileOf } from '../signing-key';
import { TOKEN_SIGNING_ALGORITHMS, type TokenSigningAlgorithm } from '../../core/tokens';
import { isServeWorker, parseWorkers, superviseWorkers } from '../cluster';
import { runServeWorker } from '../cluster-worker';
import { jsonLinesIo, serviceLog, type LogFormat } from '../service-log';
import { redactedUrl } from '../open-catalog';
import { unresolvedPeers } from '../../adapter/peer';
import { isCatalogError } from '../../errors';
import { GRAPHQL_PEERS } from '../../http/routes/graphql-schema';

const DEFAULT_DB = './data/catalog.db';
const DEFAULT_ADMIN = 'urn:li:corpuser:admin';
const DEFAULT_PORT = 8080;
const DEFAULT_HOST = '127.0.0.1';

export interface ServeOptions {
  /** SQLite file (created with its directory when missing), or `:memory:`. Default `./data/catalog.db`. */
  db?: string;
  /** A PostgreSQL connection URL instead of `db`: several instances may serve one database. */
  postgres?: string;
  /** The schema of the catalog's tables in that database (default: the connection's current schema). */
  postgresSchema?: string;
  /** Hot standbys of that database that searches, aggregations and scrolls are sent to. */
  postgresReplicas?: readonly string[];
  /**
   * The token signing key file (created, mode 0600, when missing). With `postgres` every instance must
   * use the same key: this file, or the METACATALOG_SIGNING_KEY environment variable.
   */
  signingKeyFile?: string;
  /**
   * How new key files are made: HS256 (default, a shared secret), EdDSA or ES256 (a private key; other
   * services verify tokens with the public key at /.well-known/jwks.json). An existing key file keeps its algorithm.
   */
  tokenAlgorithm?: TokenSigningAlgorithm;
  port?: number;
  host?: string;
  /** The super user the bootstrap token acts as. Default `urn:li:corpuser:admin`. */
  admin?: string;
  /** Issue a bootstrap token even though the database is not new (a lost admin token). */
  bootstrapToken?: boolean;
  /** Write one access-log line per request to stdout. Default true. */
  accessLog?: boolean;
  /** How long a stop waits for requests in flight. Default 10 s. */
  shutdownTimeoutMs?: number;
  /** SQLite: `full` (default) keeps acknowledged writes through a power loss; `normal` is faster (docs/adapters.md). */
  durability?: 'full' | 'normal';
  /** Take the actor from `X-Service-Actor` on requests without a token: only behind a trusted front. */
  trustActorHeader?: boolean;
  /** Worker processes behind the port (`metacatalog serve --workers`, src/cli/cluster.ts). Default 1: this process serves. */
  workers?: number;
  /** Serve Prometheus metrics at `/metrics` on this port (a listener of its own). Default: no metrics. */
  metricsPort?: number;
  /** Address of the metrics listener. Default `127.0.0.1`. */
  metricsHost?: string;
  /** Access log and errors as text lines (default) or one JSON object per line. */
  logFormat?: LogFormat;
  /** Admission control: units of work running at once per request class (default 4 per core); 0 turns it off. */
  maxInFlight?: number;
  /** Requests per second per client (token, else address); beyond, 429. Default: no limit. */
  rateLimit?: number;
}

export interface ServeHandle {
  url: string;
  port: number;
  catalog: Catalog;
  server: RunningServer;
  /** `http://host:port/metrics` when metrics are served. */
  metricsUrl?: string;
  /** Graceful stop: answers in flight are finished, then background jobs finish their current batch and the database is closed. */
  stop(): Promise<void>;
}

/**
 * The service on an embedded SQLite file: the signing key beside the database (created once, mode
 * 0600), a bootstrap admin token printed once when the database (or its key) is new, the HTTP routes
 * with an access log on stdout. Used by `metacatalog serve`; the host handles signals.
 */
export async function serve(options: ServeOptions, commandIo: CommandIo): Promise<ServeHandle> {
  const io = options.logFormat === 'json' ? jsonLinesIo(commandIo) : commandIo;
  if (options.postgres !== undefined) return servePostgres(options, options.postgres, io);
  const db = options.db ?? DEFAULT_DB;
  const admin = options.admin ?? DEFAULT_ADMIN;
  const inMemory = db === ':memory:';
  const existing = inMemory ? undefined : statOf(db);
  if (existing && !existing.isFile()) throw new CommandError(`--db ${db} is not a file`);
  const isNewDatabase = inMemory || existing === undefined;
  let key: string;
  let keyCreated: boolean;
  let algorithm: TokenSigningAlgorithm = options.tokenAlgorithm ?? 'HS256';
  if (inMemory) {
    key = generateSigningKey(algorithm);
    keyCreated = true;
  } else {
    mkdirSync(dirname(resolve(db)), { recursive: true, mode: 0o700 });
    const loaded = loadOrCreateSigningKey(signingKeyFileOf(db), options.tokenAlgorithm);
    key = loaded.key;
    algorithm = loaded.algorithm;
    keyCreated = loaded.created;
    if (loaded.created) {
      io.stdout(`metacatalog: created the token signing key ${loaded.file} (mode 0600); keep it with the database, never share it\n`);
      if (!isNewDatabase) io.stdout('metacatalog: the database existed without this key: tokens issued before no longer verify\n');
    }
  }

  const catalog = await openCatalog(
    {
      store: { sqlite: db, ...(options.durability !== undefined ? { durability: options.durability } : {}) },
      superUser: admin,
      tokenSigningKey: key,
      tokenAlgorithm: algorithm,
      backgroundJobs: true,
      label: db,
      ...(options.logFormat === 'json' ? { onError: serviceLog('json', io).backgroundError } : {}),
    },
    io,
  );

  return listen(catalog, options, io, { isNewDatabase, keyCreated, admin, database: db, algorithm });
}

/**
 * The service on a PostgreSQL database that several instances may share: the tables are created (or
 * migrated) by whichever instance starts first; the token signing key must be the same everywhere, so
 * it comes from a file or the environment, never generated per instance unless asked for by a file.
 */
async function servePostgres(options: ServeOptions, url: string, io: CommandIo): Promise<ServeHandle> {
  const admin = options.admin ?? DEFAULT_ADMIN;
  let key: string;
  let keyCreated = false;
  let algorithm: TokenSigningAlgorithm;
  if (options.signingKeyFile !== undefined) {
    const loaded = loadOrCreateSigningKey(options.signingKeyFile, options.tokenAlgorithm);
    key = loaded.key;
    algorithm = loaded.algorithm;
    keyCreated = loaded.created;
    if (loaded.created) {
      io.stdout(
        `metacatalog: created the token signing key ${loaded.file} (mode 0600); give every instance on this database the same key, never share it otherwise\n`,
      );
    }
  } else if (process.env.METACATALOG_SIGNING_KEY) {
    key = process.env.METACATALOG_SIGNING_KEY;
    const held = algorithmOfKey(key.trim());
    if (held === undefined) throw new CommandError('METACATALOG_SIGNING_KEY is a PEM key but not an Ed25519 or P-256 private key');
    if (options.tokenAlgorithm !== undefined && held !== options.tokenAlgorithm) {
      throw new CommandError(`METACATALOG_SIGNING_KEY is a key for ${held}, not for --token-algorithm ${options.tokenAlgorithm}`);
    }
    algorithm = held;
  } else {
    throw new CommandError(
      '--postgres needs the token signing key every instance shares: --signing-key-file <file> or the METACATALOG_SIGNING_KEY environment variable',
    );
  }
  const store = {
    postgres: url,
    ...(options.postgresSchema !== undefined ? { schema: options.postgresSchema } : {}),
    ...(options.postgresReplicas?.length ? { replicas: options.postgresReplicas } : {}),
  };
  const onError = options.logFormat === 'json' ? serviceLog('json', io).backgroundError : undefined;
  const catalog = await openCatalog(
    {
      store,
      superUser: admin,
      tokenSigningKey: key,
      tokenAlgorithm: algorithm,
      backgroundJobs: true,
      label: redactedUrl(url),
      ...(onError ? { onError } : {}),
    },
    io,
  );
  return listen(catalog, options, io, { isNewDatabase: false, keyCreated, admin, database: redactedUrl(url), algorithm });
}

/** Listens, prints the bootstrap token when the database holds none, and hands back the stop. */
async function listen(
  catalog: Catalog,
  options: ServeOptions,
  io: CommandIo,
  state: { isNewDatabase: boolean; keyCreated: boolean; admin: string; database: string; algorithm: TokenSigningAlgorithm },
): Promise<ServeHandle> {
  const { isNewDatabase, keyCreated, admin } = state;
  const [{ startServer }, { startMetricsServer }] = await Promise.all([import('../../http/server'), import('../../http/metrics-server')]);
  const log = serviceLog(options.logFormat ?? 'text', io);
  let server: RunningServer;
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  try {
    // Metrics first: the requests of the API listener are counted from its first one.
    if (options.metricsPort !== undefined) {
      metrics = await startMetricsServer(catalog, { port: options.metricsPort, host: options.metricsHost ?? DEFAULT_HOST });
    }
    server = await startServer(catalog, {
      port: options.port ?? DEFAULT_PORT,
      host: options.host ?? DEFAULT_HOST,
      ...(options.trustActorHeader ? { trustActorHeader: true } : {}),
      ...(options.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: options.shutdownTimeoutMs } : {}),
      ...(options.maxInFlight !== undefined ? { admission: options.maxInFlight === 0 ? false : { maxInFlight: options.maxInFlight } } : {}),
      ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
      ...(options.accessLog === false ? {} : { accessLog: log.access }),
      onError: options.logFormat === 'json' ? log.requestError : repeatLimitedErrorLog((line) => io.stderr(line)),
    });
  } catch (error) {
    await metrics?.close();
    await catalog.close();
    // An optional peer that is not installed (prom-client for --metrics-port): its message names the install command.
    if (isCatalogError(error)) throw new CommandError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    const where =
      metrics === undefined && options.metricsPort !== undefined
        ? `${options.metricsHost ?? DEFAULT_HOST}:${options.metricsPort} (metrics)`
        : `${options.host ?? DEFAULT_HOST}:${options.port ?? DEFAULT_PORT}`;
    throw new CommandError(
      code === 'EADDRINUSE'
        ? `cannot listen on ${where}: the port is in use (pick another with --port)`
        : `cannot listen on ${where}: ${(error as Error).message}`,
    );
  }

  const bootstrap = await catalog.tokens.ensureBootstrapToken({
    actorUrn: admin,
    name: 'bootstrap (metacatalog serve)',
    fresh: isNewDatabase || keyCreated,
    force: options.bootstrapToken === true,
  });
  if (bootstrap) {
    const { accessToken, metadata } = bootstrap;
    const expires = metadata.expiresAt === undefined || metadata.expiresAt === null ? 'never' : new Date(metadata.expiresAt).toISOString();
    io.stdout(
      [
        'metacatalog: ==== bootstrap admin token: shown only now, keep it secret ====',
        `metacatalog: acts as ${admin} (all privileges), expires ${expires}, token id ${metadata.id}`,
        `export METACATALOG_TOKEN=${accessToken}`,
        'metacatalog: =================================================================',
        '',
      ].join('\n'),
    );
  }
  if (options.trustActorHeader) {
    io.stderr(
      'metacatalog: WARNING: --trust-actor-header: any request without a token acts as the user its X-Service-Actor header names; only run this behind a front that authenticates users and sets that header itself\n',
    );
  }
  if (state.algorithm !== 'HS256') {
    io.stdout(
      `metacatalog: tokens are signed with ${state.algorithm}; other services verify them with the keys at ${server.url}/.well-known/jwks.json\n`,
    );
  }
  io.stdout(`metacatalog: listening on ${server.url} (database ${state.database})\n`);
  const absent = unresolvedPeers(GRAPHQL_PEERS);
  if (absent.length) {
    io.stderr(
      `metacatalog: /api/graphql (and the command line's token commands against this server) needs ${absent.join(' and ')}, optional peer dependencies that are not installed: npm install ${absent.join(' ')}\n`,
    );
  }
  if (metrics) io.stdout(`metacatalog: metrics at ${metrics.url}\n`);

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    catalog,
    server,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    stop() {
      stopping ??= (async () => {
        await server.close();
        await metrics?.close();
        await catalog.close();
      })();
      return stopping;
    },
  };
}

function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

const USAGE = `Usage: metacatalog serve [--db file | --postgres url] [--port n] [--host address] [options]

Runs the HTTP service (GraphQL at /api/graphql, the OpenAPI v2 family, /operations; every route also
under /gms) on an embedded SQLite file, or on a PostgreSQL database that several instances may share.

  --db <file>          SQLite file, created with its directory when missing (default ${DEFAULT_DB})
  --postgres <url>     a PostgreSQL connection URL instead (postgres://user:password@host:5432/db);
                       the tables are created by the first instance that starts
  --postgres-schema <name>
                       the schema of the catalog's tables (default: the connection's current schema)
  --postgres-replica <url>
                       a hot standby of that database (repeatable): searches, aggregations and
                       scrolls go to the standbys round-robin, everything else to the primary; one
                       that is down or lags (over 10 s) is skipped until it recovers
  --signing-key-file <file>
                       with --postgres: the token signing key, created (mode 0600) when missing; every
                       instance on one database needs the same key (or set METACATALOG_SIGNING_KEY)
  --token-algorithm <HS256|EdDSA|ES256>
                       how a new signing key is made: HS256 (default) a shared secret; EdDSA or
                       ES256 a private key whose public key is served at /.well-known/jwks.json,
                       so that other services verify tokens without being able to mint them
  --port <n>           port, 0 for any free one (default ${DEFAULT_PORT})
  --host <address>     address to listen on (default ${DEFAULT_HOST}, loopback only)
  --admin <urn>        the super user (default ${DEFAULT_ADMIN})
  --bootstrap-token    print a new bootstrap admin token although the database is not new
  --durability <full|normal>
                       SQLite: full (default) keeps every acknowledged write through a power loss;
                       normal is faster and keeps them through a crash of the process only
  --trust-actor-header take the actor from X-Service-Actor on requests without a token: ONLY behind
                       a trusted front that authenticates users and sets the header itself
  --workers <n|auto>   worker processes behind the one port (default 1; auto: one per core); the
                       primary process only starts, replaces and stops them (docs/deploy.md)
  --quiet              no access log on stdout
  --log-format <text|json>
                       access log (stdout) and errors (stderr) as text lines (default) or one JSON
                       object per line: time, level, route, status, duration, request id, actor
  --metrics-port <n>   serve Prometheus metrics at /metrics on this port, a listener of its own
                       (default: no metrics; docs/operations.md lists them)
  --metrics-host <address>
                       address of the metrics listener (default ${DEFAULT_HOST}, loopback only)
  --max-in-flight <n>  admission control: requests running at once per class (reads, writes,
                       GraphQL weighed by its cost; default 4 per core); one that would wait over
                       0.5 s is answered 503 with Retry-After at once; 0 turns it off
                       (docs/operations.md); /health is never refused
  --rate-limit <n/s>   requests per second per access token (per address without one); beyond,
                       429 RATE_LIMITED with Retry-After and RateLimit-* headers (default: none)
  --help               this text

The token signing key is kept beside the database in <file>.signing-key (mode 0600; serve refuses a
key file that others may read): an HS256 secret, or a PEM private key with --token-algorithm EdDSA or
ES256. An existing key file keeps its algorithm. At the first start (when the database holds no access token) a bootstrap admin token is printed once.
SIGINT or SIGTERM stops gracefully: answers in flight are finished, background jobs finish their
current batch, the database is closed.
`;

function parsePort(text: string | undefined, option = '--port'): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) throw new UsageError(`${option} must be a number from 0 to 65535, got "${text}"`);
  return Number(text);
}

function optionsFrom(argv: readonly string[]): ServeOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        db: { type: 'string' },
        postgres: { type: 'string' },
        'postgres-schema': { type: 'string' },
        'postgres-replica': { type: 'string', multiple: true },
        'signing-key-file': { type: 'string' },
        'token-algorithm': { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        admin: { type: 'string' },
        'bootstrap-token': { type: 'boolean' },
        durability: { type: 'string' },
        'trust-actor-header': { type: 'boolean' },
        workers: { type: 'string' },
        quiet: { type: 'boolean' },
        'log-format': { type: 'string' },
        'metrics-port': { type: 'string' },
        'metrics-host': { type: 'string' },
        'max-in-flight': { type: 'string' },
        'rate-limit': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  if (v.admin !== undefined && !/^urn:li:corpuser:\S+$/.test(v.admin))
    throw new UsageError(`--admin must be a user URN (urn:li:corpuser:<id>), got "${v.admin}"`);
  if (v.db === '') throw new UsageError('--db needs a file name');
  if (v.postgres !== undefined && v.db !== undefined) throw new UsageError('--db and --postgres exclude each other');
  if (v.postgres === '') throw new UsageError('--postgres needs a connection URL');
  if ((v['postgres-schema'] !== undefined || v['signing-key-file'] !== undefined) && v.postgres === undefined) {
    throw new UsageError('--postgres-schema and --signing-key-file go with --postgres (with --db the key lives beside the file)');
  }
  const replicas = v['postgres-replica'] ?? [];
  if (replicas.length && v.postgres === undefined) throw new UsageError('--postgres-replica goes with --postgres');
  if (replicas.some((r) => r === '')) throw new UsageError('--postgres-replica needs a connection URL');
  if (v['signing-key-file'] === '') throw new UsageError('--signing-key-file needs a file name');
  const port = parsePort(v.port);
  const metricsPort = parsePort(v['metrics-port'], '--metrics-port');
  if (v['metrics-host'] !== undefined && metricsPort === undefined) throw new UsageError('--metrics-host goes with --metrics-port');
  if (v['log-format'] !== undefined && v['log-format'] !== 'text' && v['log-format'] !== 'json')
    throw new UsageError(`--log-format must be text or json, got "${v['log-format']}"`);
  const tokenAlgorithm = v['token-algorithm'];
  if (tokenAlgorithm !== undefined && !(TOKEN_SIGNING_ALGORITHMS as readonly string[]).includes(tokenAlgorithm)) {
    throw new UsageError(`--token-algorithm must be one of ${TOKEN_SIGNING_ALGORITHMS.join(', ')}, got "${tokenAlgorithm}"`);
  }
  if (v.durability !== undefined && v.durability !== 'full' && v.durability !== 'normal')
    throw new UsageError(`--durability must be full or normal, got "${v.durability}"`);
  if (v.durability !== undefined && v.postgres !== undefined)
    throw new UsageError('--durability is for the SQLite file (PostgreSQL keeps its own settings)');
  const maxInFlight = v['max-in-flight'];
  if (maxInFlight !== undefined && !/^\d{1,6}$/.test(maxInFlight))
    throw new UsageError(`--max-in-flight must be a whole number (0 turns admission control off), got "${maxInFlight}"`);
  const rateLimit = v['rate-limit'];
  const rate = rateLimit === undefined ? undefined : /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(rateLimit);
  if (rate !== undefined && (rate === null || Number(rate[1]) <= 0))
    throw new UsageError(`--rate-limit must be requests per second, e.g. 50/s, got "${rateLimit}"`);
  const workers = parseWorkers(v.workers);
  if (workers !== undefined && workers > 1 && v.db === ':memory:')
    throw new UsageError('--workers needs a file or --postgres: each worker would have its own :memory: database');
  return {
    ...(workers !== undefined ? { workers } : {}),
    ...(v.db !== undefined ? { db: v.db } : {}),
    ...(v.postgres !== undefined ? { postgres: v.postgres } : {}),
    ...(v['postgres-schema'] !== undefined ? { postgresSchema: v['postgres-schema'] } : {}),
    ...(replicas.length ? { postgresReplicas: replicas } : {}),
    ...(v['signing-key-file'] !== undefined ? { signingKeyFile: v['signing-key-file'] } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(tokenAlgorithm !== undefined ? { tokenAlgorithm: tokenAlgorithm as TokenSigningAlgorithm } : {}),
    ...(v.host !== undefined ? { host: v.host } : {}),
    ...(v.admin !== undefined ? { admin: v.admin } : {}),
    ...(v['bootstrap-token'] ? { bootstrapToken: true } : {}),
    ...(v.quiet ? { accessLog: false } : {}),
    ...(v.durability === 'full' || v.durability === 'normal' ? { durability: v.durability } : {}),
    ...(v['trust-actor-header'] ? { trustActorHeader: true } : {}),
    ...(metricsPort !== undefined ? { metricsPort } : {}),
    ...(v['metrics-host'] !== undefined ? { metricsHost: v['metrics-host'] } : {}),
    ...(v['log-format'] === 'json' || v['log-format'] === 'text' ? { logFormat: v['log-format'] } : {}),
    ...(maxInFlight !== undefined ? { maxInFlight: Number(maxInFlight) } : {}),
    ...(rate ? { rateLimit: Number(rate[1]) } : {}),
  };
}

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once (code 130). */
function firstStopSignal(io: CommandIo): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        io.stderr(`metacatalog: ${signal} again: stopping at once\n`);
        process.exit(130);
      }
      received = true;
      resolveSignal(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the HTTP service on an embedded SQLite file or a shared PostgreSQL database',
  usage: USAGE,
  async run(argv, commandIo) {
    const options = optionsFrom(argv);
    if (options === 'help') {
      commandIo.stdout(USAGE);
      return 0;
    }
    const io = options.logFormat === 'json' ? jsonLinesIo(commandIo) : commandIo;
    if (isServeWorker()) return runServeWorker(options, io, serve);
    if ((options.workers ?? 1) > 1) return superviseWorkers(options.workers!, io, { args: ['serve', ...argv] });
    const stopSignal = firstStopSignal(io);
    const handle = await serve(options, io);
    const signal = await stopSignal;
    io.stdout(`metacatalog: ${signal}: finishing ${handle.server.inFlight()} request(s) in flight and the current background batch\n`);
    await handle.stop();
    io.stdout('metacatalog: stopped\n');
    return 0;
  },
};
