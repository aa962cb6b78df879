import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { expect } from 'vitest';
import type { Catalog } from '../../src/index';
import { ADMIN, runCli, tempDir } from './helpers';

/** The values CSV round trip, shared by the SQLite and the PostgreSQL files (each runs in a fork of its own). */

export const TIER = 'urn:li:structuredProperty:csv.tier';
export const DAYS = 'urn:li:structuredProperty:csv.days';
export const TAGS = 'urn:li:structuredProperty:csv.tags';
export const NOTE = 'urn:li:structuredProperty:csv.note';
export const FIXED = 'urn:li:structuredProperty:csv.fixed';
export const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,csv.t${String(i).padStart(5, '0')},PROD)`;
/** Texts a CSV and the cell encoding must carry exactly. */
const TRICKY = ['a, b', 'say "hi"', 'two\nlines', 'pipe | inside', 'back\\slash', '<remove>', '', '<empty>', 'crlf\r\nend', '  spaced '];

async function define(catalog: Catalog): Promise<void> {
  const create = (qualifiedName: string, extra: Record<string, unknown> = {}) =>
    catalog.properties.create(ADMIN, { qualifiedName, valueType: 'string', entityTypes: ['dataset'], ...extra });
  await create('csv.tier', { allowedValues: ['gold', 'silver', 'bronze'].map((string) => ({ value: { string } })) });
  await create('csv.days', { valueType: 'number' });
  await create('csv.tags', { cardinality: 'MULTIPLE' });
  await create('csv.note');
  await create('csv.fixed', { immutable: true });
}

/** `count` datasets, each with some values (every tricky text among them). */
export async function populate(catalog: Catalog, count: number): Promise<void> {
  await define(catalog);
  const items = Array.from({ length: count }, (_, i) => {
    const properties = [
      { propertyUrn: TIER, values: [{ string: ['gold', 'silver', 'bronze'][i % 3]! }] },
      { propertyUrn: DAYS, values: [{ double: i % 5 === 0 ? i + 0.25 : i }] },
      ...(i % 4 === 0 ? [] : [{ propertyUrn: TAGS, values: [TRICKY[i % TRICKY.length]!, `t${i}`].map((string) => ({ string })) }]),
      ...(i % 3 === 0 ? [{ propertyUrn: NOTE, values: [{ string: TRICKY[(i + 3) % TRICKY.length]! }] }] : []),
    ];
    return { urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` }, structuredProperties: { properties } } };
  });
  await catalog.entities.upsertMany(ADMIN, items);
}

/** A catalog the CLI reaches with `args`, and the library on the same store. */
export interface Store {
  args: string[];
  open(): Catalog;
}

async function withStore<T>(store: Store, work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const catalog = store.open();
  try {
    return await work(catalog);
  } finally {
    await catalog.close();
  }
}

export const rowsOf = (file: string): string[][] => parse(readFileSync(file, 'utf8')) as string[][];

/** Export, edit some cells, clear some and remove some, dry run (nothing written), import, export again: as edited. */
export async function roundTrip(store: Store, count: number): Promise<void> {
  await withStore(store, (catalog) => populate(catalog, count));
  const cli = (...args: string[]) => runCli([...args, ...store.args]);

  const first = join(tempDir(), 'first.csv');
  const exported = await cli('properties', 'export-values', '-o', first);
  expect(exported.stderr).toBe('');
  expect(exported).toMatchObject({ code: 0, stdout: `Wrote ${count} entities and 4 property columns to ${first}\n` });
  const rows = rowsOf(first);
  expect(rows[0]).toEqual(['urn', 'csv.days', 'csv.note', 'csv.tags', 'csv.tier']);
  expect(rows).toHaveLength(count + 1);
  expect(rows[1]).toEqual([dataset(0), '0.25', 'pipe \\| inside', '', 'gold']);

  // Edit some cells, clear some (unchanged), remove some.
  const edited = rows.map((row, r) => {
    if (r === 0) return row;
    const i = r - 1;
    if (i % 7 === 0) return [row[0]!, String(i + 0.5), 'new \\| note, "q"\nline', 'x|y\\|z', 'silver'];
    if (i % 7 === 1) return [row[0]!, '', '', '', ''];
    if (i % 7 === 2) return [row[0]!, row[1]!, '<remove>', '<remove>', row[4]!];
    return row;
  });
  const second = join(tempDir(), 'second.csv');
  writeFileSync(second, stringify(edited));

  const dry = await cli('properties', 'import-values', second, '--dry-run', '--json');
  expect(dry.stderr).toBe('');
  const planned = JSON.parse(dry.stdout) as Record<string, number | boolean>;
  expect(planned).toMatchObject({ dryRun: true, rows: count, entities: count });
  const edits = Math.ceil(count / 7);
  expect(planned.changed).toBeGreaterThanOrEqual(edits);
  const unchangedExport = join(tempDir(), 'unchanged.csv');
  expect((await cli('properties', 'export-values', '-o', unchangedExport)).code).toBe(0);
  expect(readFileSync(unchangedExport, 'utf8')).toBe(readFileSync(first, 'utf8'));

  const imported = await cli('properties', 'import-values', second, '--json');
  expect(imported.stderr).toBe('');
  expect(JSON.parse(imported.stdout)).toEqual({ ...planned, dryRun: false });

  const third = join(tempDir(), 'third.csv');
  expect((await cli('properties', 'export-values', '-o', third)).code).toBe(0);
  // Cleared cells left the values as they were; removed ones export as empty cells.
  const expected = edited.map((row, r) => {
    if (r === 0) return row;
    const i = r - 1;
    if (i % 7 === 1) return rows[r];
    if (i % 7 === 2) return [row[0]!, row[1]!, '', '', row[4]!];
    return row;
  });
  expect(rowsOf(third)).toEqual(expected);
  await withStore(store, async (catalog) => {
    const values = await catalog.properties.getValues(ADMIN, dataset(7));
    expect(values.find((v) => v.propertyUrn === TAGS)?.values).toEqual([{ string: 'x' }, { string: 'y|z' }]);
    expect(values.find((v) => v.propertyUrn === DAYS)?.values).toEqual([{ double: 7.5 }]);
  });
}
