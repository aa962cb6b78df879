import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory';
import { createSqliteAdapter } from '../../../adapters/sqlite';
import type { StorageAdapter } from '../../../src/adapter/types';
import { createCatalogContext } from '../../../src/catalog';
import type { CatalogContext } from '../../../src/core/context';
import { EntityWriter } from '../../../src/core/entities/writer';

const ADMIN = 'urn:li:corpuser:admin';
const MARK = 'urn:li:dataset:(urn:li:dataPlatform:hive,jobs.mark,PROD)';

function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'metacatalog-jobs-')), 'catalog.db');
}

/** A context whose `mark` job writes the datasetProperties of MARK with the job's payload name. */
function contextWithMarkJob(adapter: StorageAdapter, options: { failTimes?: number; leaseMs?: number } = {}) {
  let time = 1_000_000;
  const { ctx, ready } = createCatalogContext({
    adapter,
    superUsers: [ADMIN],
    clock: () => time,
    jobs: { background: false, leaseMs: options.leaseMs ?? 30_000 },
    onError: () => undefined,
  });
  let calls = 0;
  ctx.jobs.register('mark', async (job, context) => {
    calls++;
    if (calls <= (options.failTimes ?? 0)) throw new Error(`attempt ${calls} fails`);
    await new EntityWriter(ctx.adapter, ctx.registry, ctx.clock, () => ctx.jobs.kick()).write(
      ADMIN,
      [MARK],
      () => ({ entities: [{ urn: MARK, put: { datasetProperties: { value: { name: String(job.payload.name) } } } }] }),
      {
        completeJobs: [{ id: job.id, workerId: context.workerId }],
      },
    );
    return { done: true } as const;
  });
  return {
    ctx,
    ready,
    calls: () => calls,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

async function queueMark(ctx: CatalogContext, name: string): Promise<void> {
  await ctx.adapter.commit({ jobs: [{ type: 'mark', payload: { name }, runAt: ctx.clock() }] });
}

async function markName(adapter: StorageAdapter): Promise<unknown> {
  const [entity] = await adapter.readEntities([MARK]);
  return entity?.aspects.datasetProperties?.value.name;
}

describe.each([
  ['memory', () => createMemoryAdapter()],
  ['sqlite', () => createSqliteAdapter({ filename: tempFile() })],
])('job runner on %s', (_name, makeAdapter) => {
  it('settle() runs queued jobs whose work and completion are one commit', async () => {
    const adapter = makeAdapter();
    const { ctx, ready } = contextWithMarkJob(adapter);
    await ready;
    await queueMark(ctx, 'first');
    const report = await ctx.jobs.settle();
    expect(report).toEqual({ completed: 1, failed: [] });
    expect(await markName(adapter)).toBe('first');
    expect(await adapter.listJobs({ includeDead: true })).toEqual([]);
    await adapter.close();
  });

  it('retries a failing job with back-off and settle() does not wait for the back-off', async () => {
    const adapter = makeAdapter();
    const runner = contextWithMarkJob(adapter, { failTimes: 2 });
    await runner.ready;
    await queueMark(runner.ctx, 'eventually');
    const report = await runner.ctx.jobs.settle();
    expect(report.completed).toBe(1);
    expect(runner.calls()).toBe(3);
    expect(await markName(adapter)).toBe('eventually');
    await adapter.close();
  });

  it('tells the give-up handler of the job type once, with the last error, when a job goes dead', async () => {
    const adapter = makeAdapter();
    const runner = contextWithMarkJob(adapter);
    await runner.ready;
    const gaveUp: Array<{ id: string; error: string }> = [];
    let attempts = 0;
    runner.ctx.jobs.register(
      'doomed',
      async () => {
        attempts++;
        throw new Error(`attempt ${attempts} fails`);
      },
      { onGiveUp: async (job, error) => void gaveUp.push({ id: job.id, error }) },
    );
    await runner.ctx.adapter.commit({ jobs: [{ type: 'doomed', payload: {}, runAt: runner.ctx.clock() }] });
    const report = await runner.ctx.jobs.settle();
    expect(attempts).toBe(5);
    expect(gaveUp).toEqual([{ id: report.failed[0]!.id, error: 'attempt 5 fails' }]);
    await adapter.close();
  });

  it('marks a job dead after 5 attempts and reports it', async () => {
    const adapter = makeAdapter();
    const runner = contextWithMarkJob(adapter, { failTimes: 100 });
    await runner.ready;
    await queueMark(runner.ctx, 'never');
    const report = await runner.ctx.jobs.settle();
    expect(report.completed).toBe(0);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]?.error).toBe('attempt 5 fails');
    const [dead] = await adapter.listJobs({ includeDead: true });
    expect([dead?.state, dead?.attempts, dead?.lastError]).toEqual(['dead', 5, 'attempt 5 fails']);
    expect(await markName(adapter)).toBeUndefined();
    await adapter.close();
  });

  it('the background loop runs a job without settle()', async () => {
    const adapter = makeAdapter();
    const { ctx, ready } = createCatalogContext({ adapter, superUsers: [ADMIN], jobs: { pollIntervalMs: 20 } });
    let ran = false;
    ctx.jobs.register('mark', async () => {
      ran = true;
      return { commit: { completeJobs: [] } };
    });
    await ready;
    await ctx.jobs.start();
    await ctx.adapter.commit({ jobs: [{ type: 'mark', payload: {} }] });
    for (let i = 0; i < 250 && !ran; i++) await new Promise((r) => setTimeout(r, 20));
    expect(ran).toBe(true);
    await ctx.jobs.stop();
    expect(await adapter.listJobs()).toEqual([]);
    await adapter.close();
  });

  it('a job whose lease expired (its worker vanished) is run by another runner', async () => {
    const adapter = makeAdapter();
    const runner = contextWithMarkJob(adapter, { leaseMs: 60_000 });
    await runner.ready;
    await queueMark(runner.ctx, 'taken over');
    const [held] = await adapter.claimJobs({ workerId: 'other-host:1:gone', now: runner.ctx.clock(), leaseMs: 60_000, limit: 1 });
    expect(held).toBeDefined();
    runner.advance(60_001);
    const report = await runner.ctx.jobs.settle();
    expect(report.completed).toBe(1);
    expect(await markName(adapter)).toBe('taken over');
    await adapter.close();
  });
});

