import { createHash, type KeyObject } from 'node:crypto';
import { CatalogError, type Violation } from '../../errors';
import {
  keyIdOf,
  parseTokenSigning,
  type JsonWebKeySet,
  type ParsedSigningKey,
  type ParsedTokenSigning,
  type TokenSigningAlgorithm,
} from './signing-keys';

export { keyIdOf };

/**
 * Access tokens as JSON Web Tokens, signed and verified by `jose`. This file adds only what access
 * tokens need around it: one configured algorithm (any other is refused before a key is looked at), the
 * key named by `kid`, one spelling per signature, and failures that name a reason but never carry the
 * token or any part of it (no `cause` either: a parse error may quote its input).
 */

/** The claims of an access token. Times are seconds since the epoch, as JWT has it. */
export interface AccessTokenClaims {
  /** The actor the token acts as. */
  sub: string;
  /** Random id; also the token id (`urn:li:accessToken:<jti>`). */
  jti: string;
  type: string;
  iat: number;
  /** Absent for tokens that never expire. */
  exp?: number;
  iss: string;
}

export const TOKEN_ISSUER = 'metacatalog';

/** Refuses to look at anything longer: a real token is a few hundred characters. */
const MAX_TOKEN_LENGTH = 8192;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export type TokenFailureReason = 'malformed' | 'bad_signature' | 'expired' | 'revoked';

/** UNAUTHENTICATED with a reason; the message never contains the token. */
export function tokenFailure(reason: TokenFailureReason, message: string): CatalogError {
  return new CatalogError('UNAUTHENTICATED', message, { reason });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One key as jose takes it; HMAC secrets are imported once (jose would import raw bytes on every call). */
interface KeyEntry {
  kid: string;
  signing?: () => Promise<CryptoKey | KeyObject>;
  verifying: () => Promise<CryptoKey | KeyObject>;
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** jose is loaded at the first signing or verification, not by `import 'metacatalog'`. */
const loadJose = once(() => import('jose'));

function entryOf(key: ParsedSigningKey): KeyEntry {
  if (key.secret) {
    const secret = key.secret;
    const imported = once(() =>
      crypto.subtle.importKey('raw', new Uint8Array(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    );
    return { kid: key.kid, signing: imported, verifying: imported };
  }
  const { privateKey, publicKey } = key;
  if (!publicKey) throw new Error('internal: an asymmetric key without its public key');
  // jose converts a KeyObject once and keeps the result for as long as the KeyObject lives (ours live with the catalog).
  return {
    kid: key.kid,
    ...(privateKey ? { signing: async () => privateKey } : {}),
    verifying: async () => publicKey,
  };
}

/** The configured keys: the first signs, every one verifies (rotation). */
/**
 * Tokens whose signature this process verified already, by the SHA-256 of the token (never the token
 * itself), with their claims: a service verifies the same few tokens on every request, and the
 * signature check (WebCrypto, asynchronous) was an eighth of a REST write's CPU. At most this many,
 * the oldest dropped first. Expiry and revocation are still checked on every request by the caller.
 */
const VERIFIED_CACHE_SIZE = 1_000;

export class SigningKeys {
  private readonly verified = new Map<string, AccessTokenClaims>();
  readonly algorithm: TokenSigningAlgorithm;
  private readonly keys: readonly KeyEntry[];
  private readonly publicKeys: JsonWebKeySet | undefined;

  /** Parsed keys, or HS256 secrets (checked here; a bad one throws INVALID_INPUT). */
  constructor(config: ParsedTokenSigning | readonly string[]) {
    let parsed: ParsedTokenSigning | undefined;
    if (Array.isArray(config)) {
      const violations: Violation[] = [];
      parsed = config.length ? parseTokenSigning({ tokenSigningKey: config }, violations) : { algorithm: 'HS256', keys: [] };
      if (!parsed) throw new CatalogError('INVALID_INPUT', 'invalid token signing keys', { details: violations });
    } else parsed = config as ParsedTokenSigning;
    this.algorithm = parsed.algorithm;
    this.keys = parsed.keys.map(entryOf);
    const jwks = parsed.keys.flatMap((k) => (k.publicJwk ? [{ ...k.publicJwk }] : []));
    this.publicKeys = parsed.algorithm === 'HS256' ? undefined : { keys: jwks };
  }

  get size(): number {
    return this.keys.length;
  }

  /** The public keys (a JWK set), or undefined with HS256: a shared secret is never published. */
  jwks(): JsonWebKeySet | undefined {
    return this.publicKeys && { keys: this.publicKeys.keys.map((k) => ({ ...k })) };
  }

  async sign(claims: AccessTokenClaims): Promise<string> {
    const key = this.keys[0];
    if (!key?.signing) throw new Error('internal: no signing key');
    const { CompactSign } = await loadJose();
    return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: this.algorithm, typ: 'JWT', kid: key.kid })
      .sign(await key.signing());
  }

  /**
   * Checks shape, algorithm and signature, then the claims' types. Expiry and revocation are the
   * caller's (they need the catalog clock and the store).
   */
  async verify(token: unknown): Promise<AccessTokenClaims> {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !JWT_SHAPE.test(token)) {
      throw tokenFailure('malformed', 'the access token is not a well-formed JWT');
    }
    const digest = createHash('sha256').update(token).digest('base64url');
    const known = this.verified.get(digest);
    if (known) return { ...known };
    const claims = await this.verifySignature(token);
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(digest, claims);
    return { ...claims };
  }

  private async verifySignature(token: string): Promise<AccessTokenClaims> {
    const { compactVerify, decodeProtectedHeader, errors: joseErrors } = await loadJose();
    let header: Record<string, unknown>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw tokenFailure('malformed', 'the access token has no readable JWT header');
    }
    if (!isObject(header) || typeof header.alg !== 'string') throw tokenFailure('malformed', 'the access token has no readable JWT header');
    // Only the configured algorithm: another one (HS256 with a public key as the secret, "none") cannot come from this catalog.
    if (header.alg !== this.algorithm) {
      throw tokenFailure('bad_signature', `the access token is not signed with ${this.algorithm}, the algorithm of this catalog`);
    }
    const candidates = typeof header.kid === 'string' ? this.keys.filter((k) => k.kid === header.kid) : this.keys;
    if (candidates.length === 0) throw tokenFailure('bad_signature', 'the access token was signed with a key this catalog does not know');
    // Only the canonical encoding counts, so that one signature has exactly one spelling.
    const signaturePart = token.slice(token.lastIndexOf('.') + 1);
    if (Buffer.from(signaturePart, 'base64url').toString('base64url') !== signaturePart) {
      throw tokenFailure('bad_signature', 'the access token signature is invalid');
    }
    for (const key of candidates) {
      let payload: Uint8Array;
      try {
        ({ payload } = await compactVerify(token, await key.verifying(), { algorithms: [this.algorithm] }));
      } catch (error) {
        if (error instanceof joseErrors.JWSSignatureVerificationFailed) continue;
        if (error instanceof joseErrors.JWSInvalid) throw tokenFailure('malformed', 'the access token is not a well-formed JWS');
        if (error instanceof joseErrors.JOSEError) throw tokenFailure('bad_signature', 'the access token signature is invalid');
        throw error;
      }
      return checkClaims(decodeClaims(payload));
    }
    throw tokenFailure('bad_signature', 'the access token signature does not match');
  }
}

