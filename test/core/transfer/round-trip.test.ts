import { describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type ExportRecord, type StorageAdapter } from '../../../src/index';
import { adaptersWithPostgres } from '../../support/postgres';
import { errorOf } from '../../support/errors';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'transfer-test-signing-key-0123456789abcdef';
const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;
const adapters = await adaptersWithPostgres('test/core/transfer/round-trip.test.ts');

const open = (adapter: StorageAdapter, now = 1_790_000_000_000): Catalog =>
  createCatalog({ adapter, tokenSigningKey: KEY, superUsers: [ADMIN], clock: () => now, jobs: { background: false } });

async function collect(records: AsyncIterable<ExportRecord>): Promise<ExportRecord[]> {
  const out: ExportRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

/** Imports an export the way `metacatalog ingest` does: in chunks, each one call. */
async function importInChunks(catalog: Catalog, records: readonly ExportRecord[], size = 7): Promise<void> {
  for (let i = 0; i < records.length; i += size) await catalog.importRecords(records.slice(i, i + size));
}

/** An export without what differs by where and when it was made, rows in a stable order. */
function comparable(records: readonly ExportRecord[]): unknown[] {
  const rows = records.filter((r) => r.kind === 'timeseries');
  rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return [
    ...records.filter((r) => r.kind !== 'header' && r.kind !== 'timeseries' && r.kind !== 'end'),
    ...rows,
    records.find((r) => r.kind === 'end'),
  ];
}

async function populate(catalog: Catalog): Promise<{ kept: string; revoked: string }> {
  await catalog.properties.create(ADMIN, { qualifiedName: 'retention', valueType: 'number', entityTypes: ['dataset'] });
  await catalog.properties.create(ADMIN, { qualifiedName: 'tier', valueType: 'string', entityTypes: ['dataset'] });
  await catalog.entities.upsertMany(
    ADMIN,
    ['a', 'b', 'c'].map((name, i) => ({
      urn: ds(name),
      aspects: {
        datasetProperties: { name, description: `table ${name}` },
        structuredProperties: {
          properties: [
            { propertyUrn: 'urn:li:structuredProperty:retention', values: [{ double: 30 + i }] },
            { propertyUrn: 'urn:li:structuredProperty:tier', values: [{ string: 'gold' }] },
          ],
        },
      },
    })),
  );
  await catalog.entities.upsertAspect(ADMIN, ds('a'), 'datasetProperties', { name: 'a', description: 'second version' });
  await catalog.properties.softDelete(ADMIN, 'urn:li:structuredProperty:tier');
  await catalog.timeseries.append(ADMIN, ds('a'), 'datasetProfile', { timestampMillis: 1_789_000_000_000, rowCount: 10 });
  await catalog.timeseries.append(ADMIN, ds('a'), 'datasetProfile', { timestampMillis: 1_789_000_100_000, rowCount: 12 });
  await catalog.policies.create(ADMIN, { name: 'readers edit', actors: { users: ['urn:li:corpuser:ana'] }, privileges: ['EDIT_ENTITY'] });
  const kept = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_MONTH', name: 'kept' });
  const revoked = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_MONTH', name: 'revoked' });
  await catalog.tokens.revoke(ADMIN, revoked.metadata.id);
  return { kept: kept.accessToken, revoked: revoked.accessToken };
}

describe('moving a catalog between adapters (export, then ingest of the export)', () => {
  const order = ['memory', 'sqlite', ...('postgres' in adapters ? ['postgres'] : []), 'sqlite'];

  it(`${order.join(' → ')}: everything compares equal and tokens keep verifying`, async () => {
    const first = open(adapters.memory!());
    const tokens = await populate(first);
    const original = await collect(first.exportAll({ with: ['history'] }));
    await first.close();
    expect(original[0]).toMatchObject({ kind: 'header', format: 'metacatalog-export', source: 'memory' });
    expect(original.at(-1)).toMatchObject({ kind: 'end', counts: { timeseries: 2 } });
    expect(original.filter((r) => r.kind === 'version').length).toBeGreaterThan(0);
    // Only hashes are stored: no token's secret appears anywhere in the export.
    const text = JSON.stringify(original);
    for (const token of Object.values(tokens)) expect(text).not.toContain(token);

    let records = original;
    for (const kind of order.slice(1)) {
      // Later clocks: nothing imported may be re-stamped with the time of the import.
      const catalog = open(adapters[kind]!(), 1_790_086_400_000);
      await importInChunks(catalog, records);
      const again = await collect(catalog.exportAll({ with: ['history'] }));
      expect(comparable(again)).toEqual(comparable(original));
      records = again;
      if (kind === order.at(-1)) {
        expect((await catalog.tokens.verify(tokens.kept)).actorUrn).toBe(ADMIN);
        expect(await errorOf(catalog.tokens.verify(tokens.revoked))).toMatchObject({ code: 'UNAUTHENTICATED' });
        const values = await catalog.properties.getValues(ADMIN, ds('b'));
        // The soft-deleted property's values are hidden, and kept: restoring it brings them back.
        expect(values).toHaveLength(1);
        expect(values[0]).toMatchObject({ propertyUrn: 'urn:li:structuredProperty:retention', values: [{ double: 31 }] });
        const tier = await catalog.properties.get(ADMIN, 'urn:li:structuredProperty:tier');
        expect(tier?.removed).toBe(true);
        await catalog.properties.restore(ADMIN, 'urn:li:structuredProperty:tier');
        expect(await catalog.properties.getValues(ADMIN, ds('b'))).toHaveLength(2);
        const found = await catalog.search.search(ADMIN, {
          types: ['DATASET'],
          query: '*',
          orFilters: [{ and: [{ field: 'structuredProperties.retention', values: ['32'] }] }],
        });
        expect(found.searchResults.map((r) => r.entity.urn)).toEqual([ds('c')]);
      }
      await catalog.close();
    }
  });

  for (const kind of Object.keys(adapters)) {
    it(`${kind}: importing the same export twice leaves the catalog as after once`, async () => {
      const source = open(adapters.memory!());
      await populate(source);
      const records = await collect(source.exportAll());
      await source.close();
      const catalog = open(adapters[kind]!());
      await importInChunks(catalog, records, 5);
      const once = await collect(catalog.exportAll());
      await importInChunks(catalog, records, 3);
      expect(comparable(await collect(catalog.exportAll()))).toEqual(comparable(once));
      await catalog.close();
    });

    it(`${kind}: a bad record refuses its chunk, naming it, and nothing of the chunk is written`, async () => {
      const catalog = open(adapters[kind]!());
      const good = { kind: 'entity', urn: ds('x'), entityType: 'dataset', aspects: {} };
      const stamp = { time: 1, actor: ADMIN };
      const error = await errorOf(
        catalog.importRecords([
          { ...good, aspects: { datasetProperties: { value: { name: 'x' }, version: 1, created: stamp, lastModified: stamp } } },
          { kind: 'entity', urn: 'not-a-urn', entityType: 'dataset', aspects: {} },
          { kind: 'timeseries', entityType: 'dataset', aspect: 'datasetProfile', urn: ds('x'), timestampMillis: 'soon', value: {} },
        ]),
      );
      expect(error).toMatchObject({ code: 'INVALID_INPUT' });
      expect((error as { details: Array<{ path: string }> }).details.map((d) => d.path)).toEqual(['/1/urn', '/2/timestampMillis']);
      expect(await catalog.entities.get(ADMIN, ds('x'))).toBeUndefined();
      await catalog.close();
    });
  }

  it('export options are checked', async () => {
    const catalog = open(adapters.memory!());
    await expect(collect(catalog.exportAll({ with: ['everything' as 'history'] }))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(catalog.exportAllAs('urn:li:corpuser:nobody', {})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await catalog.close();
  });
});
