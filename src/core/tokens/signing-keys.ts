import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Violation } from '../../errors';

/**
 * The token signing configuration, checked synchronously (`createCatalog` is synchronous): every key is
 * parsed with node:crypto here, so a key of the wrong type or size fails at `createCatalog` naming the
 * option path. Signing and verifying (jwt.ts) take the parsed keys as they are.
 */

export const TOKEN_SIGNING_ALGORITHMS = ['EdDSA', 'ES256', 'HS256'] as const;
export type TokenSigningAlgorithm = (typeof TOKEN_SIGNING_ALGORITHMS)[number];

/** A key given as a JSON Web Key: `kty` `OKP` (Ed25519), `EC` (P-256) or `oct` (HS256); with `d` it is private. */
export interface TokenSigningJwk {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  crv?: string;
  x?: string;
  y?: string;
  d?: string;
  k?: string;
}

/** A string (the secret for HS256, a PEM key otherwise) or a JWK. */
export type TokenSigningKeyInput = string | TokenSigningJwk;

/** `createCatalog({ tokenSigning })`: the first key signs, every key verifies. */
export interface TokenSigningOptions {
  algorithm: TokenSigningAlgorithm;
  keys: readonly TokenSigningKeyInput[];
}

/** A public key as `/.well-known/jwks.json` serves it. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: TokenSigningAlgorithm;
  use: 'sig';
}

export interface JsonWebKeySet {
  keys: PublicJwk[];
}

/** One checked key. For HS256 `secret` both signs and verifies; otherwise `privateKey` (absent: verify only) and `publicKey`. */
export interface ParsedSigningKey {
  kid: string;
  secret?: Uint8Array;
  privateKey?: KeyObject;
  publicKey?: KeyObject;
  publicJwk?: PublicJwk;
}

export interface ParsedTokenSigning {
  algorithm: TokenSigningAlgorithm;
  keys: ParsedSigningKey[];
}

const MIN_SECRET_BYTES = 32;
const PEM = /-----BEGIN [A-Z0-9 ]*-----/;

/** A short, public identifier of an HS256 secret: the first 8 hex digits of its SHA-256 (the 0.2 `kid`). */
export function keyIdOf(secret: string | Uint8Array): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 8);
}

/** The RFC 7638 thumbprint of a public key (base64url SHA-256 of its required members, in order). */
function thumbprintOf(jwk: JsonWebKey): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the algorithm takes, for messages. */
const WANTED: Record<TokenSigningAlgorithm, string> = {
  EdDSA: 'an Ed25519 key (PEM or JWK with kty OKP, crv Ed25519)',
  ES256: 'a P-256 EC key (PEM or JWK with kty EC, crv P-256)',
  HS256: `a shared secret of at least ${MIN_SECRET_BYTES} bytes (a string, or a JWK with kty oct)`,
};

function describeKey(key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  return `${key.asymmetricKeyType ?? 'unknown'}${curve ? ` (${curve})` : bits ? ` (${bits} bits)` : ''}`;
}

function fitsAlgorithm(algorithm: TokenSigningAlgorithm, key: KeyObject): boolean {
  if (algorithm === 'EdDSA') return key.asymmetricKeyType === 'ed25519';
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

function parseSecret(input: unknown, path: string, violations: Violation[]): ParsedSigningKey | undefined {
  if (typeof input === 'string') {
    // A PEM key as an HMAC secret is the algorithm-confusion setup (a public key would let anyone sign).
    if (PEM.test(input)) {
      violations.push({ path, message: `is a PEM key; HS256 takes ${WANTED.HS256} (for a key pair use algorithm EdDSA or ES256)` });
      return undefined;
    }
    if (Buffer.byteLength(input) < MIN_SECRET_BYTES) {
      violations.push({ path, message: `must be at least ${MIN_SECRET_BYTES} bytes long` });
      return undefined;
    }
    return { kid: keyIdOf(input), secret: Buffer.from(input, 'utf8') };
  }
  if (!isObject(input) || input.kty !== 'oct' || typeof input.k !== 'string') {
    const kind = isObject(input) && typeof input.kty === 'string' ? `a JWK with kty ${input.kty}` : 'neither a string nor a JWK';
    violations.push({ path, message: `is ${kind}; HS256 takes ${WANTED.HS256}` });
    return undefined;
  }
  if (input.alg !== undefined && input.alg !== 'HS256') {
    violations.push({ path: `${path}.alg`, message: `is ${JSON.stringify(input.alg)}; the catalog's algorithm is HS256` });
    return undefined;
  }
  const secret = Buffer.from(input.k, 'base64url');
  if (secret.length < MIN_SECRET_BYTES) {
    violations.push({ path: `${path}.k`, message: `must hold at least ${MIN_SECRET_BYTES} bytes, has ${secret.length}` });
    return undefined;
  }
  return { kid: typeof input.kid === 'string' && input.kid !== '' ? input.kid : keyIdOf(secret), secret };
}

/** A PEM text or a JWK as a node:crypto key: private when it can be, else public. */
function importAsymmetric(input: unknown, path: string, violations: Violation[]): KeyObject | undefined {
  if (typeof input === 'string') {
    if (!PEM.test(input)) {
      violations.push({ path, message: 'is not a PEM key (a PKCS#8 private key or an SPKI public key; an HS256 secret does not fit)' });
      return undefined;
    }
    try {
      return createPrivateKey(input);
    } catch {
      try {
        return createPublicKey(input);
      } catch (error) {
        violations.push({ path, message: `is not a readable PEM key: ${(error as Error).message}` });
        return undefined;
      }
    }
  }
  if (!isObject(input) || typeof input.kty !== 'string') {
    violations.push({ path, message: 'must be a PEM string or a JWK object' });
    return undefined;
  }
  if (input.kty === 'oct') {
    violations.push({ path, message: 'is a shared secret (kty oct); only HS256 takes one' });
    return undefined;
  }
  try {
    const jwk = input as JsonWebKey;
    return input.d !== undefined ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: jwk, format: 'jwk' });
  } catch (error) {
    violations.push({ path, message: `is not a usable JWK: ${(error as Error).message}` });
    return undefined;
  }
}

