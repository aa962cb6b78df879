import type { EntityWrite, StoredAspect } from '../../adapter/types';
import { CatalogError } from '../../errors';
import { deriveSearchDocument } from '../entities/search-document';
import type { EntityRecord, ExportCounts, ExportRecord } from './records';

/** What an import is asked to be. */
export interface ImportOptions {
  /**
   * An initial load (docs/deploy.md): into an empty catalog (refused with CONFLICT otherwise), its
   * search structures built once at the end. The calls of one load pass the export's records in order;
   * the call holding the export's end record completes it.
   */
  initial?: boolean;
}

/**
 * Where a catalog's initial load stands between import calls: `entities` while the export's entities
 * come (the adapter's initial-load part stores their rows only), `rest` once its search structures are
 * built and the records after the entities (timeseries rows, versions, events, jobs) take the ordinary
 * path. One per catalog.
 */
export class InitialLoadSession {
  phase: 'none' | 'entities' | 'rest' = 'none';
}

/** An exported entity as the load stores it: every aspect as it was exported, its search document derived here. */
export function loadWrite(registry: Parameters<typeof deriveSearchDocument>[0], record: EntityRecord): EntityWrite {
  const put: StoredAspect[] = [];
  const aspects: Record<string, StoredAspect> = {};
  for (const name in record.aspects) {
    if (!Object.hasOwn(record.aspects, name)) continue;
    const aspect: StoredAspect = { name, ...record.aspects[name]! };
    put.push(aspect);
    aspects[name] = aspect;
  }
  return {
    urn: record.urn,
    entityType: record.entityType,
    expectVersion: 0,
    put,
    searchDocument: deriveSearchDocument(registry, record.urn, record.entityType, aspects),
  };
}

export const NOT_EMPTY = (): CatalogError =>
  new CatalogError('CONFLICT', 'an initial load needs an empty catalog: this one holds entities (import without --initial to merge)');

/** The leading entity records of a chunk (the header skipped), and where the other records start. */
export function leadingEntities(records: readonly ExportRecord[]): { entities: EntityRecord[]; rest: number } {
  const entities: EntityRecord[] = [];
  let i = 0;
  for (; i < records.length; i++) {
    const record = records[i]!;
    if (record.kind === 'entity') entities.push(record);
    else if (record.kind !== 'header') break;
  }
  return { entities, rest: i };
}

export function countEntities(counts: ExportCounts, entities: readonly EntityRecord[]): void {
  counts.entities += entities.length;
  for (const record of entities) counts.aspects += Object.keys(record.aspects).length;
}
