import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createPostgresAdapter } from '../../../adapters/postgres/index';
import { createCatalog } from '../../../src/index';
import { startReplicatedPostgres, withOwnPostgres, type ReplicatedPostgres } from '../../support/pg-own-server';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const ADMIN = 'urn:li:corpuser:admin';
const ds = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

/**
 * The primary away, a healthy standby up: the standby answers what it may (token checks and entity
 * reads, searches); writes are UNAVAILABLE until the primary is back.
 */
withOwnPostgres('test/adapters/postgres/primary-away.test.ts', 'PostgreSQL: the primary away, a standby up', () => {
  let cluster: ReplicatedPostgres;
  beforeAll(async () => {
    cluster = await startReplicatedPostgres();
  });
  afterAll(async () => {
    await cluster?.standby.remove();
    await cluster?.primary.remove();
  });

  it('tokens verify, entities read and searches answer from the standby; writes are UNAVAILABLE', async () => {
    const schema = `mc_away_${randomBytes(5).toString('hex')}`;
    const errors: unknown[] = [];
    const catalog = createCatalog({
      adapter: createPostgresAdapter(
        { connectionString: cluster.primary.url, replicas: [cluster.standby.url] },
        { schema, maxConnections: 4, replicaCheckIntervalMs: 50, onReplicaEvent: () => undefined },
      ),
      superUsers: [ADMIN],
      tokenSigningKey: 'primary-away-test-signing-key-0123456789abcdef',
      jobs: { background: false },
      onError: (error) => errors.push(error),
    });
    try {
      const { accessToken } = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 't' });
      await catalog.entities.upsertAspect(ADMIN, ds('kept'), 'datasetProperties', { name: 'kept' });
      // Until the standby has replayed both (a search it answers finds the dataset).
      const deadline = Date.now() + 20_000;
      while ((await catalog.search.search(ADMIN, { types: ['DATASET'], query: 'kept' })).total !== 1) {
        if (Date.now() > deadline) throw new Error('the standby did not replay the writes');
        await new Promise((r) => setTimeout(r, 50));
      }

      await cluster.primary.halt();
      expect((await catalog.tokens.verify(accessToken)).actorUrn).toBe(ADMIN);
      expect((await catalog.entities.get(ADMIN, ds('kept')))?.aspects.datasetProperties?.value).toMatchObject({ name: 'kept' });
      expect((await catalog.search.search(ADMIN, { types: ['DATASET'], query: 'kept' })).total).toBe(1);
      await expect(catalog.entities.upsertAspect(ADMIN, ds('new'), 'datasetProperties', { name: 'new' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });

      await cluster.primary.resume();
      await catalog.entities.upsertAspect(ADMIN, ds('new'), 'datasetProperties', { name: 'new' });
    } finally {
      await cluster.primary.ensureRunning();
      await catalog.close();
    }
  });
});
