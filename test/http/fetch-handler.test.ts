import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createFetchHandler, type AccessLogEntry, type FetchHandler } from '../../src/http/index';
import { createCatalog, type Catalog } from '../../src/index';
import { ADMIN, DATASET, EDITOR, enc, SIGNING_KEY } from './helpers';

// The fetch handler shares the router with the node listener; these check what the adapter itself does.
let catalog: Catalog;
let handler: FetchHandler;
let mounted: FetchHandler;
let token: string;
const log: AccessLogEntry[] = [];
const WRITE = `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProperties`;

beforeAll(async () => {
  catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: ':memory:' }),
    tokenSigningKey: SIGNING_KEY,
    superUsers: [ADMIN],
    policies: [{ actors: [EDITOR], privileges: ['EDIT_ENTITY'] }],
    jobs: { background: false },
  });
  handler = createFetchHandler(catalog, { maxBodyBytes: 1000, accessLog: (e) => log.push(e) });
  mounted = createFetchHandler(catalog, { basePath: '/catalog' });
  token = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: EDITOR, duration: 'ONE_HOUR', name: 'fetch' })).accessToken;
});
afterAll(() => catalog.close());

function streamOf(parts: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    pull(controller) {
      const next = parts.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(encoder.encode(next));
    },
  });
}

describe('createFetchHandler', () => {
  it('answers a standard Request with a standard Response, and logs it', async () => {
    const response = await handler(
      new Request(`http://localhost/gms${WRITE}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'fetched' }),
      }),
    );
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ urn: DATASET, aspects: { datasetProperties: { value: { name: 'fetched' } } } });
    expect(log.at(-1)).toMatchObject({ method: 'POST', status: 200, actorUrn: EDITOR, requestBytes: 18 });
  });

  it('the answer may be read more than once (text, then json), and its body streamed', async () => {
    const response = await handler(
      new Request(`http://localhost/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers: { authorization: `Bearer ${token}` } }),
    );
    const text = await response.text();
    expect(await response.json()).toEqual(JSON.parse(text));
    expect(new TextDecoder().decode(await response.arrayBuffer())).toBe(text);
    const streamed = await handler(
      new Request(`http://localhost/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(await new Response(streamed.body).text()).toBe(text);
  });

  it('a streamed body over the limit → 413 without reading the rest, nothing written', async () => {
    const response = await handler(
      new Request(
        `http://localhost/openapi/v2/entity/dataset/${enc('urn:li:dataset:(urn:li:dataPlatform:hive,streamed,PROD)')}/datasetProperties`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: streamOf(['{"name":"streamed","description":"', 'x'.repeat(600), 'x'.repeat(600), '"}']),
          duplex: 'half',
        } as RequestInit,
      ),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await catalog.entities.get(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,streamed,PROD)')).toBeUndefined();
  });

  it('a request whose signal is aborted before its call makes no call', async () => {
    const controller = new AbortController();
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,aborted,PROD)';
    const request = new Request(`http://localhost/openapi/v2/entity/dataset/${enc(urn)}/datasetProperties`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'aborted' }),
      signal: controller.signal,
    });
    controller.abort();
    const response = await handler(request);
    expect(response.status).toBe(499);
    expect(await catalog.entities.get(ADMIN, urn)).toBeUndefined();
  });

  it('serves the routes under basePath (and basePath/gms) only', async () => {
    const headers = { authorization: `Bearer ${token}` };
    expect((await mounted(new Request(`http://localhost/catalog/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers }))).status).toBe(
      200,
    );
    expect((await mounted(new Request(`http://localhost/catalog/gms/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers }))).status).toBe(
      200,
    );
    const outside = await mounted(new Request(`http://localhost/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers }));
    expect(outside.status).toBe(404);
    expect(() => createFetchHandler(catalog, { basePath: 'catalog/' })).toThrow(/basePath/);
    expect(() => createFetchHandler(catalog, { maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});
