import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compactVerify, createLocalJWKSet, jwtVerify } from 'jose';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog, type CatalogOptions, type TokenSigningOptions } from '../../../src/index';
import { SigningKeys } from '../../../src/core/tokens/jwt';

const ADMIN = 'urn:li:corpuser:admin';
const ALICE = 'urn:li:corpuser:alice';

const pem = (key: KeyObject, type: 'pkcs8' | 'spki') => key.export({ type, format: 'pem' }).toString();
const ed25519 = () => generateKeyPairSync('ed25519');
const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const opened: Catalog[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});

function open(options: Partial<CatalogOptions>, clock?: () => number): Catalog {
  const catalog = createCatalog({
    adapter: createMemoryAdapter(),
    superUsers: [ADMIN],
    jobs: { background: false },
    ...(clock ? { clock } : {}),
    ...options,
  });
  opened.push(catalog);
  return catalog;
}

function violationsOf(tokenSigning: unknown): Array<{ path: string; message: string }> {
  try {
    createCatalog({ adapter: createMemoryAdapter(), tokenSigning: tokenSigning as TokenSigningOptions });
  } catch (error) {
    expect((error as { code?: string }).code).toBe('INVALID_INPUT');
    return [...(error as { details: Array<{ path: string; message: string }> }).details];
  }
  throw new Error('expected createCatalog to refuse the options');
}

const token = async (catalog: Catalog, actorUrn = ADMIN) =>
  (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn, duration: 'ONE_DAY', name: 't' })).accessToken;

const headerOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;

describe('tokens of release 0.2 (HS256, signed by the hand-written code before jose)', () => {
  // Made with the 0.2 SigningKeys over this key: header { alg: HS256, typ: JWT, kid: "331183e7" }.
  const KEY = 'release-0.2-signing-key-0123456789abcdef';
  const WITH_EXPIRY =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IjMzMTE4M2U3In0.eyJzdWIiOiJ1cm46bGk6Y29ycHVzZXI6YWxpY2UiLCJqdGkiOiI3ZDNmMGE1Mi0yYzFlLTRmNGItOWQ1NS0wZTZhOGMxYjJmOTAiLCJ0eXBlIjoiUEVSU09OQUwiLCJpYXQiOjE3NjAwMDAwMDAsImV4cCI6MTc2MDA4NjQwMCwiaXNzIjoibWV0YWNhdGFsb2cifQ.uUOycdOq_x1Nu9EeIxQZ-tWXYu6ihwwYkebPXtUSl7g';
  const NO_EXPIRY =
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IjMzMTE4M2U3In0.eyJzdWIiOiJ1cm46bGk6Y29ycHVzZXI6Ym9iIiwianRpIjoiMWYwYzllN2EtNWIzZC00YTJlLThjNjEtOWQ3ZTNiNGE1YzEyIiwidHlwZSI6IlBFUlNPTkFMIiwiaWF0IjoxNzYwMDAwMDAwLCJpc3MiOiJtZXRhY2F0YWxvZyJ9.GY9xi2rzLfJ8a9LKnP_ePeFaflJa_DdaviaJi_JFqzw';
  const claims = {
    sub: ALICE,
    jti: '7d3f0a52-2c1e-4f4b-9d55-0e6a8c1b2f90',
    type: 'PERSONAL',
    iat: 1_760_000_000,
    exp: 1_760_086_400,
    iss: 'metacatalog',
  };

  it('verify with the same key, as tokenSigningKey or as tokenSigning HS256, and jose signs them byte for byte alike', async () => {
    for (const keys of [new SigningKeys([KEY]), new SigningKeys(['another-signing-key-0123456789abcdef-xyz', KEY])]) {
      expect(await keys.verify(WITH_EXPIRY)).toEqual(claims);
      expect(await keys.verify(NO_EXPIRY)).toMatchObject({ sub: 'urn:li:corpuser:bob', jti: '1f0c9e7a-5b3d-4a2e-8c61-9d7e3b4a5c12' });
    }
    expect(await new SigningKeys([KEY]).sign(claims)).toBe(WITH_EXPIRY);
    // Through createCatalog both spellings of the configuration name the same key (the record is what is missing here).
    for (const options of [{ tokenSigningKey: KEY }, { tokenSigning: { algorithm: 'HS256' as const, keys: [KEY] } }]) {
      const catalog = open(options, () => 1_760_000_100_000);
      await expect(catalog.tokens.verify(WITH_EXPIRY)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
      await expect(catalog.tokens.verify(`${WITH_EXPIRY.slice(0, -2)}AA`)).rejects.toMatchObject({ reason: 'bad_signature' });
    }
  });
});

describe.each([
  ['EdDSA', ed25519, 'OKP'],
  ['ES256', p256, 'EC'],
] as const)('%s', (algorithm, generate, kty) => {
  it('signs with the private key; verifies in process and with jose over the published key set', async () => {
    const { privateKey, publicKey } = generate();
    const catalog = open({ tokenSigning: { algorithm, keys: [pem(privateKey, 'pkcs8')] } });
    const jwt = await token(catalog, ADMIN);
    expect(headerOf(jwt)).toMatchObject({ alg: algorithm, typ: 'JWT' });
    expect(await catalog.tokens.verify(jwt)).toMatchObject({ actorUrn: ADMIN });
    const jwks = await catalog.tokens.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty, alg: algorithm, use: 'sig', kid: headerOf(jwt).kid });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), { issuer: 'metacatalog', algorithms: [algorithm] });
    expect(payload.sub).toBe(ADMIN);
    // The published key is the key pair's public half.
    expect(await compactVerify(jwt, publicKey)).toBeDefined();
  });

  it('takes JWK objects as well as PEM, and public keys that only verify', async () => {
    const signer = generate();
    const retired = generate();
    const jwk = {
      ...(signer.privateKey.export({ format: 'jwk' }) as Record<string, string>),
      kid: 'signer-2026',
    } as TokenSigningOptions['keys'][number];
    const catalog = open({ tokenSigning: { algorithm, keys: [jwk, pem(retired.publicKey, 'spki')] } });
    const jwt = await token(catalog);
    expect(headerOf(jwt).kid).toBe('signer-2026');
    expect((await catalog.tokens.jwks()).keys.map((k) => k.kid)[0]).toBe('signer-2026');
    expect((await catalog.tokens.jwks()).keys).toHaveLength(2);
    expect(await catalog.tokens.verify(jwt)).toMatchObject({ actorUrn: ADMIN });
  });
});

