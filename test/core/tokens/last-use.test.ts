import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import type { StorageAdapter } from '../../../src/adapter/types';
import { createCatalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';

/**
 * A verification records its token's last use (at most once a minute). While the storage refuses writes
 * (a full disk) reads must not each try that write again: one attempt, then a pause.
 */
describe("recording a token's last use while the disk is full", () => {
  it('tries once, then stops trying for a while; every verification still succeeds; records again once healed', async () => {
    const inner = createMemoryAdapter();
    let full = false;
    let tokenWrites = 0;
    const adapter: StorageAdapter = {
      ...inner,
      commit: (batch) => {
        if (batch.entities?.some((e) => e.urn.startsWith('urn:li:accessToken'))) tokenWrites++;
        return full ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })) : inner.commit(batch);
      },
    };
    let now = Date.parse('2026-11-28T12:00:00Z');
    const errors: unknown[] = [];
    const catalog = createCatalog({
      adapter,
      superUsers: [ADMIN],
      tokenSigningKey: 'last-use-test-signing-key-0123456789abcdef',
      clock: () => now,
      jobs: { background: false },
      onError: (error) => errors.push(error),
    });
    try {
      const { accessToken, metadata } = await catalog.tokens.create(ADMIN, {
        type: 'PERSONAL',
        actorUrn: ADMIN,
        duration: 'ONE_MONTH',
        name: 't',
      });
      now += 120_000;
      full = true;
      tokenWrites = 0;
      await Promise.all(Array.from({ length: 50 }, () => catalog.tokens.verify(accessToken)));
      for (let i = 0; i < 50; i++) await catalog.tokens.verify(accessToken);
      expect(tokenWrites).toBe(1);
      expect(errors).toHaveLength(1);

      // Within the pause after the failure nothing is tried, even once the token's minute has passed.
      now += 20_000;
      await catalog.tokens.verify(accessToken);
      expect(tokenWrites).toBe(1);

      // Healed, and past the pause and the minute: the use is recorded again.
      full = false;
      now += 60_000;
      await catalog.tokens.verify(accessToken);
      expect(tokenWrites).toBe(2);
      const listed = await catalog.tokens.list(ADMIN, {});
      const stored = listed.tokens.find((t) => t.id === metadata.id);
      expect(stored?.lastUsedAt).toBe(now);
    } finally {
      await catalog.close();
    }
  });
});
