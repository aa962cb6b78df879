/** What the memory adapter's bulk, ceiling and sizing workloads share: the items, the loader, the heap. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Catalog } from '../src';
import type { GeneratedDataset } from './generator';
import { ADMIN, assignments, NAMES, VALUE_TYPES } from './search-cases';

/** Entities per `upsertMany` call. */
export const PER_CALL = 1_000;

/** The upsertMany items of datasets: datasetProperties (name, description) and five structured properties. */
export function itemsOf(datasets: readonly GeneratedDataset[]) {
  return datasets.map((d) => ({
    urn: d.urn,
    aspects: { datasetProperties: { name: d.name, description: d.description }, structuredProperties: { properties: assignments(d) } },
  }));
}

export async function createProperties(catalog: Catalog): Promise<void> {
  for (const name of NAMES) {
    await catalog.properties.create(ADMIN, {
      qualifiedName: `bench.${name}`,
      displayName: name,
      valueType: VALUE_TYPES[name],
      entityTypes: ['dataset'],
    });
  }
}

/** Writes the items `PER_CALL` at a time; `after` runs after each call (heap sampling). */
export async function loadItems(catalog: Catalog, items: ReturnType<typeof itemsOf>, after?: () => void): Promise<void> {
  for (let start = 0; start < items.length; start += PER_CALL) {
    await catalog.entities.upsertMany(ADMIN, items.slice(start, start + PER_CALL));
    after?.();
  }
}

let collect: (() => void) | undefined;

/** A full garbage collection, in this process without `--expose-gc` on the command line. */
export function fullGc(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  for (let i = 0; i < 3; i++) collect();
}

/** Heap in use after a full collection, in bytes. */
export function heapAfterGc(): number {
  fullGc();
  return process.memoryUsage().heapUsed;
}

export const MB = 1024 * 1024;
