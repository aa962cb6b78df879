/**
 * What the volume workload's pieces share (and other workloads may reuse): the generated datasets in
 * batches (never all in memory), the catalog's form of one dataset, and measuring a SQLite file.
 */
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import type { Catalog, EntityUpsert } from '../src';
import { generateDatasets, type GeneratedDataset } from './generator';
import { ADMIN, assignments, NAMES, VALUE_TYPES } from './search-cases';

export const VOLUME_SEED = 42;

/** The generated datasets, `size` at a time: a million of them never sit in memory at once. */
export function* datasetBatches(count: number, size: number, seed = VOLUME_SEED): Generator<GeneratedDataset[]> {
  let batch: GeneratedDataset[] = [];
  for (const d of generateDatasets({ count, seed })) {
    batch.push(d);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** One dataset as a whole entity for `catalog.entities.upsertMany`: its text aspect and its five structured properties. */
export function datasetEntity(d: GeneratedDataset): EntityUpsert {
  return {
    urn: d.urn,
    aspects: {
      datasetProperties: { name: d.name, description: d.description },
      structuredProperties: { properties: assignments(d) },
    },
  };
}

/** The five structured property definitions of the bench data (bench.tier, bench.owner, ...). */
export async function createBenchProperties(catalog: Catalog): Promise<void> {
  for (const name of NAMES) {
    await catalog.properties.create(ADMIN, {
      qualifiedName: `bench.${name}`,
      displayName: name,
      valueType: VALUE_TYPES[name],
      entityTypes: ['dataset'],
    });
  }
}

export interface FileSize {
  /** The file after a checkpoint of its WAL. */
  bytes: number;
  /** Bytes per table and index (dbstat), largest first; FTS5 shadow tables under their own names. */
  objects: Array<{ name: string; bytes: number }>;
}

/** Checkpoints the WAL into the file (truncating it), then measures the file and each b-tree. */
export function measureFile(file: string): FileSize {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const objects = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as Array<{
      name: string;
      bytes: number;
    }>;
    return { bytes: statSync(file).size, objects };
  } finally {
    db.close();
  }
}

/** The dbstat breakdown as lines: bytes per entity of each object of at least 1% of the file. */
export function breakdownLines(size: FileSize, entities: number): string[] {
  return size.objects
    .filter((o) => o.bytes >= size.bytes / 100)
    .map(
      (o) =>
        `    ${o.name.padEnd(32)} ${(o.bytes / 1e6).toFixed(1).padStart(8)} MB ${(o.bytes / entities).toFixed(0).padStart(7)} B/entity`,
    );
}

/** Peak resident memory of the process so far, in MB. */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}
