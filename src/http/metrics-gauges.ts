import type * as PromClient from 'prom-client';
import type { CatalogTelemetry } from '../core/telemetry';
import type { Prom } from './metrics-client';

/** Jobs counted per scrape at most (a queue this long is an alert of its own). */
const JOB_LIST_LIMIT = 10_000;

interface Snapshot {
  jobs: Array<{ type: string; state: string; createdAt: number }> | undefined;
  feed: { lastId?: string; oldestTime?: number } | undefined;
  storage: { ok: boolean; failingSince?: number };
  now: number;
}

/** The gauges read at scrape time: jobs, change feed, followers, storage. One probe serves a whole scrape. */
export function registerGauges(client: Prom, registry: PromClient.Registry, telemetry: CatalogTelemetry): void {
  const { probe } = telemetry;
  let pending: Promise<Snapshot> | undefined;
  const snapshot = (): Promise<Snapshot> => {
    pending ??= (async () => {
      const now = probe.now();
      const [jobs, feed, storage] = await Promise.all([
        probe.jobs(JOB_LIST_LIMIT).then(
          (list) =>
            list.map((job) => ({
              type: job.type,
              createdAt: job.createdAt,
              state:
                job.state === 'dead'
                  ? 'dead'
                  : job.lockedUntil !== null && job.lockedUntil > now
                    ? 'running'
                    : job.lastError !== null
                      ? 'failed'
                      : 'queued',
            })),
          () => undefined,
        ),
        probe.changeFeed().catch(() => undefined),
        probe.storage(),
      ]);
      return { jobs, feed, storage, now };
    })().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  const registers = [registry];
  new client.Gauge({
    name: 'metacatalog_jobs',
    help: `Background jobs by type and state: queued, running (leased), failed (waiting for a retry), dead (gave up). Counts stop at ${JOB_LIST_LIMIT} jobs.`,
    labelNames: ['type', 'state'],
    registers,
    async collect() {
      const { jobs } = await snapshot();
      this.reset();
      if (!jobs) return;
      const counts = new Map<string, number>();
      for (const job of jobs) counts.set(`${job.type}\u0000${job.state}`, (counts.get(`${job.type}\u0000${job.state}`) ?? 0) + 1);
      for (const [key, count] of counts) {
        const [type, state] = key.split('\u0000') as [string, string];
        this.set({ type, state }, count);
      }
    },
  });
  new client.Gauge({
    name: 'metacatalog_jobs_oldest_pending_age_seconds',
    help: 'Age of the oldest job not yet done (0 when none is pending).',
    registers,
    async collect() {
      const { jobs, now } = await snapshot();
      if (!jobs) return;
      const oldest = jobs.filter((j) => j.state !== 'dead').reduce((min, j) => Math.min(min, j.createdAt), now);
      this.set(Math.max(0, (now - oldest) / 1000));
    },
  });
  new client.Gauge({
    name: 'metacatalog_change_feed_head',
    help: 'Id of the newest change event (the feed position a consumer compares its cursor with).',
    registers,
    async collect() {
      const { feed } = await snapshot();
      const head = feed?.lastId === undefined ? 0 : Number(feed.lastId);
      this.set(Number.isFinite(head) ? head : 0);
    },
  });
  new client.Gauge({
    name: 'metacatalog_change_feed_oldest_event_age_seconds',
    help: 'Age of the oldest change event still kept (retention removes older ones).',
    registers,
    async collect() {
      const { feed, now } = await snapshot();
      this.set(feed?.oldestTime === undefined ? 0 : Math.max(0, (now - feed.oldestTime) / 1000));
    },
  });
  new client.Gauge({
    name: 'metacatalog_change_feed_followers',
    help: 'Open change-feed followers in this process (server-sent event streams included).',
    registers,
    collect() {
      this.set(telemetry.followers);
    },
  });
  new client.Gauge({
    name: 'metacatalog_storage_up',
    help: '1 while writes reach the storage, 0 since a write failed for a reason other than a refusal.',
    registers,
    async collect() {
      this.set((await snapshot()).storage.ok ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'metacatalog_storage_failing_seconds',
    help: 'How long writes have been failing (0 while the storage is healthy).',
    registers,
    async collect() {
      const { storage, now } = await snapshot();
      this.set(storage.failingSince === undefined ? 0 : Math.max(0, (now - storage.failingSince) / 1000));
    },
  });
}
