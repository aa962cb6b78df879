import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { startServer, type AccessLogEntry, type HttpErrorReport, type RunningServer, type ServerOptions } from '../../src/http/index';
import { createCatalog, type Catalog, type CatalogOptions } from '../../src/index';

export const ADMIN = 'urn:li:corpuser:admin';
export const EDITOR = 'urn:li:corpuser:editor';
export const READER = 'urn:li:corpuser:reader';
export const SIGNING_KEY = 'http-test-signing-key-0123456789abcdef-0123';
export const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';

export interface TestServer {
  catalog: Catalog;
  server: RunningServer;
  /** Base URL, e.g. http://127.0.0.1:54321 */
  url: string;
  accessLog: AccessLogEntry[];
  errors: Array<{ error: unknown; report: HttpErrorReport }>;
  /** A real access token acting as `actor` (created by the admin). */
  tokenFor(actor: string): Promise<string>;
  adminToken: string;
  /** Moves the catalog clock (token expiry). */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** A real server on an ephemeral loopback port over a catalog on a fresh SQLite file. */
export async function startTestServer(options: { http?: ServerOptions; catalog?: Partial<CatalogOptions> } = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-http-'));
  let offset = 0;
  const catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: join(dir, 'catalog.db') }),
    tokenSigningKey: SIGNING_KEY,
    superUsers: [ADMIN],
    policies: [
      { name: 'editors', actors: [EDITOR], privileges: ['EDIT_ENTITY', 'EDIT_ENTITY_PROPERTIES', 'GENERATE_PERSONAL_ACCESS_TOKENS'] },
    ],
    clock: () => Date.now() + offset,
    jobs: { background: false },
    ...options.catalog,
  });
  const accessLog: AccessLogEntry[] = [];
  const errors: Array<{ error: unknown; report: HttpErrorReport }> = [];
  const server = await startServer(catalog, {
    port: 0,
    host: '127.0.0.1',
    accessLog: (entry) => accessLog.push(entry),
    onError: (error, report) => errors.push({ error, report }),
    ...options.http,
  });
  const adminToken = (await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN })).accessToken;
  return {
    catalog,
    server,
    url: server.url,
    accessLog,
    errors,
    adminToken,
    async tokenFor(actor) {
      const created = await catalog.tokens.create(ADMIN, {
        type: 'PERSONAL',
        actorUrn: actor,
        duration: 'ONE_HOUR',
        name: `test ${actor}`,
      });
      return created.accessToken;
    },
    advance(ms) {
      offset += ms;
    },
    async close() {
      const closing = server.close();
      // The test's requests are answered: its idle keep-alive connections need not wait out the stop's
      // grace for a request already on its way (1 s; test/http/pressure.test.ts tests the stop itself).
      server.server.closeIdleConnections();
      await closing;
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (a string body is not JSON-encoded). */
  rawBody?: string | Uint8Array<ArrayBuffer>;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers of every shape
  json: any;
}

export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined && options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export const enc = encodeURIComponent;
