import type { Job, NewJob, StorageAdapter } from '../adapter/types';
import type { ConformanceHarness } from './types';
import { aspect, createWrite, expectCode, T0, URN, withAdapter } from './support';

const LEASE = 60_000;

/** The durable job queue: enqueue through commit, exclusive leases, expiry, retries, dead jobs, dedupe, completion. */
export function registerJobTests(harness: ConformanceHarness): void {
  const { describe, it, expect, inspect } = harness;

  async function enqueue(adapter: StorageAdapter, ...jobs: NewJob[]): Promise<void> {
    await adapter.commit({ jobs });
  }
  const job = (type: string, runAt = T0, extra: Partial<NewJob> = {}): NewJob => ({
    type,
    payload: { type, nested: { n: 1 } },
    runAt,
    ...extra,
  });
  const claim = (adapter: StorageAdapter, workerId: string, now: number, limit = 10, ignoreRunAt = false): Promise<Job[]> =>
    adapter.claimJobs({ workerId, now, leaseMs: LEASE, limit, ignoreRunAt });
  const types = (jobs: readonly Job[]): string[] => jobs.map((j) => j.type);

  describe('jobs', () => {
    it('enqueues through commit, together with entity writes, as pending and unclaimed', async () => {
      await withAdapter(harness, async (adapter) => {
        await adapter.commit({
          entities: [createWrite(URN.a, [aspect('info', { name: 'a' })])],
          jobs: [job('first'), job('second', T0 + 5)],
        });
        const jobs = await adapter.listJobs();
        expect(
          jobs.map(({ type, payload, attempts, runAt, lockedBy, lockedUntil, lastError, state }) => ({
            type,
            payload,
            attempts,
            runAt,
            lockedBy,
            lockedUntil,
            lastError,
            state,
          })),
        ).toEqual([
          {
            type: 'first',
            payload: { type: 'first', nested: { n: 1 } },
            attempts: 0,
            runAt: T0,
            lockedBy: null,
            lockedUntil: null,
            lastError: null,
            state: 'pending',
          },
          {
            type: 'second',
            payload: { type: 'second', nested: { n: 1 } },
            attempts: 0,
            runAt: T0 + 5,
            lockedBy: null,
            lockedUntil: null,
            lastError: null,
            state: 'pending',
          },
        ]);
        expect(typeof jobs[0]?.id).toBe('string');
        expect(jobs[0]?.id).not.toBe(jobs[1]?.id);
        expect(typeof jobs[0]?.createdAt).toBe('number');
        expect(await adapter.listJobs({ limit: 1 })).toHaveLength(1);
        if (inspect) expect(await inspect.countJobs(adapter)).toBe(2);
      });
    });

    it('claims due jobs oldest runAt first, setting the lease and counting the attempt', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('late', T0 + 300), job('early', T0 + 100), job('middle', T0 + 200), job('future', T0 + 10_000));
        expect(await claim(adapter, 'w', T0 + 50)).toEqual([]);
        const [first] = await claim(adapter, 'w', T0 + 1_000, 1);
        expect([first?.type, first?.lockedBy, first?.lockedUntil, first?.attempts]).toEqual(['early', 'w', T0 + 1_000 + LEASE, 1]);
        expect(types(await claim(adapter, 'w', T0 + 1_000, 1))).toEqual(['middle']);
        expect(types(await claim(adapter, 'w', T0 + 1_000, 10))).toEqual(['late']);
        const listed = (await adapter.listJobs()).find((j) => j.type === 'early');
        expect([listed?.lockedBy, listed?.lockedUntil, listed?.attempts]).toEqual(['w', T0 + 1_000 + LEASE, 1]);
      });
    });

    it('ignoreRunAt claims jobs that are not due yet', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('future', T0 + 10_000));
        expect(await claim(adapter, 'w', T0)).toEqual([]);
        expect(types(await claim(adapter, 'w', T0, 10, true))).toEqual(['future']);
      });
    });

    it('a job without runAt is due at once', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, { type: 'now', payload: {} });
        expect(types(await claim(adapter, 'w', Date.now() + 1_000))).toEqual(['now']);
      });
    });

    it('never hands the same job to two workers while its lease holds', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, ...['j1', 'j2', 'j3', 'j4', 'j5', 'j6'].map((t) => job(t)));
        const [a, b] = await Promise.all([claim(adapter, 'worker-a', T0, 4), claim(adapter, 'worker-b', T0, 4)]);
        const ids = [...a!, ...b!].map((j) => j.id);
        expect(new Set(ids).size).toBe(6);
        expect(ids).toHaveLength(6);
        expect(await claim(adapter, 'worker-c', T0 + LEASE - 1)).toEqual([]);
        const byWorker = new Map((await adapter.listJobs()).map((j) => [j.id, j.lockedBy] as const));
        expect(a!.map((j) => byWorker.get(j.id))).toEqual(a!.map(() => 'worker-a'));
        expect(b!.map((j) => byWorker.get(j.id))).toEqual(b!.map(() => 'worker-b'));
      });
    });

    it('makes a job claimable again when its lease expires; the old holder can neither renew nor complete it', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('leased'));
        const [held] = await claim(adapter, 'worker-a', T0);
        expect(await claim(adapter, 'worker-b', T0 + LEASE - 1)).toEqual([]);
        expect(await adapter.renewJobLease(held!.id, 'worker-a', T0 + LEASE + 10)).toBe(true);
        expect(await claim(adapter, 'worker-b', T0 + LEASE + 5)).toEqual([]);
        const [taken] = await claim(adapter, 'worker-b', T0 + LEASE + 10);
        expect([taken?.id, taken?.lockedBy, taken?.attempts]).toEqual([held!.id, 'worker-b', 2]);
        expect(await adapter.renewJobLease(held!.id, 'worker-a', T0 + 10 * LEASE)).toBe(false);
        await expectCode(expect, adapter.commit({ completeJobs: [{ id: held!.id, workerId: 'worker-a' }] }), 'CONFLICT');
        expect(await adapter.renewJobLease(held!.id, 'worker-b', T0 + 10 * LEASE)).toBe(true);
        expect((await adapter.listJobs())[0]?.lockedUntil).toBe(T0 + 10 * LEASE);
      });
    });

    it('releaseJob with retryAt gives the job back for later, keeping lastError', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('flaky'));
        const [held] = await claim(adapter, 'w', T0);
        await adapter.releaseJob(held!.id, 'w', { error: 'boom', retryAt: T0 + 5_000 });
        const [released] = await adapter.listJobs();
        expect([
          released?.state,
          released?.lockedBy,
          released?.lockedUntil,
          released?.lastError,
          released?.runAt,
          released?.attempts,
        ]).toEqual(['pending', null, null, 'boom', T0 + 5_000, 1]);
        expect(await claim(adapter, 'w', T0 + 4_999)).toEqual([]);
        const [again] = await claim(adapter, 'w', T0 + 5_000);
        expect([again?.id, again?.attempts, again?.lastError]).toEqual([held!.id, 2, 'boom']);
      });
    });

    it('releaseJob with retryAt null marks the job dead: kept for inspection, never claimed', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('doomed'), job('healthy'));
        const [held] = await claim(adapter, 'w', T0, 1);
        await adapter.releaseJob(held!.id, 'w', { error: 'gave up', retryAt: null });
        expect(types(await adapter.listJobs())).toEqual(['healthy']);
        const dead = (await adapter.listJobs({ includeDead: true })).find((j) => j.id === held!.id);
        expect([dead?.type, dead?.state, dead?.lastError]).toEqual(['doomed', 'dead', 'gave up']);
        expect(types(await claim(adapter, 'w2', T0 + 100 * LEASE, 10, true))).toEqual(['healthy']);
        if (inspect) expect(await inspect.countJobs(adapter)).toBe(2);
      });
    });

    it('ignores releaseJob from a worker that does not hold the job', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('held'));
        const [held] = await claim(adapter, 'worker-a', T0);
        await adapter.releaseJob(held!.id, 'worker-b', { error: 'not mine', retryAt: null });
        const [listed] = await adapter.listJobs();
        expect([listed?.state, listed?.lockedBy, listed?.lastError]).toEqual(['pending', 'worker-a', null]);
      });
    });

    it('adds a job with a dedupeKey only when no pending job has that key', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('clean', T0, { dedupeKey: 'clean:p1' }));
        await enqueue(adapter, job('clean', T0, { dedupeKey: 'clean:p1' }), job('clean', T0, { dedupeKey: 'clean:p2' }), job('plain'));
        await enqueue(adapter, job('plain'));
        expect(types(await adapter.listJobs())).toEqual(['clean', 'clean', 'plain', 'plain']);

        // Leased is still pending: no duplicate.
        const claimed = await claim(adapter, 'w', T0, 10);
        expect(claimed).toHaveLength(4);
        await enqueue(adapter, job('clean', T0, { dedupeKey: 'clean:p1' }), job('clean', T0, { dedupeKey: 'clean:p2' }));
        expect(await adapter.listJobs()).toHaveLength(4);

        // Once completed (or dead) the key is free again.
        await adapter.commit({ completeJobs: claimed.filter((j) => j.type === 'clean').map((j) => ({ id: j.id, workerId: 'w' })) });
        expect(types(await adapter.listJobs())).toEqual(['plain', 'plain']);
        await enqueue(adapter, job('clean', T0, { dedupeKey: 'clean:p1' }));
        const [fresh] = await claim(adapter, 'w', T0, 1, true);
        expect(fresh?.type).toBe('clean');
        await adapter.releaseJob(fresh!.id, 'w', { error: 'dead', retryAt: null });
        await enqueue(adapter, job('clean', T0, { dedupeKey: 'clean:p1' }));
        expect(types(await adapter.listJobs())).toEqual(['plain', 'plain', 'clean']);
      });
    });

    it('a job that completes itself may queue its follow-up under the same dedupeKey in that commit', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('batch', T0, { dedupeKey: 'clean:p1', payload: { after: '' } }));
        const [held] = await claim(adapter, 'w', T0, 1);
        await adapter.commit({
          jobs: [job('batch', T0, { dedupeKey: 'clean:p1', payload: { after: 'urn:li:dataset:x' } })],
          completeJobs: [{ id: held!.id, workerId: 'w' }],
        });
        const [next, ...rest] = await adapter.listJobs();
        expect(rest).toHaveLength(0);
        expect(next?.payload).toEqual({ after: 'urn:li:dataset:x' });
        expect(next?.id).not.toBe(held!.id);
      });
    });

    it('completes jobs held by the worker in the same commit as its work', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('work'), job('other'));
        const [held] = await claim(adapter, 'w', T0, 1);
        await adapter.commit({
          entities: [createWrite(URN.a, [aspect('info', { name: 'done' })])],
          completeJobs: [{ id: held!.id, workerId: 'w' }],
        });
        expect(types(await adapter.listJobs({ includeDead: true }))).toEqual(['other']);
        expect(await adapter.readEntities([URN.a])).toHaveLength(1);
        if (inspect) expect(await inspect.countJobs(adapter)).toBe(1);
      });
    });

    it('rejects completing a job nobody claimed, or one held by another worker, with CONFLICT', async () => {
      await withAdapter(harness, async (adapter) => {
        await enqueue(adapter, job('unclaimed'), job('held'));
        const [unclaimed, heldJob] = await adapter.listJobs();
        await expectCode(expect, adapter.commit({ completeJobs: [{ id: unclaimed!.id, workerId: 'w' }] }), 'CONFLICT');
        await adapter.claimJobs({ workerId: 'owner', now: T0, leaseMs: LEASE, limit: 10 });
        await expectCode(expect, adapter.commit({ completeJobs: [{ id: heldJob!.id, workerId: 'intruder' }] }), 'CONFLICT');
        await expectCode(expect, adapter.commit({ completeJobs: [{ id: 'no-such-job', workerId: 'owner' }] }), 'CONFLICT');
        expect(await adapter.listJobs()).toHaveLength(2);
        if (inspect) expect(await inspect.countJobs(adapter)).toBe(2);
      });
    });
  });
}
