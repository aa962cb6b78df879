import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, call, DATASET, EDITOR, enc, READER, startTestServer, type TestServer } from './helpers';

let t: TestServer;
let reader: string;

beforeAll(async () => {
  t = await startTestServer();
  reader = await t.tokenFor(READER);
});
afterAll(() => t.close());

const gql = (token: string | undefined, body: unknown, prefix = '') =>
  call(t.url, 'POST', `${prefix}/api/graphql`, { ...(token ? { token } : {}), body });

describe('POST /api/graphql', () => {
  it('answers a query at the root and under /gms', async () => {
    for (const prefix of ['', '/gms']) {
      const r = await gql(reader, { query: '{ __typename }' }, prefix);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ data: { __typename: 'Query' }, extensions: {} });
    }
  });

  it('runs mutations as the authenticated actor: a token created over GraphQL works on REST', async () => {
    const r = await gql(t.adminToken, {
      query: `mutation create($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { accessToken metadata { actorUrn ownerUrn name } } }`,
      variables: { input: { type: 'PERSONAL', actorUrn: EDITOR, duration: 'ONE_HOUR', name: 'made over http' } },
      operationName: 'create',
    });
    expect(r.status).toBe(200);
    expect(r.json.errors).toBeUndefined();
    expect(r.json.data.createAccessToken.metadata).toEqual({ actorUrn: EDITOR, ownerUrn: ADMIN, name: 'made over http' });
    const token = r.json.data.createAccessToken.accessToken as string;
    const written = await call(t.url, 'POST', `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProperties`, {
      token,
      body: { name: 'orders' },
    });
    expect(written.status).toBe(200);
    const read = await gql(reader, { query: `{ entity(urn: "${DATASET}") { urn type } }` });
    expect(read.json).toEqual({ data: { entity: { urn: DATASET, type: 'DATASET' } }, extensions: {} });
  });

  it('a field the actor may not use is 200 with the error and its code', async () => {
    const r = await gql(reader, { query: '{ listAccessTokens(input: { start: 0, count: 10, filters: [] }) { total } }' });
    expect(r.status).toBe(200);
    // The field is non-null in the schema: the error nulls the whole data.
    expect(r.json.data?.listAccessTokens ?? null).toBeNull();
    expect(r.json.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(r.json.errors[0].message).toContain('MANAGE_ACCESS_TOKENS');
  });

  it('picks the operation named by operationName; several without a name, or an unknown name, is 400', async () => {
    const query = 'query a { __typename } query b { entity(urn: "urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)") { urn } }';
    const b = await gql(reader, { query, operationName: 'b' });
    expect(b.status).toBe(200);
    expect(b.json).toEqual({ data: { entity: null }, extensions: {} });
    const unnamed = await gql(reader, { query });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.errors[0].extensions.code).toBe('INVALID_INPUT');
    const unknown = await gql(reader, { query, operationName: 'c' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.errors[0].message).toContain('"c"');
  });

  it('malformed GraphQL requests are 400 with { errors }: syntax, validation, no query, bad variables', async () => {
    const syntax = await gql(reader, { query: '{ entity(urn: ) }' });
    expect(syntax.status).toBe(400);
    expect(syntax.json.errors[0]).toMatchObject({ locations: [{ line: 1, column: 15 }], extensions: { code: 'INVALID_INPUT' } });
    expect(syntax.json.data).toBeUndefined();

    const invalid = await gql(reader, { query: '{ noSuchField }' });
    expect(invalid.status).toBe(400);
    expect(invalid.json.errors[0].message).toContain('noSuchField');

    for (const body of [
      {},
      { query: '' },
      { query: 42 },
      { query: '{ __typename }', variables: [1] },
      { query: '{ __typename }', operationName: 7 },
      ['not', 'an', 'object'],
    ]) {
      const r = await gql(reader, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.errors[0].extensions.code).toBe('INVALID_INPUT');
    }

    const wrongVariable = await gql(reader, { query: 'query q($urn: String!) { entity(urn: $urn) { urn } }', variables: { urn: 42 } });
    expect(wrongVariable.status).toBe(400);
    expect(wrongVariable.json.errors[0].message).toContain('$urn');
    const missingVariable = await gql(reader, { query: 'query q($urn: String!) { entity(urn: $urn) { urn } }' });
    expect(missingVariable.status).toBe(400);
  });

  it('a body that is not JSON is 400 { error }; another content type 415; GET 405; no credentials 401', async () => {
    const malformed = await call(t.url, 'POST', '/api/graphql', { token: reader, rawBody: '{"query": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('INVALID_INPUT');
    const graphqlType = await call(t.url, 'POST', '/api/graphql', {
      token: reader,
      rawBody: '{ __typename }',
      contentType: 'application/graphql',
    });
    expect(graphqlType.status).toBe(415);
    const get = await call(t.url, 'GET', '/api/graphql?query=%7B__typename%7D', { token: reader });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const anonymous = await gql(undefined, { query: '{ __typename }' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('an unexpected resolver failure is masked and reported with the request id and the field path', async () => {
    const broken = await startTestServer({ http: { trustActorHeader: true } });
    await broken.catalog.close();
    try {
      const r = await call(broken.url, 'POST', '/api/graphql', {
        headers: { 'x-service-actor': ADMIN },
        body: { query: `{ entity(urn: "${DATASET}") { urn } }` },
      });
      expect(r.status).toBe(200);
      expect(r.json.errors).toEqual([expect.objectContaining({ message: 'Internal error', extensions: { code: 'INTERNAL' } })]);
      expect(r.text).not.toMatch(/sqlite|database| at /i);
      expect(broken.errors).toHaveLength(1);
      expect(broken.errors[0]!.report).toMatchObject({ requestId: r.headers.get('x-request-id'), where: 'graphql entity' });
    } finally {
      await broken.server.close();
    }
  });

  it('graphql: false leaves the route out', async () => {
    const without = await startTestServer({ http: { graphql: false } });
    try {
      const r = await call(without.url, 'POST', '/api/graphql', { token: without.adminToken, body: { query: '{ __typename }' } });
      expect(r.status).toBe(404);
    } finally {
      await without.close();
    }
  });
});
