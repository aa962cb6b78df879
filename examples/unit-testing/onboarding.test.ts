// Unit-testing an application against the in-memory adapter: fast, no files, the real catalog rules.
import { createCatalog, type Catalog } from 'metacatalog';
import { createMemoryAdapter } from 'metacatalog/adapters/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onboardTable, retireTable } from './onboarding';

const STEWARD = 'urn:li:corpuser:steward';
const VISITOR = 'urn:li:corpuser:visitor';

describe('onboarding tables (memory adapter)', () => {
  let catalog: Catalog;
  let time = Date.UTC(2026, 0, 1);

  beforeEach(() => {
    catalog = createCatalog({
      adapter: createMemoryAdapter(),
      policies: [{ actors: [STEWARD], privileges: ['EDIT_ENTITY'] }],
      clock: () => time,
    });
  });
  afterEach(() => catalog.close());

  it('stores the table with an audit stamp of the steward', async () => {
    const urn = await onboardTable(catalog, STEWARD, { platform: 'hive', name: 'sales.orders', description: 'One row per order line.' });
    const entity = await catalog.entities.get(VISITOR, urn);
    expect(entity?.aspects.datasetProperties?.value).toEqual({ name: 'sales.orders', description: 'One row per order line.' });
    expect(entity?.aspects.datasetProperties?.created).toEqual({ time, actor: STEWARD });
  });

  it('keeps the first creation stamp when the table is retired later', async () => {
    const urn = await onboardTable(catalog, STEWARD, { platform: 'hive', name: 'sales.orders', description: 'One row per order line.' });
    const created = time;
    time += 60_000;
    await retireTable(catalog, STEWARD, urn);
    const status = (await catalog.entities.get(VISITOR, urn))?.aspects.status;
    expect(status?.value).toEqual({ removed: true });
    expect(status?.created.time).toBe(created);
    expect(status?.lastModified).toEqual({ time, actor: STEWARD });
  });

  it("refuses the application's own rule before touching the catalog", async () => {
    await expect(onboardTable(catalog, STEWARD, { platform: 'hive', name: 'tmp', description: 'x' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await catalog.entities.list(VISITOR, { entityType: 'dataset' })).toEqual([]);
  });

  it('a visitor without EDIT_ENTITY cannot onboard, and the refusal names the privilege', async () => {
    const attempt = onboardTable(catalog, VISITOR, { platform: 'hive', name: 'x', description: 'A table nobody may add.' });
    await expect(attempt).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(attempt).rejects.toThrow(/EDIT_ENTITY/);
  });
});
