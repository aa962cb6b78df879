import { createHash, createHmac } from 'node:crypto';
import { ALICE, BOB, CAROL, DAY, failure, HOUR, KEY_A, KEY_B, MANAGER, secondCatalog, withCatalog } from './catalog-support';
import { registerPolicyTests } from './policies';
import { registerTokenRuleTests } from './token-rules';
import { registerTokenScopeTests } from './token-scopes';
import type { ConformanceHarness } from './types';

/**
 * Written here from the token format (an HS256 JWT whose `kid` is the first 8 hex digits of the key's
 * SHA-256), not taken from the catalog, so that the suite checks the format instead of trusting it.
 */
function keyIdOf(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 8);
}

/** Signs claims with `key` exactly as a catalog holding that key would. */
function signWith(key: string, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${part({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(key) })}.${part(claims)}`;
  return `${signingInput}.${createHmac('sha256', key).update(signingInput).digest('base64url')}`;
}

function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The scenarios of the access-token issue, run on a catalog over the harness's adapter. */
function registerTokenScenarioTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;
  const mine = (actor: string) => [{ field: 'ownerUrn', value: actor }];

  describe('access tokens: scenarios', () => {
    it('a manager creates, lists and revokes its own tokens', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const day = await catalog.tokens.create(MANAGER, { type: 'PERSONAL', actorUrn: MANAGER, duration: 'ONE_DAY', name: 'day' });
        const week = await catalog.tokens.create(MANAGER, {
          type: 'PERSONAL',
          actorUrn: MANAGER,
          duration: 'ONE_WEEK',
          name: 'week',
          description: 'ci',
        });
        expect(day.metadata.ownerUrn).toBe(MANAGER);
        expect(day.metadata.actorUrn).toBe(MANAGER);
        expect(week.metadata.description).toBe('ci');
        expect(week.metadata.urn).toBe(`urn:li:accessToken:${week.metadata.id}`);

        const listed = await catalog.tokens.list(MANAGER, { start: 0, count: 10, filters: mine(MANAGER) });
        expect(listed.total).toBe(2);
        // Newest expiry first.
        expect(listed.tokens.map((t) => t.name)).toEqual(['week', 'day']);
        expect(listed.tokens[0]).toEqual(week.metadata);

        expect(await catalog.tokens.revoke(MANAGER, day.metadata.id)).toBe(true);
        const after = await catalog.tokens.list(MANAGER, { filters: mine(MANAGER) });
        expect(after.tokens.map((t) => t.id)).toEqual([week.metadata.id]);
        expect(await failure(catalog.tokens.verify(day.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
        expect((await catalog.tokens.verify(week.accessToken)).actorUrn).toBe(MANAGER);
      });
    });

    it('a manager creates a token for another user (actor = the user, owner = the manager) and revokes it', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const created = await catalog.tokens.create(MANAGER, {
          type: 'PERSONAL',
          actorUrn: ALICE,
          duration: 'ONE_HOUR',
          name: 'for alice',
        });
        expect([created.metadata.actorUrn, created.metadata.ownerUrn]).toEqual([ALICE, MANAGER]);
        const verified = await catalog.tokens.verify(created.accessToken);
        expect(verified).toEqual({
          actorUrn: ALICE,
          tokenId: created.metadata.id,
          type: 'PERSONAL',
          expiresAt: created.metadata.expiresAt,
          privileges: null,
        });
        // Alice sees the token that acts as her; it is not hers to revoke (the owner or a manager is).
        const hers = await catalog.tokens.list(ALICE, { filters: [{ field: 'actorUrn', value: ALICE }] });
        expect(hers.tokens.map((t) => t.id)).toEqual([created.metadata.id]);
        expect(await failure(catalog.tokens.revoke(ALICE, created.metadata.id))).toEqual({
          code: 'FORBIDDEN',
          reason: 'MANAGE_ACCESS_TOKENS',
        });

        expect(await catalog.tokens.revoke(MANAGER, created.metadata.id)).toBe(true);
        expect(await failure(catalog.tokens.verify(created.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
        expect((await catalog.tokens.list(ALICE, { filters: [{ field: 'actorUrn', value: ALICE }] })).total).toBe(0);
      });
    });

    it('a user creates, lists (filtered on itself) and revokes its own token', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const created = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_MONTH', name: 'laptop' });
        await catalog.tokens.create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_MONTH', name: 'bob' });
        expect((await catalog.tokens.verify(created.accessToken)).actorUrn).toBe(ALICE);
        for (const field of ['ownerUrn', 'actorUrn']) {
          const listed = await catalog.tokens.list(ALICE, { start: 0, count: 10, filters: [{ field, value: ALICE }] });
          expect([listed.start, listed.count, listed.total]).toEqual([0, 1, 1]);
          expect(listed.tokens.map((t) => t.name)).toEqual(['laptop']);
        }
        expect(await catalog.tokens.revoke(ALICE, created.metadata.id)).toBe(true);
        expect((await catalog.tokens.list(ALICE, { filters: mine(ALICE) })).total).toBe(0);
        expect(await failure(catalog.tokens.revoke(ALICE, created.metadata.id))).toEqual({ code: 'NOT_FOUND' });
      });
    });

    it("a manager lists and revokes a user's token, and the user then sees none", async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const bobs = await catalog.tokens.create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'bob' });
        await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'alice' });
        const everyone = await catalog.tokens.list(MANAGER, { filters: [] });
        expect(everyone.total).toBe(2);
        const onlyBob = await catalog.tokens.list(MANAGER, { filters: mine(BOB) });
        expect(onlyBob.tokens.map((t) => t.id)).toEqual([bobs.metadata.id]);
        expect(await catalog.tokens.revoke(MANAGER, onlyBob.tokens[0]!.id)).toBe(true);
        expect(await catalog.tokens.list(BOB, { filters: mine(BOB) })).toEqual({ start: 0, count: 0, total: 0, tokens: [] });
        expect(await failure(catalog.tokens.verify(bobs.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
      });
    });

    it("a user cannot create a token for someone else, list without the self filter, or revoke another's token", async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const forbidden = { code: 'FORBIDDEN', reason: 'MANAGE_ACCESS_TOKENS' };
        expect(await failure(catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'x' }))).toEqual(
          forbidden,
        );
        expect(await failure(catalog.tokens.list(ALICE, { filters: [] }))).toEqual(forbidden);
        expect(await failure(catalog.tokens.list(ALICE))).toEqual(forbidden);
        expect(await failure(catalog.tokens.list(ALICE, { filters: mine(BOB) }))).toEqual(forbidden);
        expect(
          await failure(catalog.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', values: [ALICE, BOB], condition: 'IN' }] })),
        ).toEqual(forbidden);
        expect(await failure(catalog.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE, negated: true }] }))).toEqual(
          forbidden,
        );
        expect(await failure(catalog.tokens.list(ALICE, { filters: [{ field: 'name', value: 'bob' }] }))).toEqual(forbidden);

        const bobs = await catalog.tokens.create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'bob' });
        expect(await failure(catalog.tokens.revoke(ALICE, bobs.metadata.id))).toEqual(forbidden);
        expect((await catalog.tokens.verify(bobs.accessToken)).actorUrn).toBe(BOB);
        // Nothing was created for Bob by Alice.
        expect((await catalog.tokens.list(MANAGER)).tokens.map((t) => t.ownerUrn)).toEqual([BOB]);
      });
    });

    it('a user without GENERATE_PERSONAL_ACCESS_TOKENS cannot use the token API at all', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const forbidden = { code: 'FORBIDDEN', reason: 'GENERATE_PERSONAL_ACCESS_TOKENS' };
        const bobs = await catalog.tokens.create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'bob' });
        expect(await failure(catalog.tokens.create(CAROL, { type: 'PERSONAL', actorUrn: CAROL, duration: 'ONE_DAY', name: 'c' }))).toEqual(
          forbidden,
        );
        expect(await failure(catalog.tokens.list(CAROL, { filters: mine(CAROL) }))).toEqual(forbidden);
        expect(await failure(catalog.tokens.revoke(CAROL, bobs.metadata.id))).toEqual(forbidden);
        // Managing others' tokens needs even more.
        expect(await failure(catalog.tokens.list(CAROL, { filters: [] }))).toEqual({ code: 'FORBIDDEN', reason: 'MANAGE_ACCESS_TOKENS' });
        expect(await failure(catalog.tokens.getMetadata(CAROL, bobs.accessToken))).toEqual({
          code: 'FORBIDDEN',
          reason: 'MANAGE_ACCESS_TOKENS',
        });
        expect(await failure(catalog.tokens.removeExpired(CAROL))).toEqual({ code: 'FORBIDDEN', reason: 'MANAGE_ACCESS_TOKENS' });
        expect((await catalog.tokens.list(MANAGER)).total).toBe(1);
      });
    });

    it('expired, revoked, unknown-key, tampered and malformed tokens fail verification with distinct reasons', async () => {
      await withCatalog(harness, async ({ catalog, clock }) => {
        const create = (name: string, duration: 'ONE_HOUR' | 'ONE_DAY') =>
          catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration, name });
        const short = await create('short', 'ONE_HOUR');
        const revoked = await create('revoked', 'ONE_DAY');
        const valid = await create('valid', 'ONE_DAY');
        await catalog.tokens.revoke(ALICE, revoked.metadata.id);

        // The same claims signed with a key the catalog does not know.
        const foreign = signWith(KEY_B, claimsOf(valid.accessToken));
        // Claims changed after signing: act as the manager.
        const [header, , signature] = valid.accessToken.split('.');
        const forgedClaims = Buffer.from(JSON.stringify({ ...claimsOf(valid.accessToken), sub: MANAGER })).toString('base64url');
        const tampered = `${header}.${forgedClaims}.${signature}`;

        expect(await failure(catalog.tokens.verify(revoked.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
        expect(await failure(catalog.tokens.verify(foreign))).toEqual({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
        expect(await failure(catalog.tokens.verify(tampered))).toEqual({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
        expect(await failure(catalog.tokens.verify('not a token'))).toEqual({ code: 'UNAUTHENTICATED', reason: 'malformed' });
        expect(await failure(catalog.tokens.verify(`${header}.e30.${signature}`))).toEqual({
          code: 'UNAUTHENTICATED',
          reason: 'bad_signature',
        });

        expect((await catalog.tokens.verify(short.accessToken)).actorUrn).toBe(ALICE);
        clock.advance(HOUR);
        expect(await failure(catalog.tokens.verify(short.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'expired' });
        expect((await catalog.tokens.verify(valid.accessToken)).tokenId).toBe(valid.metadata.id);
        clock.advance(DAY);
        expect(await failure(catalog.tokens.verify(valid.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'expired' });
      });
    });

    it('a rotated key still verifies older tokens; the newest key signs', async () => {
      await withCatalog(harness, async (fixture) => {
        const old = await fixture.catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_WEEK', name: 'old' });
        expect(headerOf(old.accessToken)).toEqual({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(KEY_A) });

        const rotated = await secondCatalog(fixture, { tokenSigningKey: [KEY_B, KEY_A] });
        const onlyNew = await secondCatalog(fixture, { tokenSigningKey: KEY_B });
        try {
          expect((await rotated.tokens.verify(old.accessToken)).actorUrn).toBe(ALICE);
          const fresh = await rotated.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_WEEK', name: 'new' });
          expect(headerOf(fresh.accessToken).kid).toBe(keyIdOf(KEY_B));
          expect((await onlyNew.tokens.verify(fresh.accessToken)).actorUrn).toBe(ALICE);
          // Once the old key is dropped, tokens it signed stop working; the old catalog cannot verify new ones.
          expect(await failure(onlyNew.tokens.verify(old.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'bad_signature' });
          expect(await failure(fixture.catalog.tokens.verify(fresh.accessToken))).toEqual({
            code: 'UNAUTHENTICATED',
            reason: 'bad_signature',
          });
          // Revocation is seen at once by every catalog on the store.
          await rotated.tokens.revoke(ALICE, old.metadata.id);
          expect(await failure(fixture.catalog.tokens.verify(old.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
        } finally {
          await rotated.close();
          await onlyNew.close();
        }
      });
    });
  });
}

/** Access tokens and stored policies, end to end through `createCatalog` on the harness's adapter. */
export function registerTokenTests(harness: ConformanceHarness): void {
  registerTokenScenarioTests(harness);
  registerTokenRuleTests(harness);
  registerPolicyTests(harness);
  registerTokenScopeTests(harness);
}
