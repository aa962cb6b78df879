import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog, type CatalogOptions } from '../src';
import { startServer } from '../src/http';
import { readServerSentEvents } from '../src/cli/sse';
import { percentile, printTable, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,changes.table_${i},PROD)`;

function open(dir: string, name: string, extra: Partial<CatalogOptions> = {}): Catalog {
  return createCatalog({
    adapter: createSqliteAdapter({ filename: join(dir, `${name}.db`) }),
    superUsers: [ADMIN],
    jobs: { background: false },
    ...extra,
  });
}

/** Writes per second: every entity written twice (the second write replaces a value, so a version is kept). */
async function writeThroughput(catalog: Catalog, entities: number, round: number): Promise<number> {
  const start = performance.now();
  for (const pass of [0, 1]) {
    for (let i = 0; i < entities; i++) {
      await catalog.entities.upsertAspect(ADMIN, urnOf(i), 'datasetProperties', {
        name: `t${i}`,
        description: `round ${round} pass ${pass}`,
      });
    }
  }
  return (2 * entities) / ((performance.now() - start) / 1000);
}

/** Milliseconds from the start of a write until `follow` hands its event over, per write. */
/** The cursor after the last committed event. */
async function lastCursor(catalog: Catalog): Promise<string> {
  let after: string | undefined;
  for (;;) {
    const page = await catalog.changes.read(ADMIN, { ...(after ? { after } : {}), limit: 1000 });
    after = page.next;
    if (page.events.length < 1000) return after;
  }
}

async function followLatencies(catalog: Catalog, writes: number): Promise<number[]> {
  const next = await lastCursor(catalog);
  const controller = new AbortController();
  const arrivals = new Map<string, number>();
  let wake: (() => void) | undefined;
  const following = (async () => {
    for await (const event of catalog.changes.follow(ADMIN, { after: next, signal: controller.signal })) {
      arrivals.set((event.aspect as { name: string }).name, performance.now());
      wake?.();
    }
  })();
  const out: number[] = [];
  for (let i = 0; i < writes; i++) {
    const name = `follow-${i}`;
    const start = performance.now();
    await catalog.entities.upsertAspect(ADMIN, urnOf(i % 50), 'datasetProperties', { name });
    while (!arrivals.has(name)) await new Promise<void>((resolve) => (wake = resolve));
    out.push(arrivals.get(name)! - start);
  }
  controller.abort();
  await following;
  return out;
}

/** The same over server-sent events on loopback: from the start of a write until the event is read from the stream. */
async function sseLatencies(catalog: Catalog, writes: number): Promise<number[]> {
  const server = await startServer(catalog, { port: 0, host: '127.0.0.1', trustActorHeader: true });
  const controller = new AbortController();
  try {
    const next = await lastCursor(catalog);
    const response = await fetch(`${server.url}/openapi/v2/changes?after=${next}`, {
      headers: { accept: 'text/event-stream', 'x-service-actor': ADMIN },
      signal: controller.signal,
    });
    const arrivals = new Map<string, number>();
    let wake: (() => void) | undefined;
    const reading = (async () => {
      try {
        for await (const event of readServerSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)) {
          if (event.data) {
            arrivals.set((JSON.parse(event.data) as { aspect: { name: string } }).aspect.name, performance.now());
            wake?.();
          }
        }
      } catch {
        // aborted at the end
      }
    })();
    const out: number[] = [];
    for (let i = 0; i < writes; i++) {
      const name = `sse-${i}`;
      const start = performance.now();
      await catalog.entities.upsertAspect(ADMIN, urnOf(i % 50), 'datasetProperties', { name });
      while (!arrivals.has(name)) await new Promise<void>((resolve) => (wake = resolve));
      out.push(arrivals.get(name)! - start);
    }
    controller.abort();
    await reading;
    return out;
  } finally {
    await server.close();
  }
}

/**
 * The change feed's costs on SQLite: write throughput with events and versions kept against the same
 * writes with both turned off (alternating rounds, best of each), and how soon a follower sees a write.
 */
export async function runChangesBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const entities = Math.min(options.entities ?? 2000, 5000);
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-changes-bench-'));
  try {
    const kept = open(dir, 'kept');
    const off = open(dir, 'off', { changes: { enabled: false }, history: { enabled: false } });
    const withFeed: number[] = [];
    const without: number[] = [];
    for (let round = 0; round < 3; round++) {
      without.push(await writeThroughput(off, entities, round));
      withFeed.push(await writeThroughput(kept, entities, round));
    }
    await off.close();
    const figures: Figure[] = [];
    const feed = Math.max(...withFeed);
    const base = Math.max(...without);
    figures.push({
      workload: `writes with events + versions kept (${2 * entities} writes, best of 3)`,
      unit: 'writes/s',
      value: feed,
      baseline: base,
      baselineName: 'both off',
      better: 'higher',
      goal: '≥ 0.85×',
      met: feed / base >= 0.85,
    });
    const inProcess = await followLatencies(kept, 300);
    figures.push({
      workload: 'follow latency in process (300 writes)',
      unit: 'ms p99',
      value: percentile(inProcess, 99),
      better: 'lower',
      goal: '≤ 50 ms',
      met: percentile(inProcess, 99) <= 50,
    });
    const sse = await sseLatencies(kept, 300);
    figures.push({
      workload: 'follow latency over SSE on loopback (300 writes)',
      unit: 'ms p99',
      value: percentile(sse, 99),
      better: 'lower',
      goal: '≤ 250 ms',
      met: percentile(sse, 99) <= 250,
    });
    await kept.close();
    printTable('change feed (SQLite)', figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runChangesBench();
}