describe('job runner durability on a SQLite file', () => {
  it('a job claimed by a process that was killed is finished at the next start, without waiting for its lease', async () => {
    const file = tempFile();
    const adapter = createSqliteAdapter({ filename: file });
    await adapter.open();
    await adapter.commit({ jobs: [{ type: 'mark', payload: { name: 'after the crash' }, runAt: 0 }] });
    await adapter.close();

    // A child process claims the job with a long lease and dies holding it.
    const sqliteEntry = pathToFileURL(resolve('dist/adapters/sqlite.js')).href;
    const script = `
      import { hostname } from 'node:os';
      const { createSqliteAdapter } = await import(${JSON.stringify(sqliteEntry)});
      const adapter = createSqliteAdapter({ filename: ${JSON.stringify(file)} });
      await adapter.open();
      const jobs = await adapter.claimJobs({ workerId: hostname() + ':' + process.pid + ':child', now: Date.now(), leaseMs: 3_600_000, limit: 1 });
      process.stdout.write('claimed ' + jobs.length + '\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const claimed = await new Promise<string>((done) => child.stdout.once('data', (chunk: Buffer) => done(chunk.toString())));
    expect(claimed.trim()).toBe('claimed 1');
    child.kill('SIGKILL');
    await new Promise((done) => child.once('exit', done));

    const reopened = createSqliteAdapter({ filename: file });
    const runner = contextWithMarkJob(reopened, { leaseMs: 3_600_000 });
    await runner.ready;
    const [held] = await reopened.listJobs();
    expect(held?.lockedBy).toContain(`${hostname()}:`);
    await runner.ctx.jobs.start(); // releases jobs held by dead local processes
    const report = await runner.ctx.jobs.settle();
    expect(report.completed).toBe(1);
    expect(await markName(reopened)).toBe('after the crash');
    await reopened.close();
  });
});
