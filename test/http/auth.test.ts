import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createCatalog } from '../../src/index';
import { ADMIN, call, DATASET, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

const ENTITY = `/openapi/v2/entity/dataset/${enc(DATASET)}`;
const WRITE = `${ENTITY}/datasetProperties`;

let t: TestServer;
let trusting: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  trusting = await startTestServer({ http: { trustActorHeader: true } });
});
afterAll(async () => {
  await t.close();
  await trusting.close();
});

function b64(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function expectUnauthenticated(token: string | undefined, reason: string, headers: Record<string, string> = {}) {
  const r = await call(t.url, 'GET', ENTITY, { ...(token !== undefined ? { token } : {}), headers });
  expect(r.status).toBe(401);
  expect(r.json.error.code).toBe('UNAUTHENTICATED');
  expect(r.json.error.reason).toBe(reason);
  const challenge = r.headers.get('www-authenticate');
  expect(challenge).toMatch(/^Bearer realm="metacatalog"/);
  if (reason === 'missing') expect(challenge).toBe('Bearer realm="metacatalog"');
  else expect(challenge).toBe(`Bearer realm="metacatalog", error="invalid_token", error_description="${reason}"`);
  if (token) expect(r.text).not.toContain(token);
  return r;
}

describe('authentication', () => {
  it('a valid bearer token authenticates as its actor, at the root and under /gms', async () => {
    const token = await t.tokenFor(EDITOR);
    const written = await call(t.url, 'POST', `/gms${WRITE}`, { token, body: { name: 'orders' } });
    expect(written.status).toBe(200);
    const stored = await t.catalog.entities.get(ADMIN, DATASET);
    expect(stored?.aspects.datasetProperties?.lastModified.actor).toBe(EDITOR);
    expect((await call(t.url, 'GET', ENTITY, { token })).status).toBe(200);
  });

  it('no credentials → 401 missing with a bare Bearer challenge', async () => {
    await expectUnauthenticated(undefined, 'missing');
    const post = await call(t.url, 'POST', WRITE, { body: { name: 'x' } });
    expect(post.status).toBe(401);
  });

  it('a header that is not "Bearer <token>" → 401 malformed', async () => {
    await expectUnauthenticated(undefined, 'malformed', { authorization: 'Basic YWRtaW46YWRtaW4=' });
    await expectUnauthenticated('not-a-jwt', 'malformed');
  });

  it('a forged token (payload changed, signed with another key, alg none) → 401 bad_signature', async () => {
    const token = await t.tokenFor(READER);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    await expectUnauthenticated(`${header}.${b64({ ...claims, sub: ADMIN })}.${signature}`, 'bad_signature');

    const other = createCatalog({
      adapter: createMemoryAdapter(),
      tokenSigningKey: 'another-signing-key-0123456789abcdef-0123',
      superUsers: [ADMIN],
    });
    const foreign = (await other.tokens.issueBootstrapToken({ actorUrn: ADMIN })).accessToken;
    await other.close();
    await expectUnauthenticated(foreign, 'bad_signature');

    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, sub: ADMIN })}.`;
    const r = await call(t.url, 'GET', ENTITY, { token: none });
    expect(r.status).toBe(401);
    expect(['malformed', 'bad_signature']).toContain(r.json.error.reason);

    // Right shape, right key id, signature over other bytes.
    const resigned = `${header}.${b64({ ...claims, sub: ADMIN })}.${createHmac('sha256', 'guess-0123456789abcdef-0123456789abcdef').update('x').digest('base64url')}`;
    await expectUnauthenticated(resigned, 'bad_signature');
  });

  it('an expired token → 401 expired', async () => {
    const token = await t.tokenFor(READER);
    expect((await call(t.url, 'GET', ENTITY, { token })).status).toBe(200);
    t.advance(2 * 3_600_000);
    try {
      await expectUnauthenticated(token, 'expired');
    } finally {
      t.advance(-2 * 3_600_000);
    }
  });

  it('a revoked token → 401 revoked, at once', async () => {
    const created = await t.catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: READER, duration: 'ONE_DAY', name: 'to revoke' });
    expect((await call(t.url, 'GET', ENTITY, { token: created.accessToken })).status).toBe(200);
    await t.catalog.tokens.revoke(ADMIN, created.metadata.id);
    await expectUnauthenticated(created.accessToken, 'revoked');
  });

  it('X-Service-Actor is not trusted unless the host says so → 401', async () => {
    const r = await call(t.url, 'GET', ENTITY, { headers: { 'x-service-actor': ADMIN } });
    expect(r.status).toBe(401);
    expect(r.json.error.message).toContain('X-Service-Actor');
  });

  it('with trustActorHeader, X-Service-Actor names the actor; a token still decides when one is sent', async () => {
    const asEditor = await call(trusting.url, 'POST', WRITE, { headers: { 'x-service-actor': EDITOR }, body: { name: 'via header' } });
    expect(asEditor.status).toBe(200);
    expect((await trusting.catalog.entities.get(ADMIN, DATASET))?.aspects.datasetProperties?.lastModified.actor).toBe(EDITOR);

    const asReader = await call(trusting.url, 'POST', WRITE, { headers: { 'x-service-actor': READER }, body: { name: 'refused' } });
    expect(asReader.status).toBe(403);
    expect(asReader.json.error.code).toBe('FORBIDDEN');
    expect(asReader.json.error.message).toContain('EDIT_ENTITY');

    const readerToken = await trusting.tokenFor(READER);
    const tokenWins = await call(trusting.url, 'POST', WRITE, {
      token: readerToken,
      headers: { 'x-service-actor': ADMIN },
      body: { name: 'refused' },
    });
    expect(tokenWins.status).toBe(403);

    const badActor = await call(trusting.url, 'GET', ENTITY, { headers: { 'x-service-actor': 'admin' } });
    expect(badActor.status).toBe(401);
    expect(badActor.json.error.reason).toBe('malformed');
  });

  it('authenticated but not allowed → 403 naming the privilege', async () => {
    const token = await t.tokenFor(READER);
    const r = await call(t.url, 'POST', WRITE, { token, body: { name: 'nope' } });
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'FORBIDDEN', reason: 'EDIT_ENTITY' });
  });

  it('the API document and the health check need no credentials', async () => {
    const docs = await call(t.url, 'GET', '/openapi/v2/api-docs');
    expect(docs.status).toBe(200);
    expect(docs.json.openapi).toMatch(/^3\./);
    const health = await call(t.url, 'GET', '/gms/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
  });
});

describe('scoped tokens over HTTP and GraphQL', () => {
  it('a token created with privileges acts within them on every route; READ_ONLY only reads', async () => {
    const editor = await t.tokenFor(EDITOR);
    const created = await call(t.url, 'POST', '/api/graphql', {
      token: editor,
      body: {
        query: `mutation { createAccessToken(input: { type: PERSONAL, actorUrn: "${EDITOR}", duration: ONE_HOUR, name: "ci", privileges: ["EDIT_ENTITY_PROPERTIES"] }) { accessToken metadata { privileges } } }`,
      },
    });
    expect(created.json.data.createAccessToken.metadata.privileges).toEqual(['EDIT_ENTITY_PROPERTIES']);
    const scoped = created.json.data.createAccessToken.accessToken as string;
    const aspect = `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProperties`;
    const refused = await call(t.url, 'POST', aspect, { token: scoped, body: { name: 'orders' } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/scoped to EDIT_ENTITY_PROPERTIES/);
    expect((await call(t.url, 'POST', aspect, { token: editor, body: { name: 'orders' } })).status).toBe(200);
    expect((await call(t.url, 'GET', aspect, { token: scoped })).status).toBe(200);
    // Through GraphQL the same token is held to the same scopes.
    const viaGraphql = await call(t.url, 'POST', '/api/graphql', {
      token: scoped,
      body: {
        query: `mutation { createAccessToken(input: { type: PERSONAL, actorUrn: "${EDITOR}", duration: ONE_HOUR, name: "wider", privileges: ["EDIT_ENTITY"] }) { accessToken } }`,
      },
    });
    expect(viaGraphql.json.errors[0].extensions.code).toBe('FORBIDDEN');
    const listed = await call(t.url, 'POST', '/api/graphql', {
      token: editor,
      body: {
        query: `{ listAccessTokens(input: { filters: [{ field: "ownerUrn", value: "${EDITOR}" }] }) { tokens { name privileges } } }`,
      },
    });
    expect(listed.json.data.listAccessTokens.tokens).toEqual(
      expect.arrayContaining([{ name: 'ci', privileges: ['EDIT_ENTITY_PROPERTIES'] }]),
    );
  });
});