function parseAsymmetric(
  algorithm: Exclude<TokenSigningAlgorithm, 'HS256'>,
  input: unknown,
  path: string,
  violations: Violation[],
): ParsedSigningKey | undefined {
  if (isObject(input)) {
    if (input.alg !== undefined && input.alg !== algorithm) {
      violations.push({ path: `${path}.alg`, message: `is ${JSON.stringify(input.alg)}; the catalog's algorithm is ${algorithm}` });
      return undefined;
    }
    if (input.use !== undefined && input.use !== 'sig') {
      violations.push({ path: `${path}.use`, message: `is ${JSON.stringify(input.use)}; a signing key has use "sig"` });
      return undefined;
    }
  }
  const key = importAsymmetric(input, path, violations);
  if (!key) return undefined;
  if (!fitsAlgorithm(algorithm, key)) {
    violations.push({ path, message: `is an ${describeKey(key)} key; ${algorithm} takes ${WANTED[algorithm]}` });
    return undefined;
  }
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const exported = publicKey.export({ format: 'jwk' });
  const kid = isObject(input) && typeof input.kid === 'string' && input.kid !== '' ? input.kid : thumbprintOf(exported);
  const publicJwk: PublicJwk = {
    kty: String(exported.kty),
    crv: String(exported.crv),
    x: String(exported.x),
    ...(exported.y !== undefined ? { y: String(exported.y) } : {}),
    kid,
    alg: algorithm,
    use: 'sig',
  };
  return { kid, publicKey, publicJwk, ...(key.type === 'private' ? { privateKey: key } : {}) };
}

function parseKeys(algorithm: TokenSigningAlgorithm, inputs: readonly unknown[], path: (i: number) => string, violations: Violation[]) {
  const before = violations.length;
  const keys = inputs.map((input, i) =>
    algorithm === 'HS256' ? parseSecret(input, path(i), violations) : parseAsymmetric(algorithm, input, path(i), violations),
  );
  const first = keys[0];
  if (first && algorithm !== 'HS256' && !first.privateKey) {
    violations.push({ path: path(0), message: 'is a public key; the first key signs new tokens, so it must be a private key' });
  }
  const seen = new Map<string, number>();
  keys.forEach((key, i) => {
    if (!key) return;
    const earlier = seen.get(key.kid);
    if (earlier !== undefined) {
      violations.push({ path: path(i), message: `has the same kid "${key.kid}" as ${path(earlier)} (a key listed twice?)` });
    } else seen.set(key.kid, i);
  });
  return violations.length === before ? (keys as ParsedSigningKey[]) : undefined;
}

/**
 * Checks `tokenSigning` (or the HS256 shorthand `tokenSigningKey`), adding a violation per bad part;
 * undefined when none is configured or something is wrong.
 */
export function parseTokenSigning(
  options: { tokenSigningKey?: unknown; tokenSigning?: unknown },
  violations: Violation[],
): ParsedTokenSigning | undefined {
  const { tokenSigningKey, tokenSigning } = options;
  if (tokenSigning !== undefined && tokenSigningKey !== undefined) {
    violations.push({ path: 'tokenSigning', message: 'give tokenSigning or tokenSigningKey (HS256), not both' });
    return undefined;
  }
  if (tokenSigningKey !== undefined) {
    const list = Array.isArray(tokenSigningKey);
    const inputs: unknown[] = list ? tokenSigningKey : [tokenSigningKey];
    if (inputs.length === 0) {
      violations.push({ path: 'tokenSigningKey', message: 'must name at least one key' });
      return undefined;
    }
    const before = violations.length;
    inputs.forEach((key, i) => {
      if (typeof key !== 'string')
        violations.push({ path: list ? `tokenSigningKey[${i}]` : 'tokenSigningKey', message: 'must be a string' });
    });
    if (violations.length > before) return undefined;
    const keys = parseKeys('HS256', inputs, (i) => (list ? `tokenSigningKey[${i}]` : 'tokenSigningKey'), violations);
    return keys && { algorithm: 'HS256', keys };
  }
  if (tokenSigning === undefined) return undefined;
  if (!isObject(tokenSigning)) {
    violations.push({ path: 'tokenSigning', message: 'must be an object { algorithm, keys }' });
    return undefined;
  }
  const { algorithm, keys } = tokenSigning;
  const before = violations.length;
  if (typeof algorithm !== 'string' || !(TOKEN_SIGNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    violations.push({ path: 'tokenSigning.algorithm', message: `must be one of ${TOKEN_SIGNING_ALGORITHMS.join(', ')}` });
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    violations.push({ path: 'tokenSigning.keys', message: 'must be a non-empty array (the first key signs, every key verifies)' });
  }
  if (violations.length > before) return undefined;
  const parsed = parseKeys(algorithm as TokenSigningAlgorithm, keys as unknown[], (i) => `tokenSigning.keys[${i}]`, violations);
  return parsed && { algorithm: algorithm as TokenSigningAlgorithm, keys: parsed };
}
