import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'bootstrap-test-signing-key-0123456789abcdef';

function catalog() {
  return createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], tokenSigningKey: KEY, jobs: { background: false } });
}

describe('catalog.tokens.ensureBootstrapToken: when a start hands out a first admin token', () => {
  it('issues one while the catalog holds no token, then no more unless the storage is fresh or it is forced', async () => {
    const c = catalog();
    const first = await c.tokens.ensureBootstrapToken({ actorUrn: ADMIN });
    expect(first?.metadata.actorUrn).toBe(ADMIN);
    expect((await c.tokens.verify(first!.accessToken)).actorUrn).toBe(ADMIN);
    expect(await c.tokens.ensureBootstrapToken({ actorUrn: ADMIN })).toBeUndefined();
    expect(await c.tokens.ensureBootstrapToken({ actorUrn: ADMIN, fresh: true })).toBeDefined();
    expect(await c.tokens.ensureBootstrapToken({ actorUrn: ADMIN, force: true, name: 'lost' })).toMatchObject({
      metadata: { name: 'lost' },
    });
    expect((await c.tokens.list(ADMIN, {})).total).toBe(3);
    await c.close();
  });

  it('refuses an actor that is not a super user, issuing nothing', async () => {
    const c = catalog();
    await expect(c.tokens.ensureBootstrapToken({ actorUrn: 'urn:li:corpuser:mallory', force: true })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await c.tokens.list(ADMIN, {})).total).toBe(0);
    await c.close();
  });
});
