import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf, SigningKeys, type AccessTokenClaims } from '../../../src/core/tokens/jwt';

const KEY_A = 'unit-test-signing-key-A-0123456789abcdef';
const KEY_B = 'unit-test-signing-key-B-fedcba9876543210';
const claims: AccessTokenClaims = {
  sub: 'urn:li:corpuser:alice',
  jti: '0b7e5c1e-4b1f-4d0e-9a3a-4a1f0f7a0c11',
  type: 'PERSONAL',
  iat: 1_700_000_000,
  exp: 1_700_003_600,
  iss: 'metacatalog',
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function handMade(header: unknown, payload: unknown, key: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

async function failureOf(run: () => unknown): Promise<{ code?: unknown; reason?: unknown; cause?: unknown; message: string }> {
  try {
    await run();
  } catch (error) {
    const e = error as { code?: unknown; reason?: unknown; cause?: unknown; message: string };
    return { code: e.code, reason: e.reason, cause: e.cause, message: e.message };
  }
  throw new Error('expected a failure');
}

describe('HS256 tokens', () => {
  it('signs with the first key, names it in the header, and verifies the claims back', async () => {
    const keys = new SigningKeys([KEY_A, KEY_B]);
    const token = await keys.sign(claims);
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as unknown);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(KEY_A) });
    expect(payload).toEqual(claims);
    expect(await keys.verify(token)).toEqual(claims);
    expect(await new SigningKeys([KEY_B, KEY_A]).verify(token)).toEqual(claims);
  });

  it('verifies a token it verified before from memory, and still refuses any other spelling of it', async () => {
    const keys = new SigningKeys([KEY_A]);
    const token = await keys.sign(claims);
    const first = await keys.verify(token);
    first.sub = 'urn:li:corpuser:mallory'; // a caller changing its copy changes nothing kept
    expect(await keys.verify(token)).toEqual(claims);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'urn:li:corpuser:mallory' })).toString('base64url')}.${signature}`;
    expect(await failureOf(() => keys.verify(forged))).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
    expect(await failureOf(() => keys.verify(`${header}.${payload}.${signature.slice(0, -2)}`))).toMatchObject({ reason: 'bad_signature' });
  });

  it('gives every key a short public id', () => {
    expect(keyIdOf(KEY_A)).toMatch(/^[0-9a-f]{8}$/);
    expect(keyIdOf(KEY_A)).not.toBe(keyIdOf(KEY_B));
  });

  it('tries every key when the header names none', async () => {
    const token = handMade({ alg: 'HS256', typ: 'JWT' }, claims, KEY_A);
    expect(await new SigningKeys([KEY_B, KEY_A]).verify(token)).toEqual(claims);
    expect((await failureOf(() => new SigningKeys([KEY_B]).verify(token))).reason).toBe('bad_signature');
  });

  it('refuses other algorithms, unknown keys, wrong and non-canonical signatures as bad_signature', async () => {
    const keys = new SigningKeys([KEY_A]);
    const token = await keys.sign(claims);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    const hs512 = handMade({ alg: 'HS512', typ: 'JWT', kid: keyIdOf(KEY_A) }, claims, KEY_A);
    const otherKid = handMade({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(KEY_B) }, claims, KEY_B);
    const sameKidWrongKey = handMade({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(KEY_A) }, claims, KEY_B);
    // The last character of 43 base64url characters carries 2 unused bits: another spelling of the same bytes.
    const last = signature.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)]!;
    const nonCanonical = `${header}.${payload}.${signature.slice(0, -1)}${sibling}`;
    expect(Buffer.from(nonCanonical.split('.')[2]!, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    for (const bad of [hs512, otherKid, sameKidWrongKey, nonCanonical, `${header}.${payload}.${signature.slice(0, -2)}`]) {
      expect(await failureOf(() => keys.verify(bad))).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
    }
    expect(await failureOf(() => keys.verify(none))).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'malformed' });
  });

  it('refuses what is not a JWT, and signed tokens with bad claims, as malformed', async () => {
    const keys = new SigningKeys([KEY_A]);
    const kid = keyIdOf(KEY_A);
    const cases: unknown[] = [
      undefined,
      42,
      '',
      'a.b',
      'a.b.c.d',
      'a b.c.d',
      `${'x'.repeat(9000)}.y.z`,
      `${Buffer.from('{not json').toString('base64url')}.e30.AAAA`,
      `${b64([1, 2])}.e30.AAAA`,
      handMade({ alg: 'HS256', kid }, '[]', KEY_A),
      handMade({ alg: 'HS256', kid }, { ...claims, jti: 'has spaces' }, KEY_A),
      handMade({ alg: 'HS256', kid }, { ...claims, sub: 'alice' }, KEY_A),
      handMade({ alg: 'HS256', kid }, { ...claims, iss: 'someone-else' }, KEY_A),
      handMade({ alg: 'HS256', kid }, { ...claims, exp: '1700003600' }, KEY_A),
      handMade({ alg: 'HS256', kid }, { ...claims, iat: undefined }, KEY_A),
    ];
    for (const token of cases) {
      const failure = await failureOf(() => keys.verify(token as string));
      expect({ token: String(token).slice(0, 20), code: failure.code, reason: failure.reason }).toEqual({
        token: String(token).slice(0, 20),
        code: 'UNAUTHENTICATED',
        reason: 'malformed',
      });
    }
  });

  it('puts no part of the token in a failure, not even as a cause', async () => {
    const keys = new SigningKeys([KEY_A]);
    const [header, payload, signature] = (await keys.sign(claims)).split('.') as [string, string, string];
    const garbledPayload = `${payload.slice(0, 10)}$$`;
    for (const token of [`${header}.${payload}.${signature}x`, `${header}.${garbledPayload}.${signature}`, `${header}.${payload}`]) {
      const failure = await failureOf(() => keys.verify(token));
      expect(failure.cause).toBeUndefined();
      for (const part of [header, payload, signature]) expect(failure.message).not.toContain(part);
    }
  });
});
