#!/usr/bin/env node
// `npm run bench [-- workload ...] [-- --entities N]`: bundles each TypeScript workload with esbuild
// (heavy modules stay external) and runs it in this process, one after the other.
import { build } from 'esbuild';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** Workload name → [file, exported function]. */
const WORKLOADS = {
  foundation: ['foundation.ts', 'runFoundationBench'],
  'property-cleanup': ['property-cleanup.ts', 'runPropertyCleanupBench'],
  'apply-matches': ['apply-matches.ts', 'runApplyMatchesBench'],
  search: ['search.ts', 'runSearchBench'],
  timeseries: ['timeseries.ts', 'runTimeseriesBench'],
  'http-load': ['http-load.ts', 'runHttpLoadBench'],
  'http-workers': ['http-workers.ts', 'runHttpWorkersBench'],
  // Drives `serve` with wrk for about three minutes: run by name.
  edges: ['edges.ts', 'runEdgesBench'],
  'edges-storage': ['edges-storage.ts', 'runEdgesStorageBench'],
  'fresh-catalog': ['fresh-catalog.ts', 'runFreshCatalogBench'],
  durability: ['durability.ts', 'runDurabilityBench'],
  changes: ['changes.ts', 'runChangesBench'],
  policies: ['policies.ts', 'runPoliciesBench'],
  'memory-bulk': ['memory-bulk.ts', 'runMemoryBulkBench'],
  // Restore, re-ingest and initial load against the plain design (100,000 datasets by default: minutes).
  load: ['load.ts', 'runLoadBench'],
  'domain-cpu': ['domain-cpu.ts', 'runDomainCpuBench'],
  'http-writes': ['http-writes.ts', 'runHttpWritesBench'],
  'memory-ceiling': ['memory-ceiling.ts', 'runMemoryCeilingBench'],
  sizing: ['sizing.ts', 'runSizingBench'],
  volume: ['volume.ts', 'runVolumeBench'],
  // Loads a million datasets by default (minutes): run by name.
  'preview-change': ['preview-change.ts', 'runPreviewChangeBench'],
  observability: ['observability.ts', 'runObservabilityBench'],
  'sqlite-graphql-filters': ['sqlite-graphql-filters.ts', 'runSqliteGraphqlFiltersBench'],
  // Needs a PostgreSQL server (see bench/postgres.ts); run with `--adapter postgres` or by name.
  postgres: ['postgres.ts', 'runPostgresBench'],
  'volume-postgres': ['volume-postgres.ts', 'runVolumePostgresBench'],
  'postgres-writes': ['postgres-writes.ts', 'runPostgresWritesBench'],
  // Needs wrk (/usr/bin/wrk) and the built CLI: the service under overload, and the change feed's cost.
  'edges-http': ['edges-http.ts', 'runEdgesHttpBench'],
};
/** Workloads that run only when named (or selected with --adapter): a server, or minutes of loading. */
const ON_REQUEST = new Set([
  'load',
  'apply-matches',
  'postgres',
  'volume-postgres',
  'postgres-writes',
  'memory-ceiling',
  'sizing',
  'http-workers',
  'preview-change',
  'edges',
  'edges-storage',
  'edges-http',
]);

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const named = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const adapterOption = option('adapter');
if (adapterOption !== undefined && adapterOption !== 'postgres' && adapterOption !== 'sqlite') {
  console.error(`unknown --adapter ${adapterOption}; known: sqlite (the default workloads), postgres`);
  process.exit(2);
}
const selected = named.length
  ? named
  : adapterOption === 'postgres'
    ? ['postgres']
    : Object.keys(WORKLOADS).filter((n) => !ON_REQUEST.has(n));
const unknown = selected.filter((n) => !(n in WORKLOADS));
if (unknown.length) {
  console.error(`unknown workload(s): ${unknown.join(', ')}; known: ${Object.keys(WORKLOADS).join(', ')}`);
  process.exit(2);
}
const entities = option('entities') ? Number(option('entities')) : undefined;
// http-load: --seconds (default 30), --connections (50), --max-requests (500000); http-workers: --seconds (10 per phase).
const loadOptions = {
  ...(option('seconds') ? { seconds: Number(option('seconds')) } : {}),
  ...(option('connections') ? { connections: Number(option('connections')) } : {}),
  ...(option('max-requests') ? { maxRequests: Number(option('max-requests')) } : {}),
};

// edges-storage: --only embedded,fresh,warm picks its parts (the same as METACATALOG_BENCH_EDGES; each part's workload unchanged).
if (option('only') && selected.includes('edges-storage')) process.env.METACATALOG_BENCH_EDGES = option('only');
// Inside the project so the bundles resolve the external modules from node_modules.
const out = join(here, '.build');
mkdirSync(out, { recursive: true });
try {
  for (const name of selected) {
    const [file, fn] = WORKLOADS[name];
    const outfile = join(out, `${name}.mjs`);
    await build({
      entryPoints: [join(here, file)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      external: ['better-sqlite3', 'lunr', 'graphql', '@graphql-tools/*', 'pg', 'pg-copy-streams', 'ajv', 'rfc6902', 'yaml'],
      loader: { '.graphql': 'text' },
      logLevel: 'warning',
    });
    const mod = await import(pathToFileURL(outfile).href);
    await mod[fn]({
      ...(entities ? { entities } : {}),
      ...(name === 'http-load' || name === 'edges-http' || name === 'edges'
        ? loadOptions
        : name === 'http-workers' && loadOptions.seconds
          ? { seconds: loadOptions.seconds }
          : name === 'load'
            ? { ...(option('only') ? { only: option('only') } : {}), ...(option('postgres') ? { postgres: option('postgres') } : {}) }
            : {}),
    });
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
