/** The job type the catalog queues to remove expired token records (stored by the adapter, so visible to it). */
const REMOVE_EXPIRED_TOKENS_JOB = 'accessTokens.removeExpired';
import {
  ADMIN,
  ALICE,
  BOB,
  DAY,
  errorText,
  failure,
  failurePaths,
  HOUR,
  MANAGER,
  recordingAdapter,
  MINUTE,
  secondCatalog,
  withCatalog,
} from './catalog-support';
import { T0 } from './support';
import type { WriteBatch } from '../adapter/types';
import type { ConformanceHarness } from './types';

/** The rules around the scenarios: input, configuration, secrets, bootstrap, last use, clean-up, filters. */
export function registerTokenRuleTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('access tokens: rules', () => {
    it('refuses bad input naming every problem, and writes nothing', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const bad = { type: 'SERVICE', actorUrn: 'urn:li:dataset:x', duration: 'TWO_DAYS', name: '  ', extra: 1 } as never;
        expect(await failure(catalog.tokens.create(MANAGER, bad))).toEqual({ code: 'INVALID_INPUT' });
        expect((await failurePaths(catalog.tokens.create(MANAGER, bad))).sort()).toEqual(['/duration', '/extra', '/name', '/type']);
        const notAUser = { type: 'PERSONAL', actorUrn: 'urn:li:dataset:x', duration: 'ONE_DAY', name: 'n' } as const;
        expect(await failurePaths(catalog.tokens.create(MANAGER, notAUser))).toEqual(['/actorUrn']);
        expect(
          await failurePaths(catalog.tokens.create(MANAGER, { type: 'PERSONAL', actorUrn: MANAGER, duration: 'ONE_DAY' } as never)),
        ).toEqual(['/name']);
        expect(await failure(catalog.tokens.revoke(MANAGER, 'no spaces allowed'))).toEqual({ code: 'INVALID_INPUT' });
        expect(await failure(catalog.tokens.revoke(MANAGER, 'urn:li:accessToken:00000000-0000-0000-0000-000000000000'))).toEqual({
          code: 'NOT_FOUND',
        });
        expect(await failure(catalog.tokens.create('', { type: 'PERSONAL', actorUrn: MANAGER, duration: 'ONE_DAY', name: 'n' }))).toEqual({
          code: 'UNAUTHENTICATED',
          reason: 'missing',
        });
        expect((await catalog.tokens.list(MANAGER)).total).toBe(0);
      });
    });

    it('allows NO_EXPIRY only when configured, and lists never-expiring tokens first', async () => {
      await withCatalog(harness, async (fixture) => {
        const request = { type: 'PERSONAL', actorUrn: ALICE, duration: 'NO_EXPIRY', name: 'forever' } as const;
        expect(await failurePaths(fixture.catalog.tokens.create(ALICE, request))).toEqual(['/duration']);
        const allowing = await secondCatalog(fixture, { tokens: { allowNoExpiry: true } });
        try {
          const year = await allowing.tokens.create(ALICE, { ...request, duration: 'ONE_YEAR', name: 'year' });
          expect(year.metadata.expiresAt).toBe(T0 + 365 * DAY);
          const forever = await allowing.tokens.create(ALICE, request);
          expect(forever.metadata.expiresAt).toBe(null);
          fixture.clock.advance(10 * 365 * DAY);
          expect(await allowing.tokens.verify(forever.accessToken)).toEqual({
            actorUrn: ALICE,
            tokenId: forever.metadata.id,
            type: 'PERSONAL',
            expiresAt: null,
            privileges: null,
          });
          expect(await failure(allowing.tokens.verify(year.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'expired' });
          expect((await allowing.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE }] })).tokens.map((t) => t.name)).toEqual(
            ['forever', 'year'],
          );
        } finally {
          await allowing.close();
        }
      });
    });

    it('without a signing key, creation and verification are UNSUPPORTED while the rest works', async () => {
      await withCatalog(harness, async (fixture) => {
        const created = await fixture.catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' });
        const keyless = await secondCatalog(fixture, { tokenSigningKey: undefined });
        try {
          expect(
            await failure(keyless.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' })),
          ).toEqual({ code: 'UNSUPPORTED' });
          expect(await failure(keyless.tokens.verify(created.accessToken))).toEqual({ code: 'UNSUPPORTED' });
          expect(await failure(keyless.tokens.issueBootstrapToken({ actorUrn: ADMIN }))).toEqual({ code: 'UNSUPPORTED' });
          expect((await keyless.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE }] })).total).toBe(1);
          expect(await keyless.tokens.revoke(ALICE, created.metadata.id)).toBe(true);
        } finally {
          await keyless.close();
        }
      });
    });

    it('stores only a salted hash: the secret is in no record, no listing and no error', async () => {
      await withCatalog(harness, async ({ catalog, adapter }) => {
        const created = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' });
        const secret = created.accessToken;
        const signature = secret.split('.')[2]!;
        const stored = JSON.stringify(await adapter.scanEntities({ limit: 1000 }));
        expect(stored.includes(secret)).toBe(false);
        expect(stored.includes(signature)).toBe(false);
        expect(JSON.stringify(created.metadata).includes(signature)).toBe(false);
        expect(JSON.stringify(await catalog.tokens.list(MANAGER)).includes(signature)).toBe(false);
        // The hash and its salt are kept beside the aspect value, which holds only the metadata.
        const [record] = await adapter.readEntities([created.metadata.urn]);
        const meta = record?.aspects.ServiceAccessTokenInfo?.systemMetadata ?? {};
        expect([typeof meta.tokenHash, typeof meta.tokenSalt]).toEqual(['string', 'string']);
        expect(Object.keys(record?.aspects.ServiceAccessTokenInfo?.value ?? {}).sort()).toEqual([
          'actorUrn',
          'createdAt',
          'expiresAt',
          'name',
          'ownerUrn',
          'type',
        ]);

        await catalog.tokens.revoke(ALICE, created.metadata.id);
        const tampered = `${secret.slice(0, -2)}AA`;
        for (const attempt of [secret, tampered, `${secret}x`, secret.split('.').slice(0, 2).join('.')]) {
          const text = await errorText(catalog.tokens.verify(attempt));
          expect(text.length).toBeGreaterThan(0);
          expect(text.includes(signature)).toBe(false);
          expect(text.includes(secret.split('.')[1]!)).toBe(false);
        }
        expect((await errorText(catalog.tokens.getMetadata(MANAGER, secret))).includes(signature)).toBe(false);
      });
    });

    it('keeps token records out of the generic entity API; a generic delete revokes', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const created = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' });
        expect(await catalog.entities.get(ADMIN, created.metadata.urn)).toBeUndefined();
        expect(await catalog.entities.list(ADMIN, { entityType: 'accessToken' })).toEqual([]);
        expect(await failure(catalog.entities.upsertAspect(ADMIN, created.metadata.urn, 'ServiceAccessTokenInfo', { name: 'x' }))).toEqual({
          code: 'INVALID_INPUT',
        });
        expect(await failure(catalog.entities.delete(BOB, created.metadata.urn))).toEqual({
          code: 'FORBIDDEN',
          reason: 'MANAGE_ACCESS_TOKENS',
        });
        expect(await catalog.entities.delete(ALICE, created.metadata.urn)).toBe(true);
        expect(await failure(catalog.tokens.verify(created.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'revoked' });
      });
    });

    it('gives token and policy records no search document', async () => {
      const batches: WriteBatch[] = [];
      await withCatalog(
        harness,
        async ({ catalog, clock }) => {
          const created = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' });
          clock.advance(MINUTE);
          await catalog.tokens.verify(created.accessToken);
          const policy = await catalog.policies.create(ADMIN, { name: 'p', privileges: ['EDIT_ENTITY'], actors: { allUsers: true } });
          await catalog.policies.update(ADMIN, policy.urn, { name: 'q' });
          const writes = batches.flatMap((b) => b.entities ?? []).filter((w) => w.urn === created.metadata.urn || w.urn === policy.urn);
          expect(writes.map((w) => [w.urn, w.searchDocument])).toEqual([
            [created.metadata.urn, null],
            [created.metadata.urn, null],
            [policy.urn, null],
            [policy.urn, null],
          ]);
        },
        { wrapAdapter: (adapter) => recordingAdapter(adapter, batches) },
      );
    });

    it('issues a bootstrap token only for a configured super user', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const boot = await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN });
        expect([boot.metadata.name, boot.metadata.actorUrn, boot.metadata.ownerUrn, boot.metadata.expiresAt]).toEqual([
          'bootstrap',
          ADMIN,
          ADMIN,
          T0 + DAY,
        ]);
        const verified = await catalog.tokens.verify(boot.accessToken);
        expect(verified.actorUrn).toBe(ADMIN);
        // The token is a full admin credential: it can create tokens for others.
        const forBob = await catalog.tokens.create(verified.actorUrn, {
          type: 'PERSONAL',
          actorUrn: BOB,
          duration: 'ONE_HOUR',
          name: 'bob',
        });
        expect(forBob.metadata.ownerUrn).toBe(ADMIN);
        const named = await catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN, name: 'ops', duration: 'ONE_WEEK' });
        expect([named.metadata.name, named.metadata.expiresAt]).toEqual(['ops', T0 + 7 * DAY]);
        expect(await failure(catalog.tokens.issueBootstrapToken({ actorUrn: MANAGER }))).toEqual({
          code: 'FORBIDDEN',
          reason: 'superUsers',
        });
        expect(await failure(catalog.tokens.issueBootstrapToken({ actorUrn: 'nobody' }))).toEqual({ code: 'INVALID_INPUT' });
        expect(await failure(catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN, duration: 'NO_EXPIRY' }))).toEqual({
          code: 'INVALID_INPUT',
        });
      });
    });

    it('records lastUsedAt on verification at most once a minute, and lists it', async () => {
      await withCatalog(harness, async ({ catalog, clock, adapter }) => {
        const created = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'n' });
        const lastUsed = async () =>
          (await catalog.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE }] })).tokens[0]?.lastUsedAt;
        const version = async () => (await adapter.readEntities([created.metadata.urn]))[0]?.version;
        expect(created.metadata.lastUsedAt).toBe(null);
        expect(await lastUsed()).toBe(null);
        clock.advance(5_000);
        await catalog.tokens.verify(created.accessToken);
        expect(await lastUsed()).toBe(T0 + 5_000);
        const afterFirst = await version();
        clock.advance(30_000);
        await catalog.tokens.verify(created.accessToken);
        await catalog.tokens.verify(created.accessToken);
        expect(await lastUsed()).toBe(T0 + 5_000);
        expect(await version()).toBe(afterFirst);
        clock.advance(MINUTE);
        await catalog.tokens.verify(created.accessToken);
        expect(await lastUsed()).toBe(T0 + 95_000);
        // Reading the metadata is not a use.
        clock.advance(10 * MINUTE);
        expect((await catalog.tokens.getMetadata(MANAGER, created.accessToken)).lastUsedAt).toBe(T0 + 95_000);
        expect(await lastUsed()).toBe(T0 + 95_000);
        // Still verifiable afterwards: the hash survives the lastUsedAt writes.
        expect((await catalog.tokens.verify(created.accessToken)).actorUrn).toBe(ALICE);
        // Verifications racing each other all succeed and record one use.
        clock.advance(MINUTE);
        const racing = await Promise.all([1, 2, 3, 4].map(() => catalog.tokens.verify(created.accessToken)));
        expect(racing.map((v) => v.actorUrn)).toEqual([ALICE, ALICE, ALICE, ALICE]);
        expect(await lastUsed()).toBe(T0 + 95_000 + 11 * MINUTE);
      });
    });

    it('gives managers the metadata of a token; an invalid token is INVALID_INPUT with its reason', async () => {
      await withCatalog(harness, async ({ catalog, clock }) => {
        const created = await catalog.tokens.create(BOB, {
          type: 'PERSONAL',
          actorUrn: BOB,
          duration: 'ONE_HOUR',
          name: 'n',
          description: 'd',
        });
        expect(await catalog.tokens.getMetadata(MANAGER, created.accessToken)).toEqual(created.metadata);
        expect(await failure(catalog.tokens.getMetadata(BOB, created.accessToken))).toEqual({
          code: 'FORBIDDEN',
          reason: 'MANAGE_ACCESS_TOKENS',
        });
        expect(await failure(catalog.tokens.getMetadata(MANAGER, 'x.y'))).toEqual({ code: 'INVALID_INPUT', reason: 'malformed' });
        clock.advance(HOUR);
        expect(await failure(catalog.tokens.getMetadata(MANAGER, created.accessToken))).toEqual({
          code: 'INVALID_INPUT',
          reason: 'expired',
        });
      });
    });

    it('filters on ServiceAccessTokenInfo fields, pages, and counts every match', async () => {
      await withCatalog(harness, async ({ catalog, clock }) => {
        await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_HOUR', name: 'ci-hourly' });
        clock.advance(1);
        await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_WEEK', name: 'ci-weekly' });
        clock.advance(1);
        await catalog.tokens.create(MANAGER, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_DAY', name: 'Laptop' });
        clock.advance(2 * HOUR);
        const names = async (filters: Array<Record<string, unknown>>, start = 0, count = 10) =>
          (await catalog.tokens.list(MANAGER, { start, count, filters: filters as never })).tokens.map((t) => t.name);
        const now = String(clock.now());
        expect(await names([{ field: 'expiresAt', value: now, condition: 'LESS_THAN' }])).toEqual(['ci-hourly']);
        expect(await names([{ field: 'expiresAt', values: [now], condition: 'GREATER_THAN' }])).toEqual(['ci-weekly', 'Laptop']);
        expect(await names([{ field: 'name', value: 'ci-', condition: 'START_WITH' }])).toEqual(['ci-weekly', 'ci-hourly']);
        expect(await names([{ field: 'name', value: 'laptop', condition: 'IEQUAL' }])).toEqual(['Laptop']);
        expect(
          await names([
            { field: 'ownerUrn', value: ALICE },
            { field: 'name', value: 'weekly', condition: 'CONTAIN', negated: true },
          ]),
        ).toEqual(['ci-hourly']);
        expect(await names([{ field: 'description', condition: 'EXISTS' }])).toEqual([]);
        expect(await names([{ field: 'actorUrn', values: [ALICE, BOB], condition: 'IN' }])).toEqual(['ci-weekly', 'Laptop', 'ci-hourly']);
        const page = await catalog.tokens.list(MANAGER, { start: 1, count: 1, filters: [] });
        expect([page.start, page.count, page.total, page.tokens[0]?.name]).toEqual([1, 1, 3, 'Laptop']);
        expect((await catalog.tokens.list(MANAGER, { start: 5, count: 10 })).tokens).toEqual([]);

        const invalid = catalog.tokens.list(MANAGER, {
          count: 5000,
          filters: [
            { field: 'secret', value: 'x' },
            { field: 'expiresAt', value: 'soon', condition: 'LESS_THAN' },
            { field: 'name', condition: 'EQUAL' },
          ],
        });
        expect((await failurePaths(invalid)).sort()).toEqual(['/count', '/filters/0/field', '/filters/1/values/0', '/filters/2']);
        expect(
          await failure(catalog.tokens.list(MANAGER, { filters: [{ field: 'name', value: 'x', condition: 'LIKE' as never }] })),
        ).toEqual({ code: 'INVALID_INPUT' });
      });
    });

    it("removes expired tokens' records on demand and by the background job", async () => {
      await withCatalog(harness, async (fixture) => {
        const { catalog, clock } = fixture;
        const hour = await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_HOUR', name: 'hour' });
        await catalog.tokens.create(ALICE, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_DAY', name: 'day' });
        await catalog.tokens.create(BOB, { type: 'PERSONAL', actorUrn: BOB, duration: 'ONE_WEEK', name: 'week' });
        expect(await catalog.tokens.removeExpired(MANAGER)).toBe(0);
        clock.advance(HOUR);
        expect(await catalog.tokens.removeExpired(MANAGER)).toBe(1);
        expect(await failure(catalog.tokens.revoke(ALICE, hour.metadata.id))).toEqual({ code: 'NOT_FOUND' });
        expect(await failure(catalog.tokens.verify(hour.accessToken))).toEqual({ code: 'UNAUTHENTICATED', reason: 'expired' });

        // A catalog that starts while expired records exist queues the clean-up job.
        clock.advance(DAY);
        const restarted = await secondCatalog(fixture, {});
        try {
          expect((await restarted.listJobs()).map((job) => job.type)).toEqual([REMOVE_EXPIRED_TOKENS_JOB]);
          const report = await restarted.settle();
          expect([report.completed, report.failed.length]).toEqual([1, 0]);
          expect((await restarted.tokens.list(MANAGER)).tokens.map((t) => t.name)).toEqual(['week']);
          expect(await restarted.listJobs()).toEqual([]);
        } finally {
          await restarted.close();
        }
        // With nothing expired, starting queues nothing.
        const again = await secondCatalog(fixture, {});
        try {
          expect(await again.listJobs()).toEqual([]);
        } finally {
          await again.close();
        }
      });
    });
  });
}
