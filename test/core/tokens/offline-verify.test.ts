import { execFile, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, removeTempDirs, ROOT, spawnServe, tempDir } from '../../cli/helpers';
import { ADMIN, READER, startTestServer, type TestServer } from '../../http/helpers';
import { createCatalog } from '../../../src/index';
import { createMemoryAdapter } from '../../../adapters/memory/index';

// The example verifier runs as its own Node process (it imports only jose) against a live server on 127.0.0.1.
const EXAMPLE = join(ROOT, 'examples/verify-token-remotely.mjs');
const run = promisify(execFile);

async function verifyElsewhere(url: string, token: string, revocationsToken?: string): Promise<Record<string, unknown>> {
  const args = [EXAMPLE, url, token, ...(revocationsToken ? [revocationsToken] : [])];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: ROOT, timeout: 20_000 });
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch (error) {
    const { stdout, code } = error as { stdout?: string; code?: number };
    expect(code).toBe(1);
    return JSON.parse(String(stdout)) as Record<string, unknown>;
  }
}

const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;

afterAll(() => removeTempDirs());

describe.each([
  ['EdDSA', () => generateKeyPairSync('ed25519')],
  ['ES256', () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' })],
] as const)('a %s catalog, verified by another process through the JWKS route', (algorithm, generate) => {
  let t: TestServer;
  afterAll(() => t?.close());

  it('accepts its tokens (also under /gms), refuses another catalog’s, and refuses a revoked one once the deny-list has it', async () => {
    const key = generate().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    t = await startTestServer({ catalog: { tokenSigningKey: undefined, tokenSigning: { algorithm, keys: [key] } } });
    const created = await t.catalog.tokens.create(ADMIN, {
      type: 'PERSONAL',
      actorUrn: READER,
      duration: 'ONE_DAY',
      name: 'for the gateway',
    });
    expect(header(created.accessToken).alg).toBe(algorithm);

    for (const base of [t.url, `${t.url}/gms`]) {
      expect(await verifyElsewhere(base, created.accessToken, t.adminToken)).toEqual({
        ok: true,
        actorUrn: READER,
        tokenId: created.metadata.id,
        expiresAt: Math.ceil(created.metadata.expiresAt! / 1000) * 1000,
      });
    }

    const jwks = await fetch(`${t.url}/.well-known/jwks.json`);
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await jwks.json()).toEqual(await t.catalog.tokens.jwks());

    // Another catalog's token of the same algorithm: its kid is unknown here, its signature does not match.
    const other = createCatalog({
      adapter: createMemoryAdapter(),
      superUsers: [ADMIN],
      tokenSigning: { algorithm, keys: [generate().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()] },
    });
    const foreign = (await other.tokens.issueBootstrapToken({ actorUrn: ADMIN })).accessToken;
    await other.close();
    expect(await verifyElsewhere(t.url, foreign)).toEqual({ ok: false, reason: 'bad_signature' });

    await t.catalog.tokens.revoke(ADMIN, created.metadata.id);
    // Without the deny-list the signature alone still passes: that is the trade-off the revocation feed closes.
    expect(await verifyElsewhere(t.url, created.accessToken)).toMatchObject({ ok: true });
    expect(await verifyElsewhere(t.url, created.accessToken, t.adminToken)).toEqual({ ok: false, reason: 'revoked' });
  });
});

describe('metacatalog serve --token-algorithm EdDSA', () => {
  it('generates and keeps an Ed25519 key (mode 0600), serves its public key, and keeps the algorithm on restart', async () => {
    const db = join(tempDir(), 'eddsa.db');
    const s = await spawnServe(['--db', db, '--quiet', '--token-algorithm', 'EdDSA']);
    try {
      const keyFile = `${db}.signing-key`;
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
      expect(s.output()).toContain(`/.well-known/jwks.json`);
      expect(header(s.token!).alg).toBe('EdDSA');
      const jwks = (await (await fetch(`${s.url}/gms/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> };
      expect(jwks.keys).toEqual([
        expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: header(s.token!).kid }),
      ]);
      expect(jwks.keys[0]).not.toHaveProperty('d');
      expect(await verifyElsewhere(s.url, s.token!, s.token!)).toMatchObject({ ok: true, actorUrn: ADMIN });
    } finally {
      s.child.kill('SIGTERM');
      await s.exit;
    }

    // Restarted without the option: the key file says EdDSA; the bootstrap token still verifies.
    const again = await spawnServe(['--db', db, '--quiet']);
    try {
      expect((await fetch(`${again.url}/.well-known/jwks.json`)).status).toBe(200);
      expect(await verifyElsewhere(again.url, s.token!)).toMatchObject({ ok: true });
    } finally {
      again.child.kill('SIGTERM');
      await again.exit;
    }

    // Asking for another algorithm over the existing key is refused, naming the way out.
    const refused = spawnSync(process.execPath, [CLI, 'serve', '--db', db, '--port', '0', '--token-algorithm', 'HS256'], {
      encoding: 'utf8',
    });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/is for EdDSA, not HS256/);
  });

  it('an HS256 service answers the JWKS route with 404 saying why', async () => {
    // The route's answer, not the command line's: served in this process (the command line's default is HS256 too).
    const s = await startTestServer();
    try {
      const r = await fetch(`${s.url}/.well-known/jwks.json`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/HS256, a shared secret/);
    } finally {
      await s.close();
    }
  });
});
