import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type StorageAdapter } from '../../../src/index';

/**
 * An upsert equal to the stored value writes nothing, but it is still a write attempt and is authorized
 * as one: an actor whose policies do not cover the entity is refused whether or not the value changes
 * (the answer does not tell what is stored), and a refused item refuses its whole batch. On SQLite the
 * re-ingest compares before its unit of work (`matchAspects`): the refusal must not depend on that.
 */

const ADMIN = 'urn:li:corpuser:admin';
const ANA = 'urn:li:corpuser:ana';
const BOB = 'urn:li:corpuser:bob';
const FIN = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.ledger,PROD)';
const MKT = 'urn:li:dataset:(urn:li:dataPlatform:hive,marketing.campaigns,PROD)';
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const adapters: Record<string, () => StorageAdapter> = {
  memory: () => createMemoryAdapter(),
  sqlite: () => {
    const dir = mkdtempSync(join(tmpdir(), 'mc-unchanged-access-'));
    dirs.push(dir);
    return createSqliteAdapter({ filename: join(dir, 'catalog.db') });
  },
};

async function open(make: () => StorageAdapter) {
  const adapter = make();
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, onError: () => undefined });
  await catalog.entities.upsertMany(ADMIN, [
    { urn: FIN, aspects: { datasetProperties: { name: 'ledger' } } },
    { urn: MKT, aspects: { datasetProperties: { name: 'campaigns' } } },
  ]);
  // Ana may edit the finance datasets only; Bob may edit nothing.
  await catalog.policies.create(ADMIN, {
    name: 'finance editors',
    type: 'METADATA',
    privileges: ['EDIT_ENTITY'],
    actors: { users: [ANA] },
    resources: { type: 'dataset', resources: [FIN] },
  });
  const versionOf = async (urn: string) => (await adapter.readEntities([urn]))[0]!.aspects.datasetProperties!.version;
  const nameOf = async (urn: string) => (await adapter.readEntities([urn]))[0]!.aspects.datasetProperties!.value.name;
  return { catalog, versionOf, nameOf };
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

const proposal = (urn: string, name: string) => ({
  entityUrn: urn,
  changeType: 'UPSERT',
  aspectName: 'datasetProperties',
  aspect: { json: { name } },
});

for (const [kind, make] of Object.entries(adapters)) {
  describe(`${kind}: policies with resources and the unchanged upsert`, () => {
    it('an unchanged upsert of an uncovered entity is refused and writes nothing; of a covered one it passes and writes nothing', async () => {
      const { catalog, versionOf, nameOf } = await open(make);
      const [fin, mkt] = [await versionOf(FIN), await versionOf(MKT)];
      expect(await codeOf(catalog.entities.upsertAspect(ANA, MKT, 'datasetProperties', { name: 'campaigns' }))).toBe('FORBIDDEN');
      expect(await codeOf(catalog.entities.applyProposals(ANA, [proposal(MKT, 'campaigns')]))).toBe('FORBIDDEN');
      await catalog.entities.upsertAspect(ANA, FIN, 'datasetProperties', { name: 'ledger' });
      await catalog.entities.applyProposals(ANA, [proposal(FIN, 'ledger')]);
      expect([await nameOf(FIN), await versionOf(FIN), await nameOf(MKT), await versionOf(MKT)]).toEqual(['ledger', fin, 'campaigns', mkt]);
      await catalog.close();
    });

    it('a batch: an unchanged item of an uncovered entity refuses the covered change beside it', async () => {
      const { catalog, versionOf, nameOf } = await open(make);
      const fin = await versionOf(FIN);
      const refused = catalog.entities.applyProposals(ANA, [proposal(FIN, 'ledger v2'), proposal(MKT, 'campaigns')]);
      expect(await codeOf(refused)).toBe('FORBIDDEN');
      expect(
        await codeOf(
          catalog.entities.upsertMany(ANA, [
            { urn: FIN, aspects: { datasetProperties: { name: 'ledger v2' } } },
            { urn: MKT, aspects: { datasetProperties: { name: 'campaigns' } } },
          ]),
        ),
      ).toBe('FORBIDDEN');
      expect([await nameOf(FIN), await versionOf(FIN)]).toEqual(['ledger', fin]);
      // The covered change alone is written.
      await catalog.entities.applyProposals(ANA, [proposal(FIN, 'ledger v2')]);
      expect(await nameOf(FIN)).toBe('ledger v2');
      await catalog.close();
    });

    it('an actor without the privilege anywhere is refused for proposals that change nothing', async () => {
      const { catalog, versionOf } = await open(make);
      const [fin, mkt] = [await versionOf(FIN), await versionOf(MKT)];
      const unchanged = [proposal(FIN, 'ledger'), proposal(MKT, 'campaigns')];
      expect(await codeOf(catalog.entities.applyProposals(BOB, unchanged))).toBe('FORBIDDEN');
      // The same proposals from an actor who may write everywhere: accepted, nothing written.
      await catalog.entities.applyProposals(ADMIN, unchanged);
      expect([await versionOf(FIN), await versionOf(MKT)]).toEqual([fin, mkt]);
      await catalog.close();
    });
  });
}
