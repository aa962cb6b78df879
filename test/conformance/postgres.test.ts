import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runConformanceSuite } from '../../src/testing/index';
import { SchemaPool, withPostgresServer } from '../support/postgres';

// A schema per test (dropped after it); `reopen` opens a new adapter on the schema of the closed one.

await withPostgresServer('test/conformance/postgres.test.ts', 'adapter conformance: postgres', () => {
  const schemas = new SchemaPool({ recycle: true });
  afterEach(async () => {
    await schemas.dropAll();
  });
  afterAll(async () => {
    await schemas.end();
  });

  runConformanceSuite({
    name: 'postgres',
    describe,
    it,
    skip: it.skip,
    expect,
    capabilities: { durable: true, changeToken: false, changeFeed: true, timeseriesInCommit: true, propertyValues: true },
    createAdapter: (options) => schemas.adapter({ ...options, schema: schemas.freshSchema() }),
    reopen: (closed) => schemas.adapter({ schema: schemas.schemaOfAdapter(closed) }),
    inspect: {
      countAspects: (adapter) => schemas.countRows(adapter, 'aspects'),
      countJobs: (adapter) => schemas.countRows(adapter, 'jobs'),
    },
  });
});
