import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import type { StorageAdapter, TimeseriesIndexRef, TimeseriesRow } from '../../../src/adapter/types';

const T0 = 1_700_000_000_000;
const PROFILE: TimeseriesIndexRef = { indexName: 'dataset_datasetprofileaspect_v1', entityType: 'dataset', aspect: 'datasetProfile' };
const USAGE: TimeseriesIndexRef = {
  indexName: 'dataset_datasetusagestatisticsaspect_v1',
  entityType: 'dataset',
  aspect: 'datasetUsageStatistics',
};
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${i % 7},PROD)`;

function rows(from: number, count: number, padding: number): TimeseriesRow[] {
  return Array.from({ length: count }, (_, k) => {
    const t = T0 + from + k;
    return { urn: urnOf(from + k), timestampMillis: t, value: { timestampMillis: t, padding: 'x'.repeat(padding) } };
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-'));
  dirs.push(dir);
  return join(dir, 'catalog.db');
}

/** What dbstat says about the index's table and its two indexes, read through a second connection. */
function measured(filename: string, index: TimeseriesIndexRef): { bytes: number; rows: number } {
  const db = new Database(filename, { readonly: true });
  try {
    const names = [index.indexName, `${index.indexName}_by_urn`, `${index.indexName}_by_ts`];
    const bytes = (db.prepare(`SELECT COALESCE(SUM(pgsize), 0) AS n FROM dbstat WHERE name IN (?, ?, ?)`).get(...names) as { n: number }).n;
    const count = (db.prepare(`SELECT COUNT(*) AS n FROM "${index.indexName}"`).get() as { n: number }).n;
    return { bytes, rows: count };
  } finally {
    db.close();
  }
}

async function reported(adapter: StorageAdapter, index: TimeseriesIndexRef): Promise<{ bytes: number; rows: number }> {
  const size = (await adapter.timeseriesIndexSizes()).find((s) => s.indexName === index.indexName);
  return { bytes: size?.bytes ?? -1, rows: size?.rows ?? -1 };
}

describe('SQLite timeseries index sizes', () => {
  it('are exactly what dbstat measures, after appends, batch deletes, entity deletes and rebuilds', async () => {
    const filename = tempFile();
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    try {
      const check = async () => {
        for (const index of [PROFILE, USAGE]) expect(await reported(adapter, index)).toEqual(measured(filename, index));
      };
      await adapter.appendTimeseries(PROFILE, rows(0, 3_000, 200));
      // Past several pointer-map pages (one every 820 pages of 4 KiB), which belong to no index.
      await adapter.appendTimeseries(USAGE, rows(10_000, 12_000, 600));
      await adapter.appendTimeseries(USAGE, rows(0, 50, 20));
      // Rows larger than a page spill into overflow pages, which count too.
      await adapter.appendTimeseries(PROFILE, rows(3_000, 40, 9_000));
      await check();
      expect(await adapter.deleteTimeseriesBatch(PROFILE, T0 + 1_000, 400)).toBe(400);
      expect(await adapter.deleteTimeseriesBatch(PROFILE, T0 + 3_010, 5_000)).toBe(2_611);
      await check();
      await adapter.commit({
        entities: [
          {
            urn: urnOf(3),
            entityType: 'dataset',
            expectVersion: 0,
            put: [
              {
                name: 'status',
                value: { removed: false },
                version: 1,
                created: { time: T0, actor: 'urn:li:corpuser:t' },
                lastModified: { time: T0, actor: 'urn:li:corpuser:t' },
              },
            ],
          },
        ],
      });
      await adapter.commit({
        entities: [{ urn: urnOf(3), entityType: 'dataset', expectVersion: 1, deleteEntity: true, searchDocument: null }],
      });
      await check();
      await adapter.appendTimeseries(PROFILE, rows(4_000, 500, 100));
      expect(await adapter.rebuildTimeseriesIndex(PROFILE, T0 + 4_100)).toBeGreaterThan(0);
      await check();
      await adapter.appendTimeseries(PROFILE, rows(5_000, 10, 10));
      await check();
    } finally {
      await adapter.close();
    }
  });

  it('are measured on first read for a file written before they were tracked', async () => {
    const filename = tempFile();
    const first = createSqliteAdapter({ filename });
    await first.open();
    await first.appendTimeseries(PROFILE, rows(0, 1_000, 100));
    await first.close();
    const raw = new Database(filename);
    raw.exec('ALTER TABLE timeseries_indexes DROP COLUMN pages; ALTER TABLE timeseries_indexes DROP COLUMN row_count;');
    raw.pragma('user_version = 1');
    raw.close();
    const again = createSqliteAdapter({ filename });
    await again.open();
    try {
      expect(await reported(again, PROFILE)).toEqual(measured(filename, PROFILE));
      await again.appendTimeseries(PROFILE, rows(1_000, 10, 100));
      expect(await reported(again, PROFILE)).toEqual(measured(filename, PROFILE));
    } finally {
      await again.close();
    }
  });

  it('a rebuild gives the freed pages back to the file system', async () => {
    const filename = tempFile();
    const adapter = createSqliteAdapter({ filename });
    await adapter.open();
    const pages = () => {
      const db = new Database(filename, { readonly: true });
      try {
        return db.pragma('page_count', { simple: true }) as number;
      } finally {
        db.close();
      }
    };
    try {
      await adapter.appendTimeseries(PROFILE, rows(0, 4_000, 300));
      const before = pages();
      await adapter.deleteTimeseriesBatch(PROFILE, T0 + 999, 10_000);
      // A batch delete frees pages inside the file for later rows; the file keeps its length.
      expect(pages()).toBe(before);
      await adapter.rebuildTimeseriesIndex(PROFILE, T0 + 2_999);
      expect(pages()).toBeLessThan(before * 0.4);
    } finally {
      await adapter.close();
    }
  });
});