function decodeClaims(payload: Uint8Array): Record<string, unknown> {
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as unknown;
  } catch {
    claims = undefined;
  }
  if (!isObject(claims)) throw tokenFailure('malformed', 'the access token has no readable claims');
  return claims;
}

const TOKEN_ID = /^[A-Za-z0-9-]{1,64}$/;

function checkClaims(claims: Record<string, unknown>): AccessTokenClaims {
  const { sub, jti, type, iat, exp, iss } = claims;
  const problems: string[] = [];
  if (typeof sub !== 'string' || !sub.startsWith('urn:')) problems.push('sub');
  if (typeof jti !== 'string' || !TOKEN_ID.test(jti)) problems.push('jti');
  if (typeof type !== 'string' || type === '') problems.push('type');
  if (!Number.isSafeInteger(iat)) problems.push('iat');
  if (exp !== undefined && !Number.isSafeInteger(exp)) problems.push('exp');
  if (iss !== TOKEN_ISSUER) problems.push('iss');
  if (problems.length) throw tokenFailure('malformed', `the access token has invalid claims: ${problems.join(', ')}`);
  return {
    sub: sub as string,
    jti: jti as string,
    type: type as string,
    iat: iat as number,
    ...(exp === undefined ? {} : { exp: exp as number }),
    iss: TOKEN_ISSUER,
  };
}

export function isTokenId(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_ID.test(value);
}
