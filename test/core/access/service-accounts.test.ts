import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { adaptersWithPostgres } from '../../support/postgres';

const ADMIN = 'urn:li:corpuser:admin';
const KEEPER = 'urn:li:corpuser:keeper';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
const KEY = 'service-accounts-test-signing-key-0123456789';

const adapters = await adaptersWithPostgres('test/core/access/service-accounts.test.ts');
const open: Catalog[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

describe.each(Object.keys(adapters))('service accounts on %s', (kind) => {
  it('are actors that policies name; disabling one revokes its tokens at once and takes its privileges', async () => {
    const adapter = adapters[kind]!();
    const catalog = createCatalog({
      adapter,
      tokenSigningKey: KEY,
      superUsers: [ADMIN],
      policies: [{ actors: [KEEPER], privileges: ['MANAGE_SERVICE_ACCOUNTS'] }],
      jobs: { background: false },
    });
    open.push(catalog);
    // Another process sharing the store: test/cli/service-account-workers.test.ts (serve --workers 2).
    const other = catalog;

    const account = await catalog.serviceAccounts.create(KEEPER, { id: 'etl', displayName: 'nightly ETL' });
    expect(account).toMatchObject({
      urn: 'urn:li:corpuser:service_etl',
      id: 'etl',
      displayName: 'nightly ETL',
      disabled: false,
      createdBy: KEEPER,
    });
    expect(await codeOf(catalog.serviceAccounts.create(KEEPER, { id: 'etl' }))).toBe('CONFLICT');
    expect(await codeOf(catalog.serviceAccounts.create(KEEPER, { id: 'bad id!' }))).toBe('INVALID_INPUT');
    expect(await codeOf(catalog.serviceAccounts.create('urn:li:corpuser:nobody', { id: 'x' }))).toBe('FORBIDDEN');
    // Its record is written only by catalog.serviceAccounts.
    expect(await codeOf(catalog.entities.upsertAspect(ADMIN, account.urn, 'serviceAccountInfo', { disabled: false }))).toBe(
      'INVALID_INPUT',
    );

    await catalog.policies.create(ADMIN, { name: 'etl writes', privileges: ['EDIT_ENTITY'], actors: { users: [account.urn] } });
    // A keeper without MANAGE_ACCESS_TOKENS cannot make its tokens; an admin can.
    expect(await codeOf(catalog.tokens.create(KEEPER, { type: 'PERSONAL', actorUrn: account.urn, duration: 'ONE_DAY', name: 'etl' }))).toBe(
      'FORBIDDEN',
    );
    const { accessToken, metadata } = await catalog.tokens.create(ADMIN, {
      type: 'PERSONAL',
      actorUrn: account.urn,
      duration: 'ONE_DAY',
      name: 'etl',
    });
    expect((await other.tokens.verify(accessToken)).actorUrn).toBe(account.urn);
    await other.entities.upsertAspect(account.urn, DATASET, 'datasetProperties', { name: 'orders' });
    expect((await catalog.serviceAccounts.list(KEEPER)).map((a) => a.urn)).toEqual([account.urn]);

    const disabled = await catalog.serviceAccounts.disable(KEEPER, account.urn);
    expect(disabled).toMatchObject({ disabled: true, disabledAt: expect.any(Number) });
    // At once: the token fails verification, the account holds nothing, no new token.
    expect(await codeOf(other.tokens.verify(accessToken))).toBe('UNAUTHENTICATED');
    expect(await codeOf(other.entities.upsertAspect(account.urn, DATASET, 'datasetProperties', { name: 'x' }))).toBe('FORBIDDEN');
    expect(await other.privilegesOf(account.urn)).toEqual([]);
    expect((await catalog.tokens.revocations(ADMIN)).revoked.map((r) => r.tokenId)).toContain(metadata.id);
    expect(await codeOf(catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: account.urn, duration: 'ONE_DAY', name: 'x' }))).toBe(
      'FORBIDDEN',
    );
    expect(await catalog.access.explain(ADMIN, { privilege: 'EDIT_ENTITY', actorUrn: account.urn })).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('disabled'),
    });

    await catalog.serviceAccounts.enable(KEEPER, account.urn);
    expect(await other.privilegesOf(account.urn)).toEqual(['EDIT_ENTITY']);
    expect(await codeOf(other.tokens.verify(accessToken))).toBe('UNAUTHENTICATED');
    const fresh = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: account.urn, duration: 'ONE_DAY', name: 'again' });
    expect((await other.tokens.verify(fresh.accessToken)).actorUrn).toBe(account.urn);
    await catalog.serviceAccounts.remove(KEEPER, account.urn);
    expect(await catalog.serviceAccounts.list(KEEPER)).toEqual([]);
    expect(await codeOf(other.tokens.verify(fresh.accessToken))).toBe('UNAUTHENTICATED');
    expect(await codeOf(catalog.serviceAccounts.disable(KEEPER, account.urn))).toBe('NOT_FOUND');
  });
});
