import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog } from '../../../src';

const directories: string[] = [];
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'file-test-signing-key-0123456789abcdef-xyz';

function open(filename: string, now: () => number): Catalog {
  return createCatalog({
    adapter: createSqliteAdapter({ filename }),
    tokenSigningKey: KEY,
    superUsers: [ADMIN],
    clock: now,
    jobs: { background: false },
  });
}

function bytesOnDisk(filename: string): string {
  return [filename, `${filename}-wal`]
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');
}

describe('access tokens in a SQLite file', () => {
  it('never writes the secret to disk, and survives a restart (verification, revocation)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-'));
    directories.push(directory);
    const filename = join(directory, 'catalog.db');
    let now = 1_700_000_000_000;
    const first = open(filename, () => now);
    const boot = await first.tokens.issueBootstrapToken({ actorUrn: ADMIN });
    const other = await first.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_WEEK', name: 'ops' });
    now += 120_000;
    await first.tokens.verify(boot.accessToken);
    await first.close();

    const disk = bytesOnDisk(filename);
    expect(disk).toContain(boot.metadata.id);
    for (const token of [boot.accessToken, other.accessToken]) {
      const [, payload, signature] = token.split('.') as [string, string, string];
      expect(disk.includes(signature)).toBe(false);
      expect(disk.includes(payload)).toBe(false);
    }

    const second = open(filename, () => now);
    try {
      expect((await second.tokens.verify(boot.accessToken)).actorUrn).toBe(ADMIN);
      const listed = await second.tokens.list(ADMIN);
      expect(listed.tokens.map((t) => [t.name, t.lastUsedAt])).toEqual([
        ['ops', null],
        ['bootstrap', now],
      ]);
      await second.tokens.revoke(ADMIN, other.metadata.id);
    } finally {
      await second.close();
    }
    const third = open(filename, () => now);
    try {
      await expect(third.tokens.verify(other.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
    } finally {
      await third.close();
    }
  });
});
