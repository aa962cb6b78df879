import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import type { PropertyRecord } from '../../../src/cli/backend';
import { decodeRows, headerLine, readHeader, readRecords, rowLines } from '../../../src/cli/values-csv';
import { createCatalog, type Catalog } from '../../../src/index';
import { populate } from '../../cli/values-round-trip';

const ADMIN = 'urn:li:corpuser:admin';

// 5,000 entities written three times over: seconds alone, more on a busy machine.
vi.setConfig({ testTimeout: 180_000 });

/** The CSV of every entity holding a value, as the command line writes it, made with the library's calls. */
async function exportCsv(catalog: Catalog): Promise<{ text: string; properties: PropertyRecord[] }> {
  const { properties: views } = await catalog.properties.list(ADMIN, { includeRemoved: true, limit: 1000 });
  const properties = views.map((v) => ({ urn: v.urn, removed: v.removed, definition: v.definition }));
  const columns = properties.filter((p) => !p.removed).sort((a, b) => (a.definition.qualifiedName < b.definition.qualifiedName ? -1 : 1));
  let text = headerLine(columns);
  let scrollId: string | undefined;
  do {
    const page = await catalog.search.scroll(ADMIN, {
      query: '*',
      count: 1000,
      orFilters: columns.map((c) => ({
        and: [{ field: `structuredProperties.${c.definition.qualifiedName}`, condition: 'EXISTS' as const }],
      })),
      ...(scrollId ? { scrollId } : {}),
    });
    const views = await catalog.entities.getMany(
      ADMIN,
      page.searchResults.map((r) => r.entity.urn),
      { aspects: ['structuredProperties'] },
    );
    const entities = views.map((view) => ({
      urn: view.urn,
      properties: catalog.properties.valuesOf(view).map((a) => ({
        propertyUrn: a.propertyUrn,
        values: a.values.map((v) => ('double' in v ? v.double : v.string)),
      })),
    }));
    text += rowLines(entities, columns);
    scrollId = page.nextScrollId ?? undefined;
  } while (scrollId);
  return { text, properties };
}

describe('the values CSV with catalog.properties.editValues (memory)', () => {
  it('round-trips 5,000 rows: export, edit, clear and remove cells, dry run, import, export again', async () => {
    const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
    await populate(catalog, 5000);
    const first = await exportCsv(catalog);
    const rows = parse(first.text) as string[][];
    expect(rows).toHaveLength(5001);
    expect(rows[0]).toEqual(['urn', 'csv.days', 'csv.fixed', 'csv.note', 'csv.tags', 'csv.tier']);
    const edited = rows.map((row, r) => {
      const i = r - 1;
      if (r === 0 || i % 5 === 4) return row;
      if (i % 5 === 0) return [row[0]!, `${i}.5`, '', 'q "x", y\\|z', '<empty>|\\<remove>', 'bronze'];
      if (i % 5 === 1) return [row[0]!, '', '', '', '', ''];
      if (i % 5 === 2) return [row[0]!, '<remove>', '', '<remove>', row[4]!, row[5]!];
      return [row[0]!, row[1]!, 'set once', row[3]!, row[4]!, row[5]!];
    });
    const records = readRecords(stringify(edited));
    const header = readHeader(records[0]!.cells, first.properties);
    expect(header.problems).toEqual([]);
    const file = decodeRows(records.slice(1), header.urnIndex, header.columns);
    expect(file.problems).toEqual([]);

    const planned = await catalog.properties.editValues(ADMIN, file.edits, { dryRun: true });
    expect(planned).toMatchObject({ dryRun: true, entities: 5000, changed: 3000, unchanged: 2000 });
    expect((await exportCsv(catalog)).text).toBe(first.text);

    const written = await catalog.properties.editValues(ADMIN, file.edits);
    expect(written).toEqual({ ...planned, dryRun: false });
    const expected = edited.map((row, r) => {
      const i = r - 1;
      if (r === 0 || i % 5 !== 1) return i % 5 === 2 ? [row[0]!, '', '', '', row[4]!, row[5]!] : row;
      return rows[r];
    });
    expect(parse((await exportCsv(catalog)).text)).toEqual(expected);
    expect((await catalog.properties.getValues(ADMIN, rows[1]![0]!)).find((a) => a.propertyUrn.endsWith('csv.tags'))?.values).toEqual([
      { string: '' },
      { string: '<remove>' },
    ]);
    await catalog.close();
  });
});
