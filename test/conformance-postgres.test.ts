import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runConformanceSuite } from '../src/testing/index';
import { SchemaPool, serverDecision, unreachableMessage } from './support/postgres';

// A schema per test (dropped after it); `reopen` opens a new adapter on the schema of the closed one.
const decision = await serverDecision('test/conformance-postgres.test.ts');

if (decision === 'fail') {
  describe('adapter conformance: postgres', () => {
    it('needs a PostgreSQL server', () => {
      throw new Error(unreachableMessage());
    });
  });
} else if (decision === 'skip') {
  describe.skip('adapter conformance: postgres (no PostgreSQL server)', () => {
    it('needs a PostgreSQL server', () => undefined);
  });
} else {
  const schemas = new SchemaPool();
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
    expect,
    createAdapter: (options) => schemas.adapter({ ...options, schema: schemas.freshSchema() }),
    reopen: (closed) => schemas.adapter({ schema: schemas.schemaOfAdapter(closed) }),
    inspect: {
      countAspects: (adapter) => schemas.countRows(adapter, 'aspects'),
      countJobs: (adapter) => schemas.countRows(adapter, 'jobs'),
    },
  });
}