describe('rotation', () => {
  it('old tokens verify while their key is listed, and fail with bad_signature once it is dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metacatalog-rotation-'));
    const oldKey = pem(ed25519().privateKey, 'pkcs8');
    const newKey = pem(ed25519().privateKey, 'pkcs8');
    // One database, opened again with each configuration (as a restarted service would).
    const at = (keys: string[]) =>
      createCatalog({
        adapter: createSqliteAdapter({ filename: join(dir, 'catalog.db') }),
        superUsers: [ADMIN],
        jobs: { background: false },
        tokenSigning: { algorithm: 'EdDSA', keys },
      });
    const first = at([oldKey]);
    const oldToken = await token(first);
    await first.close();
    const rotated = at([newKey, oldKey]);
    const newToken = await token(rotated);
    expect(headerOf(newToken).kid).not.toBe(headerOf(oldToken).kid);
    expect(await rotated.tokens.verify(oldToken)).toMatchObject({ actorUrn: ADMIN });
    expect(await rotated.tokens.verify(newToken)).toMatchObject({ actorUrn: ADMIN });
    expect((await rotated.tokens.jwks()).keys.map((k) => k.kid)).toEqual([headerOf(newToken).kid, headerOf(oldToken).kid]);
    await rotated.close();
    const dropped = at([newKey]);
    await expect(dropped.tokens.verify(oldToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
    expect(await dropped.tokens.verify(newToken)).toMatchObject({ actorUrn: ADMIN });
    expect((await dropped.tokens.jwks()).keys).toHaveLength(1);
    await dropped.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('no algorithm confusion', () => {
  const pair = ed25519();
  const publicPem = pem(pair.publicKey, 'spki');

  async function forgeries(catalog: Catalog) {
    const real = await token(catalog);
    const [header, payload, signature] = real.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const hs256 = (secret: string | Buffer, kid = headerOf(real).kid) => {
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
    };
    const jwk = pair.publicKey.export({ format: 'jwk' });
    return {
      real,
      // The classic: HS256 with the published public key as the HMAC secret (as PEM text, as DER, as the JWK's x).
      hs256WithPublicPem: hs256(publicPem),
      hs256WithPublicDer: hs256(pair.publicKey.export({ type: 'spki', format: 'der' })),
      hs256WithJwkX: hs256(Buffer.from(String(jwk.x), 'base64url')),
      hs256WithoutKid: hs256(publicPem, undefined),
      none: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      noneWithSignature: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`,
      stripped: `${header}.${payload}.`,
      strippedDot: `${header}.${payload}`,
      otherAlgorithm: `${b64({ ...headerOf(real), alg: 'ES256' })}.${payload}.${signature}`,
      lowercase: `${b64({ ...headerOf(real), alg: 'eddsa' })}.${payload}.${signature}`,
    };
  }

  it('an EdDSA catalog refuses HS256 tokens keyed with its public key, alg none, stripped signatures and other algorithms', async () => {
    const catalog = open({ tokenSigning: { algorithm: 'EdDSA', keys: [pem(pair.privateKey, 'pkcs8')] } });
    const { real, ...forged } = await forgeries(catalog);
    expect(await catalog.tokens.verify(real)).toMatchObject({ actorUrn: ADMIN });
    for (const [name, jwt] of Object.entries(forged)) {
      const failure = await catalog.tokens.verify(jwt).then(
        () => undefined,
        (error: { code?: string; reason?: string }) => ({ code: error.code, reason: error.reason }),
      );
      expect({ name, failure }).toEqual({
        name,
        failure: { code: 'UNAUTHENTICATED', reason: name === 'none' || name.startsWith('stripped') ? 'malformed' : 'bad_signature' },
      });
    }
  });

  it('an HS256 catalog refuses EdDSA tokens, and a PEM key is never taken as an HMAC secret', async () => {
    const eddsa = open({ tokenSigning: { algorithm: 'EdDSA', keys: [pem(pair.privateKey, 'pkcs8')] } });
    const hs = open({ tokenSigningKey: 'hs256-catalog-signing-key-0123456789abcdef' });
    await expect(hs.tokens.verify(await token(eddsa))).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
    expect(violationsOf({ algorithm: 'HS256', keys: [publicPem] })[0]).toMatchObject({ path: 'tokenSigning.keys[0]' });
    expect(() => createCatalog({ adapter: createMemoryAdapter(), tokenSigningKey: publicPem })).toThrow(/tokenSigningKey is a PEM key/);
    await expect(hs.tokens.jwks()).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('HS256') });
  });
});

describe('bad signing configuration is refused at createCatalog, naming the option path', () => {
  const ed = ed25519();
  const ec = p256();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
  const edPem = pem(ed.privateKey, 'pkcs8');

  it.each([
    ['an unknown algorithm', { algorithm: 'RS256', keys: [edPem] }, 'tokenSigning.algorithm', /one of EdDSA, ES256, HS256/],
    ['no keys', { algorithm: 'EdDSA', keys: [] }, 'tokenSigning.keys', /non-empty/],
    ['an RSA key for EdDSA', { algorithm: 'EdDSA', keys: [pem(rsa.privateKey, 'pkcs8')] }, 'tokenSigning.keys[0]', /rsa.*Ed25519/],
    ['a P-256 key for EdDSA', { algorithm: 'EdDSA', keys: [pem(ec.privateKey, 'pkcs8')] }, 'tokenSigning.keys[0]', /ec \(prime256v1\)/],
    ['a P-384 key for ES256', { algorithm: 'ES256', keys: [pem(p384.privateKey, 'pkcs8')] }, 'tokenSigning.keys[0]', /secp384r1.*P-256/],
    ['an Ed25519 key for ES256', { algorithm: 'ES256', keys: [edPem] }, 'tokenSigning.keys[0]', /ed25519/],
    [
      'a secret for EdDSA',
      { algorithm: 'EdDSA', keys: ['a-shared-secret-of-enough-length-0123456789'] },
      'tokenSigning.keys[0]',
      /not a PEM key/,
    ],
    ['a short HS256 secret', { algorithm: 'HS256', keys: ['short'] }, 'tokenSigning.keys[0]', /at least 32 bytes/],
    ['a short oct JWK', { algorithm: 'HS256', keys: [{ kty: 'oct', k: 'c2hvcnQ' }] }, 'tokenSigning.keys[0].k', /at least 32 bytes/],
    ['an oct JWK for EdDSA', { algorithm: 'EdDSA', keys: [{ kty: 'oct', k: 'x'.repeat(64) }] }, 'tokenSigning.keys[0]', /only HS256/],
    [
      'a JWK naming another algorithm',
      { algorithm: 'ES256', keys: [{ ...ec.privateKey.export({ format: 'jwk' }), alg: 'ES384' }] },
      'tokenSigning.keys[0].alg',
      /ES256/,
    ],
    [
      'an unreadable PEM',
      { algorithm: 'EdDSA', keys: ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'] },
      'tokenSigning.keys[0]',
      /PEM/,
    ],
    [
      'a public key first (it would have to sign)',
      { algorithm: 'EdDSA', keys: [pem(ed.publicKey, 'spki'), edPem] },
      'tokenSigning.keys[0]',
      /private key/,
    ],
    ['the same key twice', { algorithm: 'EdDSA', keys: [edPem, pem(ed.publicKey, 'spki')] }, 'tokenSigning.keys[1]', /same kid/],
    [
      'two keys with the same kid',
      {
        algorithm: 'ES256',
        keys: [
          { ...ec.privateKey.export({ format: 'jwk' }), kid: 'k1' },
          { ...p256().publicKey.export({ format: 'jwk' }), kid: 'k1' },
        ],
      },
      'tokenSigning.keys[1]',
      /same kid "k1"/,
    ],
    ['not an object', 'EdDSA', 'tokenSigning', /object/],
  ])('%s', (_name, tokenSigning, path, message) => {
    const violations = violationsOf(tokenSigning);
    expect(violations.map((v) => v.path)).toContain(path);
    expect(violations.find((v) => v.path === path)!.message).toMatch(message);
  });

  it('refuses tokenSigning beside tokenSigningKey, and changes nothing', () => {
    expect(() =>
      createCatalog({
        adapter: createMemoryAdapter(),
        tokenSigningKey: 'x'.repeat(32),
        tokenSigning: { algorithm: 'EdDSA', keys: [edPem] },
      }),
    ).toThrow(/tokenSigning give tokenSigning or tokenSigningKey/);
  });
});
