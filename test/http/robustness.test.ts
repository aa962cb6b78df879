import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, DATASET, EDITOR, enc, startTestServer, type TestServer } from './helpers';

const LIMIT = 4096;
const WRITE = `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProperties`;

let t: TestServer;
let editor: string;

beforeAll(async () => {
  t = await startTestServer({ http: { maxBodyBytes: LIMIT } });
  editor = await t.tokenFor(EDITOR);
});
afterAll(() => t.close());

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('request bodies', () => {
  it('a body over the limit (declared by Content-Length) → 413, nothing written', async () => {
    const r = await call(t.url, 'POST', WRITE, { token: editor, body: { name: 'big', description: 'x'.repeat(LIMIT) } });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(r.headers.get('connection')).toBe('close');
    expect(await t.catalog.entities.get(ADMIN, DATASET)).toBeUndefined();
  });

  it('a chunked body that grows over the limit → 413, nothing written', async () => {
    const url = new URL(t.url);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: WRITE,
      headers: { authorization: `Bearer ${editor}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    const answered = once(req, 'response');
    req.write(`{"name":"chunked","description":"`);
    for (let i = 0; i < 8; i++) req.write('y'.repeat(1024));
    req.end('"}');
    const [response] = (await answered) as [import('node:http').IncomingMessage];
    let text = '';
    for await (const chunk of response) text += String(chunk);
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(text).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await t.catalog.entities.get(ADMIN, DATASET)).toBeUndefined();
  });

  it('a wrong or missing content type → 415 naming the one the route takes', async () => {
    const text = await call(t.url, 'POST', WRITE, { token: editor, rawBody: '{"name":"x"}', contentType: 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(text.json.error.message).toContain('"application/json"');
    const none = await call(t.url, 'POST', WRITE, { token: editor, rawBody: new TextEncoder().encode('{"name":"x"}'), contentType: null });
    expect(none.status).toBe(415);
    const latin1 = await call(t.url, 'POST', WRITE, {
      token: editor,
      rawBody: '{"name":"x"}',
      contentType: 'application/json; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
    const utf8 = await call(t.url, 'POST', WRITE, {
      token: editor,
      body: { name: 'utf8' },
      contentType: 'application/json; charset=UTF-8',
    });
    expect(utf8.status).toBe(200);
  });

  it('malformed JSON → 400 naming line, column and position', async () => {
    const r = await call(t.url, 'POST', WRITE, { token: editor, rawBody: '{\n  "name": "x",\n  "description": tru\n}' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INVALID_INPUT');
    expect(r.json.error.message).toBe('malformed JSON at line 3, column 21 (position 37): expected "true", found "\\n"');
    const trailing = await call(t.url, 'POST', WRITE, { token: editor, rawBody: '{"name":"x",}' });
    expect(trailing.json.error.message).toContain('(position 12)');
    const cut = await call(t.url, 'POST', WRITE, { token: editor, rawBody: '{"name": ' });
    expect(cut.json.error.message).toContain('position 9): expected a JSON value, found the end of the body');
    const badUtf8 = await call(t.url, 'POST', WRITE, { token: editor, rawBody: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]) });
    expect(badUtf8.status).toBe(400);
    expect(badUtf8.json.error.message).toContain('UTF-8');
  });

  it('bodies nested deeper than 64 levels → 400, also when they are too deep to scan', async () => {
    const big = await startTestServer({ http: { maxBodyBytes: 4 * 1024 * 1024 } });
    try {
      const token = await big.tokenFor(EDITOR);
      const deep = await call(big.url, 'POST', WRITE, { token, rawBody: `{"name":${'['.repeat(65)}${']'.repeat(65)}}` });
      expect(deep.status).toBe(400);
      expect(deep.json.error.message).toBe('the body nests arrays and objects more than 64 levels deep');
      const unclosed = await call(big.url, 'POST', WRITE, { token, rawBody: '['.repeat(1_000_000) });
      expect(unclosed.status).toBe(400);
      expect(unclosed.json.error.message).toMatch(
        /^malformed JSON at line 1, column \d+ \(position \d+\): expected at most 64 levels of nesting/,
      );
      const fine = await call(big.url, 'POST', WRITE, { token, body: { name: 'x', customProperties: { a: 'b' } } });
      expect(fine.status).toBe(200);
    } finally {
      await big.close();
    }
  });

  it('a route that needs a body and gets none → 400', async () => {
    const r = await call(t.url, 'POST', WRITE, { token: editor });
    expect(r.status).toBe(400);
    expect(r.json.error.details).toEqual([{ path: 'body', message: 'this route needs a JSON body' }]);
  });
});

describe('routes and methods', () => {
  it('an unknown route → 404', async () => {
    for (const path of ['/openapi/v4/entity/dataset', '/gms/gms/openapi/v2/api-docs', '/api', '/openapi/v2/entity']) {
      const r = await call(t.url, 'GET', path, { token: editor });
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
  });

  it('a known route with another method → 405 with Allow', async () => {
    const put = await call(t.url, 'PUT', WRITE, { token: editor, body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST, DELETE');
    const post = await call(t.url, 'POST', '/openapi/v2/entity/dataset', { token: editor, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const docs = await call(t.url, 'DELETE', '/gms/openapi/v2/api-docs');
    expect(docs.status).toBe(405);
    expect(docs.headers.get('allow')).toBe('GET, HEAD');
  });

  it('URNs in paths are percent-decoded exactly once', async () => {
    // A key that itself contains "%20" and "/": sent as %2520 and %2F.
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:s3,bucket/disk%20usage,PROD)';
    const path = `/openapi/v2/entity/dataset/${enc(urn)}/datasetProperties`;
    expect(path).toContain('%2520');
    const written = await call(t.url, 'POST', path, { token: editor, body: { name: 'usage' } });
    expect(written.status).toBe(200);
    expect(written.json.urn).toBe(urn);
    expect((await t.catalog.entities.get(ADMIN, urn))?.aspects.datasetProperties?.value).toEqual({ name: 'usage' });
    expect(await t.catalog.entities.get(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:s3,bucket/disk usage,PROD)')).toBeUndefined();
    // Parentheses, colons and commas may also come unencoded.
    const raw = await call(t.url, 'GET', `/openapi/v2/entity/dataset/${urn.replace('%', '%25').replace('/', '%2F')}`, { token: editor });
    expect(raw.status).toBe(200);
    const malformed = await call(t.url, 'GET', '/openapi/v2/entity/dataset/urn%3Ali%3Adataset%3A%E0%A4%A', { token: editor });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.message).toContain('malformed percent-escape');
  });
});

describe('failures, logs and disconnects', () => {
  it('echoes a well-formed X-Request-Id and makes one up otherwise', async () => {
    const given = await call(t.url, 'GET', '/health', { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const made = await call(t.url, 'GET', '/health', { headers: { 'x-request-id': 'no spaces <allowed>' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an unexpected failure is 500 INTERNAL with the request id only: no stack, no message, reported to onError', async () => {
    const broken = await startTestServer({ http: { trustActorHeader: true } });
    await broken.catalog.close();
    try {
      const r = await call(broken.url, 'GET', `/openapi/v2/entity/dataset/${enc(DATASET)}`, { headers: { 'x-service-actor': ADMIN } });
      expect(r.status).toBe(500);
      expect(r.json.error.code).toBe('INTERNAL');
      const requestId = r.headers.get('x-request-id')!;
      expect(r.json.error.message).toBe(`Internal error (request id ${requestId}); the server's log has the details`);
      expect(r.text).not.toMatch(/ at |\.ts:|\.js:|sqlite|database/i);
      expect(broken.errors).toHaveLength(1);
      expect(broken.errors[0]!.report).toMatchObject({ requestId, method: 'GET', where: 'http' });
      expect(broken.errors[0]!.error).toBeInstanceOf(Error);
    } finally {
      await broken.server.close();
    }
  });

  it('the access log has one entry per request and never a token, not even one sent in the query or the path', async () => {
    const token = await t.tokenFor(EDITOR);
    const before = t.accessLog.length;
    await call(t.url, 'GET', `/openapi/v2/entity/dataset/${enc(DATASET)}?access_token=${token}&count=1`, { token });
    await call(t.url, 'GET', `/openapi/v2/entity/dataset/${token}`, { token });
    await call(t.url, 'GET', `/gms/openapi/v2/entity/dataset?token=${encodeURIComponent(token)}`, { token: `${token}x` });
    await until(() => t.accessLog.length >= before + 3, 'three access-log entries');
    const entries = t.accessLog.slice(before);
    const text = JSON.stringify(entries);
    const signature = token.split('.')[2]!;
    expect(text).not.toContain(signature);
    expect(text).not.toContain(token.split('.')[1]!);
    expect(entries[0]).toMatchObject({ method: 'GET', status: 200, actorUrn: EDITOR });
    expect(entries[0]!.path).toContain('access_token=[redacted]&count=1');
    expect(entries[1]!.path).toBe('/openapi/v2/entity/dataset/[redacted-token]');
    expect(entries[2]).toMatchObject({ status: 401, errorCode: 'UNAUTHENTICATED' });
    expect(entries[2]!.actorUrn).toBeUndefined();
    for (const entry of entries) {
      expect(entry.requestId).toBeTruthy();
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('a client that disconnects mid-body leaves no write behind, and the server keeps serving', async () => {
    const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,partial.upload,PROD)';
    const path = `/openapi/v2/entity/dataset/${enc(urn)}/datasetProperties`;
    const body = JSON.stringify({ name: 'partial', description: 'z'.repeat(3000) });
    const url = new URL(t.url);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const before = t.accessLog.length;
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${editor}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    socket.write(body.slice(0, 1500));
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await until(() => t.accessLog.length > before, 'the access-log entry of the aborted request');
    const entry = t.accessLog.slice(before).find((e) => e.path === path)!;
    expect(entry).toMatchObject({ status: 499, errorCode: 'CLIENT_GONE', actorUrn: EDITOR });
    await t.catalog.settle();
    expect(await t.catalog.entities.get(ADMIN, urn)).toBeUndefined();

    const complete = await call(t.url, 'POST', path, { token: editor, body: { name: 'complete' } });
    expect(complete.status).toBe(200);
    expect((await t.catalog.entities.get(ADMIN, urn))?.aspects.datasetProperties?.value).toEqual({ name: 'complete' });
  });
});

describe('values JSON lets through but no input may hold', () => {
  it('a lone surrogate or 1e309 in a body is 400 naming where, and nothing is written', async () => {
    const path = `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProfile`;
    const infinite = await call(t.url, 'POST', path, { token: t.adminToken, rawBody: '{"timestampMillis": 1, "rowCount": 1e309}' });
    expect(infinite.status).toBe(400);
    expect(infinite.json.error.details).toEqual([{ path: '/rowCount', message: 'must be a finite number, not Infinity' }]);
    const fresh = 'urn:li:dataset:(urn:li:dataPlatform:hive,hygiene.fresh,PROD)';
    const lone = await call(t.url, 'POST', `/openapi/v2/entity/dataset/${enc(fresh)}/datasetProperties`, {
      token: t.adminToken,
      rawBody: '{"name": "a\\ud800b"}',
    });
    expect(lone.status).toBe(400);
    expect(lone.json.error.details).toEqual([{ path: '/name', message: 'is not well-formed Unicode (it holds a lone surrogate)' }]);
    expect((await call(t.url, 'GET', `/openapi/v2/entity/dataset/${enc(fresh)}/datasetProperties`, { token: t.adminToken })).status).toBe(
      404,
    );
  });
});
