import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createFetchHandler } from '../../../src/http/index';
import { createCatalog, type Catalog, type StorageAdapter } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const ALICE = 'urn:li:corpuser:alice';
const GATEWAY = 'urn:li:corpuser:gateway';

let catalog: Catalog | undefined;
afterEach(async () => {
  await catalog?.close();
  catalog = undefined;
});

function open(adapter: StorageAdapter = createMemoryAdapter()) {
  const clock = { now: 1_800_000_000_000 };
  catalog = createCatalog({
    adapter,
    tokenSigningKey: 'revocation-test-signing-key-0123456789abcdef',
    superUsers: [ADMIN],
    policies: [
      { actors: [ALICE], privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'] },
      { actors: [GATEWAY], privileges: ['VIEW_TOKEN_REVOCATIONS'] },
    ],
    tokens: { allowNoExpiry: true },
    clock: () => clock.now,
    jobs: { background: false },
  });
  return { catalog, clock, adapter };
}

const create = (c: Catalog, duration: 'ONE_HOUR' | 'ONE_DAY' | 'NO_EXPIRY') =>
  c.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration, name: duration });

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: { code?: string }) => error.code,
  );
}

describe('the revocation feed', () => {
  it('lists each revoked token until it expires, oldest revocation first; the clean-up then removes its record', async () => {
    const { catalog: c, clock, adapter } = open();
    const recordOf = async (urn: string) => (await adapter.readEntities([urn], ['ServiceAccessTokenInfo']))[0];
    const hour = await create(c, 'ONE_HOUR');
    const day = await create(c, 'ONE_DAY');
    const never = await create(c, 'NO_EXPIRY');
    const live = await create(c, 'ONE_DAY');
    expect((await c.tokens.revocations(GATEWAY)).revoked).toEqual([]);

    clock.now += 1000;
    await c.tokens.revoke(ALICE, day.metadata.id);
    clock.now += 1000;
    await c.tokens.revoke(ALICE, hour.metadata.urn);
    clock.now += 1000;
    await c.tokens.revoke(ADMIN, never.metadata.id);

    // The record stays, marked, without the token's hash.
    const kept = await recordOf(day.metadata.urn);
    expect(kept?.aspects.ServiceAccessTokenInfo?.value).toMatchObject({ revokedAt: clock.now - 2000, actorUrn: ALICE });
    expect(kept?.aspects.ServiceAccessTokenInfo?.systemMetadata ?? {}).not.toHaveProperty('tokenHash');
    // Revoked: refused at once by the catalog, gone from listings, not revocable twice.
    for (const t of [hour, day, never]) {
      await expect(c.tokens.verify(t.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
      expect(await codeOf(c.tokens.revoke(ALICE, t.metadata.id))).toBe('NOT_FOUND');
    }
    expect((await c.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE }] })).tokens.map((t) => t.id)).toEqual([
      live.metadata.id,
    ]);
    expect(await c.tokens.verify(live.accessToken)).toMatchObject({ actorUrn: ALICE });

    const all = await c.tokens.revocations(GATEWAY);
    expect(all.revoked).toEqual([
      { tokenId: day.metadata.id, expiresAt: day.metadata.expiresAt },
      { tokenId: hour.metadata.id, expiresAt: hour.metadata.expiresAt },
      { tokenId: never.metadata.id, expiresAt: null },
    ]);

    // The one-hour token expires: out of the feed at once (verifiers refuse it by its exp), then its record goes.
    clock.now = hour.metadata.expiresAt!;
    expect((await c.tokens.revocations(GATEWAY)).revoked.map((r) => r.tokenId)).toEqual([day.metadata.id, never.metadata.id]);
    expect(await recordOf(hour.metadata.urn)).toMatchObject({ urn: hour.metadata.urn });
    expect(await c.tokens.removeExpired(ADMIN)).toBe(1);
    expect(await recordOf(hour.metadata.urn)).toBeUndefined();

    clock.now = day.metadata.expiresAt! + 1;
    expect((await c.tokens.revocations(GATEWAY)).revoked).toEqual([{ tokenId: never.metadata.id, expiresAt: null }]);
    // The live one-day token expired too: the clean-up takes both records.
    expect(await c.tokens.removeExpired(ADMIN)).toBe(2);
    expect((await c.tokens.revocations(GATEWAY)).revoked).toEqual([{ tokenId: never.metadata.id, expiresAt: null }]);
  });

  it('pages with after; a full page continues exactly, a short one starts a minute back so late revocations are not skipped', async () => {
    const { catalog: c, clock } = open();
    const tokens = [];
    for (let i = 0; i < 5; i++) tokens.push(await create(c, 'ONE_DAY'));
    for (const t of tokens) {
      clock.now += 10;
      await c.tokens.revoke(ALICE, t.metadata.id);
    }
    const ids = tokens.map((t) => t.metadata.id);
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await c.tokens.revocations(GATEWAY, { limit: 2, ...(after ? { after } : {}) });
      seen.push(...page.revoked.map((r) => r.tokenId));
      after = page.next;
      if (page.revoked.length < 2) break;
    }
    expect(seen).toEqual(ids);
    // Caught up: the next read repeats what was revoked within the last minute (a set absorbs the repeats)...
    const repeated = await c.tokens.revocations(GATEWAY, { after });
    expect(repeated.revoked.map((r) => r.tokenId)).toEqual(ids);
    // ...and once that minute has passed, a cursor handed out then no longer reaches back to them.
    clock.now += 61_000;
    const settled = await c.tokens.revocations(GATEWAY, { after: repeated.next });
    const quiet = await c.tokens.revocations(GATEWAY, { after: settled.next });
    expect(quiet.revoked).toEqual([]);
    // A revocation stamped before the reader's cursor (committed late, or by an instance whose clock is behind) still arrives.
    const late = await create(c, 'ONE_DAY');
    clock.now -= 30_000;
    await c.tokens.revoke(ALICE, late.metadata.id);
    clock.now += 30_000;
    expect((await c.tokens.revocations(GATEWAY, { after: quiet.next })).revoked).toEqual([
      { tokenId: late.metadata.id, expiresAt: late.metadata.expiresAt },
    ]);
  });

  it('needs VIEW_TOKEN_REVOCATIONS; refuses a malformed cursor or limit', async () => {
    const { catalog: c } = open();
    const refused = await c.tokens.revocations(ALICE).catch((error: { code: string; message: string }) => error);
    expect(refused).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('VIEW_TOKEN_REVOCATIONS') });
    expect((await c.tokens.revocations(ADMIN)).revoked).toEqual([]);
    expect(await codeOf(c.tokens.revocations(GATEWAY, { after: 'not-a-cursor' }))).toBe('INVALID_INPUT');
    expect(await codeOf(c.tokens.revocations(GATEWAY, { limit: 0 }))).toBe('INVALID_INPUT');
    expect(await codeOf(c.tokens.revocations(GATEWAY, { limit: 1001 }))).toBe('INVALID_INPUT');
  });

  it('GET /openapi/v2/tokens/revocations (also under /gms): 200 { revoked, next }, 401 without a token, 403 without the privilege', async () => {
    const { catalog: c } = open();
    const handler = createFetchHandler(c);
    const gateway = (await c.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: GATEWAY, duration: 'ONE_DAY', name: 'gateway' }))
      .accessToken;
    const alice = await create(c, 'ONE_DAY');
    await c.tokens.revoke(ALICE, alice.metadata.id);
    const get = (path: string, token?: string) =>
      handler(new Request(`http://localhost${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }));
    for (const prefix of ['', '/gms']) {
      const ok = await get(`${prefix}/openapi/v2/tokens/revocations?limit=10`, gateway);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      const body = (await ok.json()) as { revoked: unknown[]; next: string };
      expect(body.revoked).toEqual([{ tokenId: alice.metadata.id, expiresAt: alice.metadata.expiresAt }]);
      const again = await get(`${prefix}/openapi/v2/tokens/revocations?after=${encodeURIComponent(body.next)}`, gateway);
      expect(again.status).toBe(200);
    }
    expect((await get('/openapi/v2/tokens/revocations')).status).toBe(401);
    const other = (await create(c, 'ONE_DAY')).accessToken;
    expect((await get('/openapi/v2/tokens/revocations', other)).status).toBe(403);
    expect((await get('/openapi/v2/tokens/revocations?limit=x', gateway)).status).toBe(400);
  });
});
