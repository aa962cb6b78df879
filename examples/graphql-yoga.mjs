// Mounting metacatalog's GraphQL schema in an existing GraphQL server (graphql-yoga on node:http).
// The actor of each request comes from a verified `Authorization: Bearer <token>`.
//   npm run build && node examples/graphql-yoga.mjs [path/to/catalog.db]
// Environment: PORT (default 4000; 0 picks a free one), METACATALOG_TOKEN_KEY (>= 32 bytes; without
// it a random key is used and tokens do not survive a restart).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { GraphQLError } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { createCatalog, isCatalogError } from 'metacatalog';
import { createSqliteAdapter } from 'metacatalog/adapters/sqlite';
import { checkQueryLimits, createGraphQLSchema, createQueryLimitRules } from 'metacatalog/graphql';

const ADMIN = 'urn:li:corpuser:admin';
const filename = process.argv[2] ?? ':memory:';

const catalog = createCatalog({
  adapter: createSqliteAdapter({ filename }),
  tokenSigningKey: process.env.METACATALOG_TOKEN_KEY ?? randomBytes(32).toString('hex'),
  superUsers: [ADMIN],
  policies: [{ name: 'everyone', actors: '*', privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] }],
});

/** The GraphQL context, once per request: `{ actorUrn }` from a verified token, or none. */
async function contextOf({ request }) {
  const header = request.headers.get('authorization');
  if (!header) return { actorUrn: null }; // every operation answers UNAUTHENTICATED
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? '';
  try {
    const { actorUrn, privileges } = await catalog.tokens.verify(token);
    return { actorUrn, scopes: privileges };
  } catch (error) {
    if (!isCatalogError(error)) throw error;
    // A token that does not verify fails the whole request with 401 and the reason (expired, revoked, ...).
    throw new GraphQLError(error.message, { extensions: { code: error.code, reason: error.reason, http: { status: 401 } } });
  }
}

/**
 * The catalog's limits on depth and cost (docs/graphql.md): as validation rules, and with each request's
 * variables before it runs. A refused document gets 400 before any resolver starts.
 */
const queryLimits = {
  onValidate: ({ addValidationRule }) => createQueryLimitRules().forEach((rule) => addValidationRule(rule)),
  onExecute: ({ args }) =>
    checkQueryLimits(args.schema, args.document, { variables: args.variableValues, operationName: args.operationName }),
};

const yoga = createYoga({
  schema: createGraphQLSchema(catalog, {
    onError: (error, { path }) => console.error(`unexpected error at ${path}:`, error),
  }),
  context: contextOf,
  graphqlEndpoint: '/api/graphql',
  landingPage: false,
  plugins: [queryLimits],
});

const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 4000), '127.0.0.1', async () => {
  const { port } = server.address();
  console.log(`GraphQL on http://127.0.0.1:${port}/api/graphql`);
  // First start: a token for the administrator, shown once (see docs/tokens-and-policies.md).
  if ((await catalog.tokens.list(ADMIN, { count: 0 })).total === 0) {
    const { accessToken } = await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN });
    console.log(`admin token (valid one day, shown once): ${accessToken}`);
  }
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.closeAllConnections?.();
  await new Promise((resolve) => server.close(resolve));
  await catalog.close();
  console.log('stopped');
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
