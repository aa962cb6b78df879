import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { createCatalog, isCatalogError, type Catalog } from '../../src';
import { checkQueryLimits, createGraphQLSchema, createQueryLimitRules, type CatalogGraphQLContext } from '../../src/graphql';
import { ADMIN, ANA, SIGNING_KEY } from './support';

// createGraphQLSchema(catalog) mounted in Apollo Server as a host mounts it (docs/graphql.md): over HTTP on
// loopback, the actor of each request from a verified `Authorization: Bearer` token in Apollo's context.

const ORDERS = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';
const RETURNS = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.returns,PROD)';
const TEAM = 'urn:li:structuredProperty:io.acme.team';

interface Answer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
}

describe('the schema mounted in Apollo Server', () => {
  let catalog: Catalog;
  let server: ApolloServer<CatalogGraphQLContext>;
  let url: string;
  let adminToken: string;

  beforeAll(async () => {
    catalog = createCatalog({
      adapter: createMemoryAdapter(),
      tokenSigningKey: SIGNING_KEY,
      superUsers: [ADMIN],
      policies: [{ name: 'editors', actors: [ANA], privileges: ['EDIT_ENTITY_PROPERTIES', 'GENERATE_PERSONAL_ACCESS_TOKENS'] }],
      jobs: { background: false },
    });
    // The host's own bootstrap: the administrator's token, made by the library (not over GraphQL).
    adminToken = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'host' }))
      .accessToken;
    server = new ApolloServer<CatalogGraphQLContext>({
      schema: createGraphQLSchema(catalog),
      validationRules: createQueryLimitRules(),
      plugins: [
        {
          requestDidStart: async () => ({
            didResolveOperation: async ({ schema, document, request }) => {
              checkQueryLimits(schema, document, { variables: request.variables ?? null, operationName: request.operationName ?? null });
            },
          }),
        },
      ],
    });
    ({ url } = await startStandaloneServer(server, {
      listen: { port: 0, host: '127.0.0.1' },
      // The context, once per request: the actor of a verified token, or none (every operation is then UNAUTHENTICATED).
      context: async ({ req }) => {
        const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
        if (!token) return { actorUrn: null };
        try {
          const { actorUrn, privileges } = await catalog.tokens.verify(token);
          return { actorUrn, scopes: privileges };
        } catch (error) {
          if (!isCatalogError(error)) throw error;
          throw new GraphQLError(error.message, { extensions: { code: error.code, reason: error.reason, http: { status: 401 } } });
        }
      },
    }));
  });

  afterAll(async () => {
    await server?.stop();
    await catalog?.close();
  });

  async function post(query: string, variables: Record<string, unknown>, token?: string): Promise<Answer> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  }
  const codes = (answer: Answer) => (answer.body.errors ?? []).map((e) => e.extensions?.code);
  function data<T>(answer: Answer): T {
    if (answer.body.errors?.length) throw new Error(`unexpected errors: ${JSON.stringify(answer.body.errors)}`);
    expect(answer.status).toBe(200);
    return answer.body.data as T;
  }

  const CREATE_TOKEN = `mutation token($input: CreateAccessTokenInput!) {
    createAccessToken(input: $input) { accessToken metadata { id actorUrn ownerUrn } }
  }`;
  const CREATE_PROPERTY = `mutation property($input: CreateStructuredPropertyInput!) {
    createStructuredProperty(input: $input) { urn definition { qualifiedName valueType { urn } } }
  }`;
  const UPSERT = `mutation values($input: UpsertStructuredPropertiesInput!) {
    upsertStructuredProperties(input: $input) { properties { structuredProperty { urn } values { ... on StringValue { stringValue } } } }
  }`;
  const SEARCH = `query find($input: SearchAcrossEntitiesInput!) {
    searchAcrossEntities(input: $input) { total searchResults { entity { urn type } } }
  }`;

  it('runs a token mutation, a property upsert and a filtered search, each as the actor of its token', async () => {
    // A token for Ana, made by the administrator through Apollo; Ana acts with it from here on.
    const { createAccessToken } = data<{ createAccessToken: { accessToken: string; metadata: { actorUrn: string; ownerUrn: string } } }>(
      await post(CREATE_TOKEN, { input: { type: 'PERSONAL', actorUrn: ANA, duration: 'ONE_HOUR', name: 'ana via apollo' } }, adminToken),
    );
    expect(createAccessToken.metadata).toMatchObject({ actorUrn: ANA, ownerUrn: ADMIN });
    const anaToken = createAccessToken.accessToken;
    await expect(catalog.tokens.verify(anaToken)).resolves.toMatchObject({ actorUrn: ANA });

    const property = {
      input: {
        id: 'io.acme.team',
        valueType: 'string',
        entityTypes: ['dataset'],
        allowedValues: [{ stringValue: 'sales' }, { stringValue: 'finance' }],
      },
    };
    // Ana may edit values but not define properties: the context's actor is hers, not the host's.
    expect(codes(await post(CREATE_PROPERTY, property, anaToken))).toEqual(['FORBIDDEN']);
    expect(data(await post(CREATE_PROPERTY, property, adminToken))).toEqual({
      createStructuredProperty: {
        urn: TEAM,
        definition: { qualifiedName: 'io.acme.team', valueType: { urn: 'urn:li:dataType:datahub.string' } },
      },
    });

    for (const [assetUrn, team] of [
      [ORDERS, 'sales'],
      [RETURNS, 'finance'],
    ] as const) {
      expect(
        data(
          await post(
            UPSERT,
            { input: { assetUrn, structuredPropertyInputParams: [{ structuredPropertyUrn: TEAM, values: [{ stringValue: team }] }] } },
            anaToken,
          ),
        ),
      ).toEqual({ upsertStructuredProperties: { properties: [{ structuredProperty: { urn: TEAM }, values: [{ stringValue: team }] }] } });
    }
    const written = await catalog.entities.get(ADMIN, ORDERS);
    expect(written?.aspects.structuredProperties?.lastModified?.actor).toBe(ANA);
    await catalog.settle();

    const search = (team: string) =>
      post(
        SEARCH,
        {
          input: { types: ['DATASET'], query: '*', orFilters: [{ and: [{ field: 'structuredProperties.io.acme.team', values: [team] }] }] },
        },
        anaToken,
      );
    expect(data(await search('sales'))).toEqual({
      searchAcrossEntities: { total: 1, searchResults: [{ entity: { urn: ORDERS, type: 'DATASET' } }] },
    });
    expect(data(await search('finance'))).toEqual({
      searchAcrossEntities: { total: 1, searchResults: [{ entity: { urn: RETURNS, type: 'DATASET' } }] },
    });
  });

  it('no token: every operation is UNAUTHENTICATED; a token that does not verify fails the request with 401', async () => {
    const anonymous = await post(SEARCH, { input: { query: '*' } });
    expect(codes(anonymous)).toEqual(['UNAUTHENTICATED']);
    const forged = await post(SEARCH, { input: { query: '*' } }, `${adminToken.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
    expect(codes(forged)).toEqual(['UNAUTHENTICATED']);
  });

  it("the catalog's query limits run in Apollo: in its validation, and with the request's variables before execution", async () => {
    const alias = (i: number, count: string) =>
      `a${i}: searchAcrossEntities(input: { query: "*", count: ${count} }) { searchResults { entity { urn } } }`;
    // Sizes written in the document: refused by the validation rules (Apollo reports GRAPHQL_VALIDATION_FAILED, with the catalog's message).
    const written = await post(`{ ${Array.from({ length: 400 }, (_, i) => alias(i, '100')).join(' ')} }`, {}, adminToken);
    expect(written.status).toBe(400);
    expect(codes(written)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(written.body.errors?.[0]?.message).toContain('cost budget of 50000');
    // Sizes given by a variable: validation counts them as the default list size; checkQueryLimits sees the real one.
    const document = `query big($n: Int!) { ${Array.from({ length: 60 }, (_, i) => alias(i, '$n')).join(' ')} }`;
    expect(codes(await post(document, { n: 1 }, adminToken))).toEqual([]);
    const variables = await post(document, { n: 1000 }, adminToken);
    expect(codes(variables)).toEqual(['INVALID_INPUT']);
    expect(variables.body.errors?.[0]?.message).toContain('cost budget of 50000');
    expect(variables.body.data ?? null).toBeNull();
  });
});
