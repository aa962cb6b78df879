import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { CatalogError } from '../../errors';

/**
 * HS256 JSON Web Tokens with node:crypto and nothing else. Only what access tokens need: one
 * algorithm, a key id in the header, constant-time signature comparison, and failures that name a
 * reason but never carry the token or any part of it (no `cause` from parsing either: a JSON parse
 * error quotes its input).
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
const SIGNATURE_BYTES = 32;

export type TokenFailureReason = 'malformed' | 'bad_signature' | 'expired' | 'revoked';

/** UNAUTHENTICATED with a reason; the message never contains the token. */
export function tokenFailure(reason: TokenFailureReason, message: string): CatalogError {
  return new CatalogError('UNAUTHENTICATED', message, { reason });
}

function encodeJson(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, public identifier of a key: the first 8 hex digits of its SHA-256. */
export function keyIdOf(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 8);
}

interface SigningKey {
  kid: string;
  secret: string;
}

/** The configured keys: the first signs, every one verifies (rotation). */
export class SigningKeys {
  private readonly keys: readonly SigningKey[];

  constructor(keys: readonly string[]) {
    this.keys = keys.map((secret) => ({ kid: keyIdOf(secret), secret }));
  }

  get size(): number {
    return this.keys.length;
  }

  sign(claims: AccessTokenClaims): string {
    const key = this.keys[0];
    if (!key) throw new Error('internal: no signing key');
    const signingInput = `${encodeJson({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${encodeJson(claims)}`;
    return `${signingInput}.${createHmac('sha256', key.secret).update(signingInput).digest('base64url')}`;
  }

  /**
   * Checks shape, algorithm and signature, then the claims' types. Expiry and revocation are the
   * caller's (they need the catalog clock and the store).
   */
  verify(token: unknown): AccessTokenClaims {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !JWT_SHAPE.test(token)) {
      throw tokenFailure('malformed', 'the access token is not a well-formed JWT');
    }
    const [headerPart, payloadPart, signaturePart] = token.split('.') as [string, string, string];
    const header = decodeJson(headerPart);
    if (!isObject(header) || typeof header.alg !== 'string') {
      throw tokenFailure('malformed', 'the access token has no readable JWT header');
    }
    // Another algorithm (including "none") cannot come from this catalog: treat it as a forged signature.
    if (header.alg !== 'HS256') throw tokenFailure('bad_signature', 'the access token is not signed with HS256');
    const candidates = typeof header.kid === 'string' ? this.keys.filter((k) => k.kid === header.kid) : this.keys;
    if (candidates.length === 0) throw tokenFailure('bad_signature', 'the access token was signed with a key this catalog does not know');
    const signature = Buffer.from(signaturePart, 'base64url');
    // Only the canonical encoding counts, so that one signature has exactly one spelling.
    if (signature.length !== SIGNATURE_BYTES || signature.toString('base64url') !== signaturePart) {
      throw tokenFailure('bad_signature', 'the access token signature is invalid');
    }
    const signingInput = `${headerPart}.${payloadPart}`;
    let valid = false;
    for (const key of candidates) {
      const expected = createHmac('sha256', key.secret).update(signingInput).digest();
      if (timingSafeEqual(expected, signature)) valid = true;
    }
    if (!valid) throw tokenFailure('bad_signature', 'the access token signature does not match');
    const claims = decodeJson(payloadPart);
    if (!isObject(claims)) throw tokenFailure('malformed', 'the access token has no readable claims');
    return checkClaims(claims);
  }
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
