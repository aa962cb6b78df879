import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../../src/index';
import { AccessState } from '../../../src/core/access/access-state';
import { freshAdapters } from '../../support/adapters';

const ADMIN = 'urn:li:corpuser:admin';
const ANA = 'urn:li:corpuser:ana';
const adapters = freshAdapters();
const open: Catalog[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

describe.each(Object.keys(adapters) as Array<'memory' | 'sqlite'>)('compiled policies (%s)', (kind) => {
  it('compiles once per change, however many checks; a change by any writer is seen on the next check', async () => {
    const adapter = adapters[kind]();
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
    open.push(catalog);
    await catalog.ready();
    // A second reader of the same store, as another process would be.
    const state = new AccessState(adapter, [], () => true);
    expect((await state.current()).grantsOf(ANA).everywhere.size).toBe(0);
    for (let i = 0; i < 20; i++) await state.current();
    expect(state.compilations).toBe(1);
    // Writes that are not policies do not recompile.
    await catalog.entities.upsertAspect(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)', 'datasetProperties', { name: 't' });
    await state.current();
    expect(state.compilations).toBe(1);
    const policy = await catalog.policies.create(ADMIN, { name: 'ana edits', privileges: ['EDIT_ENTITY'], actors: { users: [ANA] } });
    expect([...(await state.current()).grantsOf(ANA).everywhere.keys()]).toEqual(['EDIT_ENTITY']);
    for (let i = 0; i < 20; i++) await state.current();
    expect(state.compilations).toBe(2);
    await catalog.policies.update(ADMIN, policy.urn, { state: 'INACTIVE' });
    expect((await state.current()).grantsOf(ANA).everywhere.size).toBe(0);
    expect(state.compilations).toBe(3);
  });

  it('without a change feed, reads the records on every check and compiles only when they differ', async () => {
    const adapter = adapters[kind]();
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, changes: { enabled: false } });
    open.push(catalog);
    await catalog.ready();
    const state = new AccessState(adapter, [], () => false);
    await catalog.policies.create(ADMIN, { name: 'ana edits', privileges: ['EDIT_ENTITY'], actors: { users: [ANA] } });
    for (let i = 0; i < 5; i++) expect((await state.current()).grantsOf(ANA).everywhere.has('EDIT_ENTITY')).toBe(true);
    expect(state.compilations).toBe(1);
    const { policies } = await catalog.policies.list(ADMIN);
    await catalog.policies.remove(ADMIN, policies[0]!.urn);
    expect((await state.current()).grantsOf(ANA).everywhere.size).toBe(0);
    expect(state.compilations).toBe(2);
    // The catalog itself follows too: the write is refused at once.
    expect(
      await catalog.authorize(ANA, 'EDIT_ENTITY').then(
        () => 'allowed',
        (e: { code: string }) => e.code,
      ),
    ).toBe('FORBIDDEN');
  });
});
