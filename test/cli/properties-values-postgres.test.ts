import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { createCatalog } from '../../src/index';
import { POSTGRES_URL, SchemaPool, withPostgresServer } from '../support/postgres';
import { ADMIN, removeTempDirs, requireBuiltCli } from './helpers';
import { roundTrip } from './values-round-trip';

vi.setConfig({ testTimeout: 180_000 });

beforeAll(requireBuiltCli);
afterAll(removeTempDirs);

await withPostgresServer('test/cli/properties-values-postgres.test.ts', 'properties export-values / import-values (PostgreSQL)', () => {
  const pool = new SchemaPool();
  afterAll(() => pool.end());
  describe('properties export-values / import-values (PostgreSQL)', () => {
    it('round-trips 2,500 rows (three export pages, five import chunks): export, edit, clear and remove cells, dry run, import, export again', async () => {
      const schema = pool.freshSchema();
      const open = () => createCatalog({ adapter: pool.adapter({ schema }), superUsers: [ADMIN], jobs: { background: false } });
      await roundTrip({ args: ['--postgres', POSTGRES_URL, '--postgres-schema', schema], open }, 2500);
    });
  });
});
