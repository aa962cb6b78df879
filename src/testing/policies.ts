import { ADMIN, ALICE, BOB, CAROL, failure, failurePaths, MANAGER, secondCatalog, withCatalog } from './catalog-support';
import type { ConformanceHarness } from './types';

/** Stored policies: managed with MANAGE_POLICIES, read by the authorization check on every call. */
export function registerPolicyTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('stored policies', () => {
    it('take effect on the next call when created, deactivated, changed and removed', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const everyone = { filters: [] };
        expect(await failure(catalog.tokens.list(CAROL, everyone))).toEqual({ code: 'FORBIDDEN', reason: 'MANAGE_ACCESS_TOKENS' });

        const policy = await catalog.policies.create(ADMIN, {
          name: 'token managers',
          description: 'may manage every token',
          privileges: ['MANAGE_ACCESS_TOKENS'],
          actors: { users: [CAROL] },
        });
        expect(policy).toEqual({
          urn: policy.urn,
          // A policy without resources is a platform policy: it grants everywhere.
          type: 'PLATFORM',
          name: 'token managers',
          description: 'may manage every token',
          state: 'ACTIVE',
          privileges: ['MANAGE_ACCESS_TOKENS'],
          actors: { users: [CAROL], allUsers: false },
        });
        expect(policy.urn.startsWith('urn:li:policy:')).toBe(true);
        expect((await catalog.tokens.list(CAROL, everyone)).total).toBe(0);
        expect(await catalog.privilegesOf(CAROL)).toEqual(['MANAGE_ACCESS_TOKENS']);

        const inactive = await catalog.policies.update(ADMIN, policy.urn, { state: 'INACTIVE' });
        expect([inactive.state, inactive.name, inactive.description]).toEqual(['INACTIVE', 'token managers', 'may manage every token']);
        expect(await failure(catalog.tokens.list(CAROL, everyone))).toEqual({ code: 'FORBIDDEN', reason: 'MANAGE_ACCESS_TOKENS' });

        await catalog.policies.update(ADMIN, policy.urn, {
          state: 'ACTIVE',
          actors: { allUsers: true },
          privileges: ['GENERATE_PERSONAL_ACCESS_TOKENS'],
        });
        expect(await catalog.privilegesOf(CAROL)).toEqual(['GENERATE_PERSONAL_ACCESS_TOKENS']);
        const own = await catalog.tokens.create(CAROL, { type: 'PERSONAL', actorUrn: CAROL, duration: 'ONE_DAY', name: 'c' });
        expect(own.metadata.ownerUrn).toBe(CAROL);

        expect(await catalog.policies.remove(ADMIN, policy.urn)).toBe(true);
        expect(await failure(catalog.tokens.create(CAROL, { type: 'PERSONAL', actorUrn: CAROL, duration: 'ONE_DAY', name: 'c' }))).toEqual({
          code: 'FORBIDDEN',
          reason: 'GENERATE_PERSONAL_ACCESS_TOKENS',
        });
        expect(await failure(catalog.policies.remove(ADMIN, policy.urn))).toEqual({ code: 'NOT_FOUND' });
        expect(await failure(catalog.policies.update(ADMIN, policy.urn, { name: 'x' }))).toEqual({ code: 'NOT_FOUND' });
        expect(await catalog.policies.get(ADMIN, policy.urn)).toBeUndefined();
      });
    });

    it('are seen at once by another catalog on the same store', async () => {
      await withCatalog(harness, async (fixture) => {
        const other = await secondCatalog(fixture, {});
        try {
          const policy = await fixture.catalog.policies.create(ADMIN, {
            id: 'editors',
            name: 'editors',
            privileges: ['EDIT_ENTITY'],
            actors: { users: [BOB] },
          });
          expect(policy.urn).toBe('urn:li:policy:editors');
          expect((await other.privilegesOf(BOB)).includes('EDIT_ENTITY')).toBe(true);
          await fixture.catalog.policies.remove(ADMIN, policy.urn);
          expect((await other.privilegesOf(BOB)).includes('EDIT_ENTITY')).toBe(false);
          expect(
            await failure(
              fixture.catalog.policies.create(ADMIN, { id: 'editors', name: 'again', privileges: ['EDIT_ENTITY'], actors: {} }),
            ),
          ).toEqual({ code: 'none' });
          expect(
            await failure(
              fixture.catalog.policies.create(ADMIN, { id: 'editors', name: 'twice', privileges: ['EDIT_ENTITY'], actors: {} }),
            ),
          ).toEqual({ code: 'CONFLICT' });
        } finally {
          await other.close();
        }
      });
    });

    it('are listed, read and managed only with MANAGE_POLICIES', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const b = await catalog.policies.create(ADMIN, { name: 'b', privileges: ['EDIT_ENTITY'], actors: { users: [ALICE] } });
        const a = await catalog.policies.create(ADMIN, {
          name: 'a',
          state: 'INACTIVE',
          privileges: ['MANAGE_POLICIES'],
          actors: { users: [MANAGER] },
        });
        const listed = await catalog.policies.list(ADMIN);
        expect([listed.start, listed.count, listed.total]).toEqual([0, 2, 2]);
        expect(listed.policies.map((p) => p.name)).toEqual(['a', 'b']);
        expect((await catalog.policies.list(ADMIN, { start: 1, count: 5 })).policies.map((p) => p.urn)).toEqual([b.urn]);
        expect(await catalog.policies.get(ADMIN, a.urn)).toEqual(a);
        const described = await catalog.policies.update(ADMIN, b.urn, { description: 'editors' });
        expect(described.description).toBe('editors');
        const undescribed = await catalog.policies.update(ADMIN, b.urn, { description: null });
        expect(undescribed).toEqual({ ...b, description: undefined });
        expect(Object.keys((await catalog.policies.get(ADMIN, b.urn)) ?? {}).includes('description')).toBe(false);

        const refused = { code: 'FORBIDDEN', reason: 'MANAGE_POLICIES' };
        expect(await failure(catalog.policies.list(ALICE))).toEqual(refused);
        expect(await failure(catalog.policies.get(ALICE, a.urn))).toEqual(refused);
        expect(
          await failure(catalog.policies.create(ALICE, { name: 'mine', privileges: ['MANAGE_POLICIES'], actors: { users: [ALICE] } })),
        ).toEqual(refused);
        expect(await failure(catalog.policies.update(MANAGER, a.urn, { state: 'ACTIVE' }))).toEqual(refused);
        expect(await failure(catalog.policies.remove(ALICE, b.urn))).toEqual(refused);
        // Policies are not reachable through the generic entity API, except that a delete is routed here.
        expect(await catalog.entities.get(ADMIN, a.urn)).toBeUndefined();
        expect(await failure(catalog.entities.upsertAspect(ADMIN, a.urn, 'policyInfo', { name: 'x' }))).toEqual({ code: 'INVALID_INPUT' });
        expect(await catalog.entities.delete(ADMIN, a.urn)).toBe(true);
        expect((await catalog.policies.list(ADMIN)).total).toBe(1);
      });
    });

    it('refuse bad input naming every problem, and write nothing', async () => {
      await withCatalog(harness, async ({ catalog }) => {
        const bad = { name: '', privileges: ['FLY', 'FLY'], actors: { users: ['alice'], groups: [] }, state: 'ON' } as never;
        expect(await failure(catalog.policies.create(ADMIN, bad))).toEqual({ code: 'INVALID_INPUT' });
        expect((await failurePaths(catalog.policies.create(ADMIN, bad))).sort()).toEqual([
          '/actors/groups',
          '/name',
          '/privileges',
          '/privileges/0',
          '/privileges/1',
          '/state',
        ]);
        expect(
          await failurePaths(catalog.policies.create(ADMIN, { name: 'n', privileges: ['EDIT_ENTITY'], actors: { users: ['alice'] } })),
        ).toEqual(['/actors/users/0']);
        expect(await failurePaths(catalog.policies.create(ADMIN, { name: 'n', privileges: [], actors: {} }))).toEqual(['/privileges']);
        expect(await failure(catalog.policies.update(ADMIN, 'urn:li:dataset:x', { name: 'n' }))).toEqual({ code: 'INVALID_INPUT' });
        expect(await failure(catalog.policies.list(ADMIN, { count: -1 }))).toEqual({ code: 'INVALID_INPUT' });
        expect((await catalog.policies.list(ADMIN)).total).toBe(0);
      });
    });
  });
}
