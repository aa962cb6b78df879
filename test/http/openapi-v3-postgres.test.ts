import { afterAll } from 'vitest';
import { SchemaPool, withPostgresServer } from '../support/postgres';
import { smokeSuite } from './openapi-v3-smoke-suite';
import { tutorialSuite } from './openapi-v3-tutorial-suite';

// DataHub's structured-properties tutorial and v3 smoke test over OpenAPI v3 on the PostgreSQL adapter.

await withPostgresServer('test/http/openapi-v3-postgres.test.ts', 'OpenAPI v3 on PostgreSQL', () => {
  const schemas = new SchemaPool();
  afterAll(() => schemas.end());
  tutorialSuite('postgres', () => schemas.adapter({ schema: schemas.freshSchema() }));
  smokeSuite('postgres', () => schemas.adapter({ schema: schemas.freshSchema() }));
});
