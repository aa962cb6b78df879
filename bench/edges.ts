/**
 * `npm run bench -- edges`: every figure of the service at its edges, each against its baseline in the
 * same run — the storage side (a fresh catalog, warm writes, `--workers 2`, the host's event loop while
 * embedded: edges-storage.ts) and the HTTP side (1,000 connections of searches with and without admission
 * control, the change feed's cost: edges-http.ts). Both drive `serve` with wrk. `METACATALOG_BENCH_EDGES`
 * picks parts of the storage side; `edges-storage` / `edges-http` run one side alone.
 */
import { runEdgesHttpBench } from './edges-http';
import { runEdgesStorageBench } from './edges-storage';
import type { Figure } from './harness';

export async function runEdgesBench(options: { entities?: number; seconds?: number; connections?: number } = {}): Promise<Figure[]> {
  const storage = await runEdgesStorageBench(options.seconds === undefined ? {} : { seconds: options.seconds });
  const http = await runEdgesHttpBench(options);
  return [...storage, ...http];
}
