import { ADMIN, ALICE, failure, withCatalog } from './catalog-support';
import type { ConformanceHarness } from './types';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,scoped.orders,PROD)';
const TIER = 'urn:li:structuredProperty:scoped.tier';

/** Scoped tokens: a token carries at most its owner's power, intersected again at every request. */
export function registerTokenScopeTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;
  /** Alice edits properties and entities through a stored policy, so that it can be taken back. */
  const withEditor = (test: Parameters<typeof withCatalog>[1]) =>
    withCatalog(harness, async (fixture) => {
      await fixture.catalog.policies.create(ADMIN, {
        name: 'alice edits',
        actors: { users: [ALICE] },
        privileges: ['EDIT_ENTITY_PROPERTIES', 'EDIT_ENTITY', 'GENERATE_PERSONAL_ACCESS_TOKENS'],
      });
      await fixture.catalog.properties.create(ADMIN, { qualifiedName: 'scoped.tier', valueType: 'string', entityTypes: ['dataset'] });
      await test(fixture);
    });
  const values = [{ propertyUrn: TIER, values: [{ string: 'gold' }] }];

  describe('scoped access tokens', () => {
    it('a scoped token allows what its scopes name and the user holds, nothing else; listed and verified with its scopes', async () => {
      await withEditor(async ({ catalog }) => {
        const created = await catalog.tokens.create(ALICE, {
          type: 'PERSONAL',
          actorUrn: ALICE,
          duration: 'ONE_DAY',
          name: 'ci',
          privileges: ['EDIT_ENTITY_PROPERTIES'],
        });
        expect(created.metadata.privileges).toEqual(['EDIT_ENTITY_PROPERTIES']);
        const verified = await catalog.tokens.verify(created.accessToken);
        expect(verified.privileges).toEqual(['EDIT_ENTITY_PROPERTIES']);
        const actor = { urn: verified.actorUrn, scopes: verified.privileges ?? [] };
        await catalog.properties.upsertValues(actor, DATASET, { properties: values });
        expect(await failure(catalog.entities.upsertAspect(actor, DATASET, 'datasetProperties', { name: 'orders' }))).toEqual({
          code: 'FORBIDDEN',
          reason: 'EDIT_ENTITY',
        });
        expect(await catalog.privilegesOf(actor)).toEqual(['EDIT_ENTITY_PROPERTIES']);
        const listed = await catalog.tokens.list(ALICE, { filters: [{ field: 'ownerUrn', value: ALICE }] });
        expect(listed.tokens.map((t) => t.privileges)).toEqual([['EDIT_ENTITY_PROPERTIES']]);
      });
    });

    it('a privilege taken from the user is gone from the token at once', async () => {
      await withEditor(async ({ catalog }) => {
        const actor = { urn: ALICE, scopes: ['EDIT_ENTITY_PROPERTIES'] };
        await catalog.properties.upsertValues(actor, DATASET, { properties: values });
        const [policy] = (await catalog.policies.list(ADMIN)).policies;
        await catalog.policies.update(ADMIN, policy!.urn, { privileges: ['EDIT_ENTITY'] });
        expect(await failure(catalog.properties.upsertValues(actor, DATASET, { properties: values }))).toEqual({
          code: 'FORBIDDEN',
          reason: 'EDIT_ENTITY_PROPERTIES',
        });
      });
    });

    it('READ_ONLY reads and writes nothing', async () => {
      await withEditor(async ({ catalog }) => {
        const created = await catalog.tokens.create(ALICE, {
          type: 'PERSONAL',
          actorUrn: ALICE,
          duration: 'ONE_HOUR',
          name: 'reader',
          privileges: ['READ_ONLY'],
        });
        const actor = { urn: ALICE, scopes: created.metadata.privileges ?? [] };
        expect(await catalog.entities.get(actor, DATASET)).toBeUndefined();
        expect(await failure(catalog.properties.upsertValues(actor, DATASET, { properties: values }))).toEqual({
          code: 'FORBIDDEN',
          reason: 'EDIT_ENTITY_PROPERTIES',
        });
        expect(
          await failure(
            catalog.tokens.create(actor, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_HOUR', name: 'x', privileges: ['READ_ONLY'] }),
          ),
        ).toEqual({
          code: 'FORBIDDEN',
          reason: 'GENERATE_PERSONAL_ACCESS_TOKENS',
        });
      });
    });

    it('scopes must be held by the user, and a scoped token cannot mint a wider (or unscoped) one; nothing is created', async () => {
      await withEditor(async ({ catalog }) => {
        expect(
          await failure(
            catalog.tokens.create(ALICE, {
              type: 'PERSONAL',
              actorUrn: ALICE,
              duration: 'ONE_HOUR',
              name: 'x',
              privileges: ['MANAGE_POLICIES'],
            }),
          ),
        ).toEqual({
          code: 'INVALID_INPUT',
        });
        expect(
          await failure(
            catalog.tokens.create(ALICE, {
              type: 'PERSONAL',
              actorUrn: ALICE,
              duration: 'ONE_HOUR',
              name: 'x',
              privileges: ['NOT_A_PRIVILEGE'],
            }),
          ),
        ).toEqual({
          code: 'INVALID_INPUT',
        });
        const minter = { urn: ALICE, scopes: ['GENERATE_PERSONAL_ACCESS_TOKENS', 'EDIT_ENTITY_PROPERTIES'] };
        expect(
          await failure(
            catalog.tokens.create(minter, {
              type: 'PERSONAL',
              actorUrn: ALICE,
              duration: 'ONE_HOUR',
              name: 'x',
              privileges: ['EDIT_ENTITY'],
            }),
          ),
        ).toEqual({
          code: 'FORBIDDEN',
          reason: 'scopes',
        });
        expect(
          await failure(catalog.tokens.create(minter, { type: 'PERSONAL', actorUrn: ALICE, duration: 'ONE_HOUR', name: 'x' })),
        ).toEqual({ code: 'FORBIDDEN', reason: 'scopes' });
        expect((await catalog.tokens.list(ADMIN, {})).total).toBe(0);
        const narrower = await catalog.tokens.create(minter, {
          type: 'PERSONAL',
          actorUrn: ALICE,
          duration: 'ONE_HOUR',
          name: 'x',
          privileges: ['EDIT_ENTITY_PROPERTIES'],
        });
        expect(narrower.metadata.privileges).toEqual(['EDIT_ENTITY_PROPERTIES']);
      });
    });
  });
}
