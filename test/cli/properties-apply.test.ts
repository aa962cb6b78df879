import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, removeTempDirs, requireBuiltCli, withCatalog } from './helpers';
import { MODES, withMode } from './modes';

vi.setConfig({ testTimeout: 180_000 });

const TIER = 'urn:li:structuredProperty:io.test.tier';
const RETENTION = 'urn:li:structuredProperty:io.test.retention';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i},PROD)`;

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

async function seed(db: string): Promise<void> {
  await withCatalog(db, async (catalog) => {
    await catalog.properties.create(ADMIN, { qualifiedName: 'io.test.tier', valueType: 'string', entityTypes: ['dataset'] });
    await catalog.properties.create(ADMIN, { qualifiedName: 'io.test.retention', valueType: 'number', entityTypes: ['dataset'] });
    await catalog.entities.upsertMany(
      ADMIN,
      [0, 1, 2, 3, 4].map((i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
    );
    await catalog.properties.upsertValues(ADMIN, dataset(0), { properties: [{ propertyUrn: RETENTION, values: [{ double: 30 }] }] });
  });
}

describe.each(MODES)('properties apply ($name)', (mode) => {
  it('--dry-run prints the matches, a sample and no violations, and writes nothing; a real run waits for the job', async () => {
    await withMode(mode, async (mc, cli) => {
      // Embedded: the file is made by the first catalog; remote: the server's file.
      await seed(mc.db);
      const dry = await cli(
        'properties',
        'apply',
        '--type',
        'dataset',
        '--set',
        'io.test.tier=gold',
        '--set',
        'io.test.retention=90',
        '--dry-run',
      );
      expect(dry.stderr).toBe('');
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain('5 entities match');
      expect(dry.stdout).toContain(`before: ${RETENTION}=30`);
      expect(dry.stdout).toContain(`after:  ${TIER}=gold, ${RETENTION}=90`);
      expect(dry.stdout).toContain('No violations');
      expect(await withCatalog(mc.db, (c) => c.properties.getValues(ADMIN, dataset(1)))).toEqual([]);

      const real = await cli(
        'properties',
        'apply',
        '--type',
        'dataset',
        '--filter',
        'platform=urn:li:dataPlatform:hive',
        '--set',
        'io.test.tier=gold',
        '--remove',
        'io.test.retention',
        '--chunk-size',
        '2',
        '--json',
      );
      expect(real.code).toBe(0);
      expect(JSON.parse(real.stdout)).toMatchObject({ state: 'DONE', done: 5, total: 5, failed: 0 });
      for (const i of [0, 4]) {
        const values = await withCatalog(mc.db, (c) => c.properties.getValues(ADMIN, dataset(i)));
        expect(values.map((a) => [a.propertyUrn, a.values])).toEqual([[TIER, [{ string: 'gold' }]]]);
      }
    });
  });

  it('a change a definition refuses exits 1 naming the property; nothing to do is a usage error', async () => {
    await withMode(mode, async (mc, cli) => {
      await seed(mc.db);
      const refused = await cli('properties', 'apply', '--type', 'dataset', '--set', 'io.test.retention=x');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('takes numbers');
      const twoValues = await cli('properties', 'apply', '--type', 'dataset', '--set', 'io.test.tier=a', '--set', 'io.test.tier=b');
      expect(twoValues.code).toBe(1);
      expect(twoValues.stderr).toContain(`${TIER} takes a single value`);
      expect(await withCatalog(mc.db, (c) => c.properties.getValues(ADMIN, dataset(1)))).toEqual([]);
      const noMatches = await cli(
        'properties',
        'apply',
        '--type',
        'chart',
        '--query',
        'nothing-here',
        '--remove',
        'io.test.tier',
        '--json',
      );
      expect(noMatches.code).toBe(0);
      expect(JSON.parse(noMatches.stdout)).toMatchObject({ state: 'DONE', total: 0 });
      const none = await cli('properties', 'apply', '--type', 'dataset');
      expect(none.code).toBe(2);
      const unknown = await cli('properties', 'apply', '--set', 'io.test.nope=1');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('io.test.nope');
    });
  });
});
