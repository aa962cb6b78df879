// A service that is not the catalog checks the catalog's access tokens itself, with `jose` only: the
// signature against the public keys the catalog publishes (GET /.well-known/jwks.json, for a catalog
// configured with tokenSigning EdDSA or ES256), and revocation against a deny-list it keeps from the
// catalog's revocation feed (GET /openapi/v2/tokens/revocations, privilege VIEW_TOKEN_REVOCATIONS).
// See docs/tokens-and-policies.md, "Tokens that other services verify".
//
//   node examples/verify-token-remotely.mjs <catalog URL> <token to check> [token with VIEW_TOKEN_REVOCATIONS]
//
// prints { "ok": true, "actorUrn", "tokenId", "expiresAt" } or { "ok": false, "reason" } (exit code 1).
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

/**
 * @param {{ catalogUrl: string, revocationsToken?: string, refreshMs?: number }} options
 *   catalogUrl: the catalog's address (with or without /gms);
 *   revocationsToken: a token holding VIEW_TOKEN_REVOCATIONS (without one, revocation is not checked:
 *   rely on short token durations instead); refreshMs: how often the deny-list is brought up to date.
 */
export function createTokenVerifier({ catalogUrl, revocationsToken, refreshMs = 30_000 }) {
  const base = catalogUrl.endsWith('/') ? catalogUrl : `${catalogUrl}/`;
  // jose caches the key set and fetches it again for a kid it does not know (a rotated key).
  const keys = createRemoteJWKSet(new URL('.well-known/jwks.json', base));
  /** Revoked token id → when the token expires (ms; null: never). Entries leave once expired: bounded by the catalog's revocations. */
  const denied = new Map();
  let cursor;
  let refreshedAt = -Infinity;

  async function refreshDenyList() {
    for (;;) {
      const url = new URL('openapi/v2/tokens/revocations', base);
      url.searchParams.set('limit', '1000');
      if (cursor) url.searchParams.set('after', cursor);
      const response = await fetch(url, { headers: { authorization: `Bearer ${revocationsToken}` } });
      if (!response.ok) throw new Error(`revocation feed: ${response.status} ${await response.text()}`);
      const { revoked, next } = await response.json();
      for (const { tokenId, expiresAt } of revoked) denied.set(tokenId, expiresAt);
      cursor = next;
      if (revoked.length < 1000) break;
    }
    const now = Date.now();
    for (const [tokenId, expiresAt] of denied) if (expiresAt !== null && expiresAt <= now) denied.delete(tokenId);
    refreshedAt = now;
  }

  return {
    /** Who the token speaks for; throws with a `reason` when it must be refused. */
    async verify(token) {
      let payload;
      try {
        // Only the asymmetric algorithms: an HS256 token "signed" with the public key is refused here.
        ({ payload } = await jwtVerify(token, keys, { issuer: 'metacatalog', algorithms: ['EdDSA', 'ES256'] }));
      } catch (error) {
        const reason = error instanceof errors.JWTExpired ? 'expired' : error instanceof errors.JOSEError ? 'bad_signature' : 'unavailable';
        throw Object.assign(new Error(`token refused: ${reason}`), { reason });
      }
      if (revocationsToken !== undefined) {
        if (Date.now() - refreshedAt >= refreshMs) await refreshDenyList();
        if (denied.has(payload.jti)) throw Object.assign(new Error('token refused: revoked'), { reason: 'revoked' });
      }
      return { actorUrn: payload.sub, tokenId: payload.jti, expiresAt: payload.exp === undefined ? null : payload.exp * 1000 };
    },
  };
}

const [, script, catalogUrl, token, revocationsToken] = process.argv;
if (script && resolve(script) === fileURLToPath(import.meta.url)) {
  if (!catalogUrl || !token) {
    console.error('usage: node examples/verify-token-remotely.mjs <catalog URL> <token to check> [token with VIEW_TOKEN_REVOCATIONS]');
    process.exit(2);
  }
  const verifier = createTokenVerifier({ catalogUrl, ...(revocationsToken ? { revocationsToken } : {}) });
  try {
    console.log(JSON.stringify({ ok: true, ...(await verifier.verify(token)) }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, reason: error.reason ?? error.message }));
    process.exitCode = 1;
  }
}
