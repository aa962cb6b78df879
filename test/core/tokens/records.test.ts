import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../../src';
import type { StorageAdapter, StoredEntity } from '../../../src/adapter/types';
import { tokenUrn } from '../../../src/core/tokens/model';
import { TOKEN_RECORD_CACHE_LIMIT, TokenRecordCache } from '../../../src/core/tokens/records';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'records-test-signing-key-0123456789abcdef-xyz';

/** A store of one aspect per URN whose change token is a counter the test moves; counts its reads. */
function fakeStore(changeToken: boolean) {
  const state = { token: 1, reads: 0, records: new Map<string, StoredEntity>() };
  const adapter = {
    capabilities: { changeToken },
    changeToken: async () => String(state.token),
    readEntities: async (urns: readonly string[]) => {
      state.reads++;
      return urns.flatMap((urn) => (state.records.has(urn) ? [state.records.get(urn)!] : []));
    },
  } as unknown as StorageAdapter;
  const record = (urn: string, revoked: boolean): StoredEntity =>
    ({ urn, entityType: 'dataHubAccessToken', version: 1, aspects: { a: { value: { revoked } } } }) as unknown as StoredEntity;
  return { state, adapter, record };
}

describe('token records kept while the store says nothing changed', () => {
  it('reads a record once while the change token holds, again once it moves, and remembers absence too', async () => {
    const { state, adapter, record } = fakeStore(true);
    state.records.set('urn:t:1', record('urn:t:1', false));
    const cache = new TokenRecordCache(adapter, 'a');
    expect((await cache.read('urn:t:1'))?.aspects).toEqual({ a: { value: { revoked: false } } });
    await cache.read('urn:t:1');
    expect(await cache.read('urn:t:2')).toBeUndefined();
    expect(await cache.read('urn:t:2')).toBeUndefined();
    expect(state.reads).toBe(2);

    // A committed write (here: the record revoked) moves the token: the next read sees it.
    state.records.set('urn:t:1', record('urn:t:1', true));
    state.token++;
    expect((await cache.read('urn:t:1'))?.aspects).toEqual({ a: { value: { revoked: true } } });
    expect(state.reads).toBe(3);
    // The records read under the older token went with it: they can never be used again.
    expect(cache.size).toBe(1);
  });

  it('does not keep a record read while another read moved to a newer change token', async () => {
    const { state, adapter, record } = fakeStore(true);
    state.records.set('urn:t:1', record('urn:t:1', false));
    const cache = new TokenRecordCache(adapter, 'a');
    let release: () => void = () => undefined;
    const slow = adapter.readEntities.bind(adapter);
    adapter.readEntities = async (urns, names) => {
      if (urns[0] === 'urn:t:1') await new Promise<void>((resolve) => (release = resolve));
      return slow(urns, names);
    };
    const first = cache.read('urn:t:1');
    await new Promise((resolve) => setImmediate(resolve));
    state.token++;
    await cache.read('urn:t:2');
    release();
    await first;
    expect(cache.size).toBe(1);
  });

  it('reads every time from a store without change tokens', async () => {
    const { state, adapter, record } = fakeStore(false);
    state.records.set('urn:t:1', record('urn:t:1', false));
    const cache = new TokenRecordCache(adapter, 'a');
    for (let i = 0; i < 3; i++) await cache.read('urn:t:1');
    expect(state.reads).toBe(3);
    expect(cache.size).toBe(0);
  });

  it('keeps at most its limit of records, dropping the least recently used', async () => {
    const { state, adapter, record } = fakeStore(true);
    const cache = new TokenRecordCache(adapter, 'a');
    for (let i = 0; i < TOKEN_RECORD_CACHE_LIMIT + 10; i++) {
      state.records.set(`urn:t:${i}`, record(`urn:t:${i}`, false));
      await cache.read(`urn:t:${i}`);
      // The first one stays in use.
      await cache.read('urn:t:0');
    }
    expect(cache.size).toBeLessThanOrEqual(TOKEN_RECORD_CACHE_LIMIT);
    const reads = state.reads;
    await cache.read('urn:t:0');
    expect(state.reads).toBe(reads);
    await cache.read('urn:t:1');
    expect(state.reads).toBe(reads + 1);
  });
});

describe('a revocation in another connection to the same SQLite file', () => {
  /** A catalog on the file; `reads` counts the reads of access-token records through its adapter. */
  function open(filename: string, reads = { count: 0 }): Catalog {
    const adapter = createSqliteAdapter({ filename });
    const read = adapter.readEntities.bind(adapter);
    adapter.readEntities = (urns, aspectNames) => {
      if (urns.some((urn) => urn.startsWith(tokenUrn('')))) reads.count++;
      return read(urns, aspectNames);
    };
    return createCatalog({ adapter, tokenSigningKey: KEY, superUsers: [ADMIN], jobs: { background: false } });
  }

  it('fails the next verification in this one, after verifications that read no record', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-token-records-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    const reads = { count: 0 };
    const verifier = open(filename, reads);
    const revoker = open(filename);
    try {
      const created = await verifier.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_WEEK', name: 'ops' });
      // The first verification records the token's use (a write); the second reads the record after it.
      await verifier.tokens.verify(created.accessToken);
      await verifier.tokens.verify(created.accessToken);
      // While nothing is written, verifications are answered without reading the record again.
      const before = reads.count;
      expect(before).toBeGreaterThan(0);
      for (let i = 0; i < 5; i++) expect((await verifier.tokens.verify(created.accessToken)).tokenId).toBe(created.metadata.id);
      expect(reads.count).toBe(before);

      await revoker.tokens.revoke(ADMIN, created.metadata.id);
      await expect(verifier.tokens.verify(created.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
    } finally {
      await revoker.close();
      await verifier.close();
    }
  });
});
