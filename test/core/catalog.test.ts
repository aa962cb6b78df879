import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqliteAdapter } from '../../adapters/sqlite';
import { CatalogError, createCatalog, PRIVILEGES, type CatalogOptions } from '../../src';

const ADMIN = 'urn:li:corpuser:admin';
const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,sales.orders,PROD)';

function violationsOf(options: unknown): Array<{ path: string }> {
  try {
    createCatalog(options as CatalogOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).code).toBe('INVALID_INPUT');
    return [...(error as CatalogError).details];
  }
  throw new Error('createCatalog accepted invalid options');
}

describe('createCatalog', () => {
  it('refuses wrong options naming each one', () => {
    expect(violationsOf({}).map((v) => v.path)).toEqual(['adapter']);
    const paths = violationsOf({
      adapter: createMemoryAdapter(),
      tokenSigningKey: 'short',
      superUsers: 'urn:li:corpuser:admin',
      policies: [
        { actors: ['urn:li:corpuser:a'], privileges: ['EDIT_ENTITY', 'FLY'] },
        { actors: 3, privileges: [] },
      ],
      clock: 5,
    }).map((v) => v.path);
    expect(paths).toEqual(['tokenSigningKey', 'superUsers', 'policies[0].privileges[1]', 'policies[1].actors', 'clock']);
    expect(violationsOf({ adapter: createMemoryAdapter(), tokenSigningKey: ['x'.repeat(32), 7] }).map((v) => v.path)).toEqual([
      'tokenSigningKey[1]',
    ]);
  });

  it('grants by super user, by static policy, and refuses naming the privilege', async () => {
    const catalog = createCatalog({
      adapter: createMemoryAdapter(),
      superUsers: [ADMIN],
      policies: [
        { actors: '*', privileges: ['GET_TIMESERIES_INDEX_SIZES'] },
        { actors: ['urn:li:corpuser:ana'], privileges: ['EDIT_ENTITY'] },
      ],
    });
    expect((await catalog.privilegesOf(ADMIN)).length).toBe(12); // the platform's eight, MANAGE_SYSTEM_OPERATIONS, VIEW_CHANGE_FEED, VIEW_TOKEN_REVOCATIONS and MANAGE_SERVICE_ACCOUNTS (docs/tokens-and-policies.md)
    expect(await catalog.privilegesOf(ADMIN)).toEqual([...PRIVILEGES]);
    expect((await catalog.privilegesOf('urn:li:corpuser:ana')).sort()).toEqual(['EDIT_ENTITY', 'GET_TIMESERIES_INDEX_SIZES']);
    await expect(catalog.authorize('urn:li:corpuser:bob', 'GET_TIMESERIES_INDEX_SIZES')).resolves.toBeUndefined();
    await expect(catalog.authorize('urn:li:corpuser:bob', 'EDIT_ENTITY')).rejects.toMatchObject({
      code: 'FORBIDDEN',
      reason: 'EDIT_ENTITY',
    });
    await expect(catalog.authorize('', 'EDIT_ENTITY')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await catalog.close();
  });

  it('a SQLite catalog survives close and reopen with aspects and audit stamps intact', async () => {
    const filename = join(mkdtempSync(join(tmpdir(), 'metacatalog-')), 'catalog.db');
    let time = Date.UTC(2026, 5, 1);
    const first = createCatalog({ adapter: createSqliteAdapter({ filename }), superUsers: [ADMIN], clock: () => time });
    await first.entities.upsertAspects(ADMIN, URN, {
      datasetProperties: { name: 'orders', description: 'one row per order line' },
      status: { removed: false },
    });
    time += 1000;
    await first.entities.upsertAspect('urn:li:corpuser:admin', URN, 'status', { removed: true });
    const before = await first.entities.get(ADMIN, URN);
    await first.close();

    const second = createCatalog({ adapter: createSqliteAdapter({ filename }), superUsers: [ADMIN] });
    const after = await second.entities.get(ADMIN, URN);
    expect(after).toEqual(before);
    expect(after?.aspects.status).toEqual({
      value: { removed: true },
      version: 2,
      created: { time: time - 1000, actor: ADMIN },
      lastModified: { time, actor: ADMIN },
    });
    await second.close();
  });

  it('a failed open surfaces on the first call', async () => {
    const reported: string[] = [];
    const catalog = createCatalog({
      adapter: createSqliteAdapter({ filename: '/nonexistent-dir/x/catalog.db' }),
      superUsers: [ADMIN],
      onError: (error, where) => reported.push(`${where}: ${(error as Error).message}`),
    });
    await expect(catalog.entities.get(ADMIN, URN)).rejects.toThrow(/directory does not exist/);
    await catalog.close();
    // The background work that could not start is reported to the host's hook (here: not to stderr).
    expect(reported).toEqual(['starting background jobs: Cannot open database because the directory does not exist']);
  });
});
