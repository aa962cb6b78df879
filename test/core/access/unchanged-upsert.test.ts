import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog } from '../../../src/index';

/**
 * The write path skips an upsert equal to the stored value before it plans (and so before the per-item
 * policy check): it writes nothing, so there is nothing to refuse. An item that changes something on an
 * entity no policy covers is still refused, and refuses its whole batch.
 */

const ADMIN = 'urn:li:corpuser:admin';
const ANA = 'urn:li:corpuser:ana';
const FIN = 'urn:li:dataset:(urn:li:dataPlatform:hive,finance.ledger,PROD)';
const MKT = 'urn:li:dataset:(urn:li:dataPlatform:hive,marketing.campaigns,PROD)';

async function open() {
  const adapter = createMemoryAdapter();
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false }, onError: () => undefined });
  await catalog.entities.upsertMany(ADMIN, [
    { urn: FIN, aspects: { datasetProperties: { name: 'ledger' } } },
    { urn: MKT, aspects: { datasetProperties: { name: 'campaigns' } } },
  ]);
  // Ana may edit the finance datasets only.
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

describe('policies with resources and the unchanged upsert', () => {
  it('an unchanged upsert of an uncovered entity writes nothing and is not refused; a change of it is refused', async () => {
    const { catalog, versionOf, nameOf } = await open();
    const before = await versionOf(MKT);
    await catalog.entities.upsertAspect(ANA, MKT, 'datasetProperties', { name: 'campaigns' });
    expect(await versionOf(MKT)).toBe(before);

    expect(await codeOf(catalog.entities.upsertAspect(ANA, MKT, 'datasetProperties', { name: 'renamed' }))).toBe('FORBIDDEN');
    expect([await nameOf(MKT), await versionOf(MKT)]).toEqual(['campaigns', before]);
    await catalog.close();
  });

  it('a batch: the unchanged item of an uncovered entity passes beside a covered change; a changed one refuses the batch', async () => {
    const { catalog, versionOf, nameOf } = await open();
    await catalog.entities.upsertMany(ANA, [
      { urn: FIN, aspects: { datasetProperties: { name: 'ledger v2' } } },
      { urn: MKT, aspects: { datasetProperties: { name: 'campaigns' } } },
    ]);
    expect(await nameOf(FIN)).toBe('ledger v2');

    const finVersion = await versionOf(FIN);
    const refused = catalog.entities.upsertMany(ANA, [
      { urn: FIN, aspects: { datasetProperties: { name: 'ledger v3' } } },
      { urn: MKT, aspects: { datasetProperties: { name: 'renamed' } } },
    ]);
    expect(await codeOf(refused)).toBe('FORBIDDEN');
    expect([await nameOf(FIN), await versionOf(FIN), await nameOf(MKT)]).toEqual(['ledger v2', finVersion, 'campaigns']);
    await catalog.close();
  });
});
