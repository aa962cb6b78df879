import { QueryReader } from '../query';
import type { RouteContext, RouteResult, RouteSpec } from '../router';

/** Verifiers cache the key set; five minutes bounds how long a newly added key takes to be seen. */
const JWKS_CACHE_CONTROL = 'public, max-age=300';

/** `GET /.well-known/jwks.json`: the public keys of an EdDSA or ES256 catalog (public: they are public keys). */
async function readJwks(ctx: RouteContext): Promise<RouteResult> {
  return { body: await ctx.catalog.tokens.jwks(), headers: { 'cache-control': JWKS_CACHE_CONTROL } };
}

/** `GET /openapi/v2/tokens/revocations?after=&limit=`: `{ revoked: [{ tokenId, expiresAt }], next }` (VIEW_TOKEN_REVOCATIONS). */
async function readRevocations(ctx: RouteContext): Promise<RouteResult> {
  const query = new QueryReader(ctx.query);
  const after = query.string('after');
  const limit = query.integer('limit');
  query.done();
  const page = await ctx.catalog.tokens.revocations(ctx.actor, {
    ...(after !== undefined && after !== '' ? { after } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  return { body: page, headers: { 'cache-control': 'no-store' } };
}

/** What services that verify the catalog's tokens themselves read: the public keys and the revoked tokens. */
export const tokenRoutes: readonly RouteSpec[] = [
  { pattern: '/.well-known/jwks.json', methods: { GET: { body: 'none', public: true, handle: readJwks } } },
  { pattern: '/openapi/v2/tokens/revocations', methods: { GET: { body: 'none', handle: readRevocations } } },
];
