import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createFetchHandler, type FetchHandler } from '../../../src/http/index';
import { createCatalog, type Catalog } from '../../../src/index';

export const ADMIN = 'urn:li:corpuser:admin';
export const SIGNING_KEY = 'compat-test-signing-key-0123456789abcdef-0123';

/** A catalog and its fetch handler over one adapter, with an admin token. */
export interface CompatHarness {
  catalog: Catalog;
  handler: FetchHandler;
  token: string;
  /** POST /api/graphql as DataHub's clients send it: `{ query, variables }`. */
  graphql(query: string, variables?: Record<string, unknown>, operationName?: string): Promise<GraphQLAnswer>;
  /** Any request under /gms, JSON in and out. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; json: JsonAnswer }>;
  close(): Promise<void>;
}

export interface GraphQLAnswer {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers of every shape
  data?: any;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
  extensions?: Record<string, unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers of every shape
export type JsonAnswer = any;

export const ADAPTERS = ['memory', 'sqlite'] as const;

export async function openHarness(kind: (typeof ADAPTERS)[number]): Promise<CompatHarness> {
  const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'metacatalog-compat-')) : undefined;
  const adapter = dir ? createSqliteAdapter({ filename: join(dir, 'catalog.db') }) : createMemoryAdapter();
  const catalog = createCatalog({ adapter, tokenSigningKey: SIGNING_KEY, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  const handler = createFetchHandler(catalog);
  const token = (await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN })).accessToken;
  const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: JsonAnswer }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await handler(
      new Request(`http://localhost/gms${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }),
    );
    const text = await response.text();
    return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as JsonAnswer) };
  };
  return {
    catalog,
    handler,
    token,
    request,
    async graphql(query, variables, operationName) {
      const { json } = await request('POST', '/api/graphql', {
        query,
        ...(variables ? { variables } : {}),
        ...(operationName ? { operationName } : {}),
      });
      return json as GraphQLAnswer;
    },
    async close() {
      await catalog.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
