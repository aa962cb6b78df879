import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:io.test.tier';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,db.t${i},PROD)`;

/**
 * A worker killed while it ran an apply job keeps its lease until the lease runs out; meanwhile the
 * job's status says who holds it and until when, and once the lease ran out that the worker stopped.
 */
describe('the status of an apply job whose worker stopped', () => {
  it('names the holder and its lease, then says the worker stopped responding', async () => {
    const adapter = createMemoryAdapter();
    let now = Date.parse('2026-11-28T12:00:00Z');
    const catalog = createCatalog({ adapter, superUsers: [ADMIN], clock: () => now, jobs: { background: false } });
    try {
      await catalog.properties.create(ADMIN, { qualifiedName: 'io.test.tier', valueType: 'string', entityTypes: ['dataset'] });
      await catalog.entities.upsertMany(
        ADMIN,
        Array.from({ length: 3 }, (_, i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
      );
      const { jobId } = (await catalog.properties.applyToMatches(ADMIN, {
        types: ['dataset'],
        set: [{ propertyUrn: TIER, values: [{ string: 'gold' }] }],
      })) as { jobId: string };
      const waiting = await catalog.properties.applyStatus(ADMIN, jobId);
      expect(waiting.state).toBe('PENDING');
      expect(waiting.leaseExpiresAt).toBeUndefined();

      // A worker claims the job and is killed: it never renews nor finishes.
      const [claimed] = await adapter.claimJobs({ workerId: 'host-a:4242:dead', now, leaseMs: 30_000, limit: 10 });
      expect(claimed).toBeDefined();
      now += 5_000;
      const held = await catalog.properties.applyStatus(ADMIN, jobId);
      expect(held.leaseExpiresAt).toBe(now + 25_000);
      expect(held.hint).toMatch(/host-a:4242:dead holds the job until/);

      now += 30_000;
      const stopped = await catalog.properties.applyStatus(ADMIN, jobId);
      expect(stopped.hint).toMatch(/host-a:4242:dead stopped responding/);

      // Another worker takes it over and finishes it: the finished status carries no hint.
      await catalog.settle();
      const done = await catalog.properties.applyStatus(ADMIN, jobId);
      expect(done.state).toBe('DONE');
      expect(done.hint).toBeUndefined();
    } finally {
      await catalog.close();
    }
  });
});
