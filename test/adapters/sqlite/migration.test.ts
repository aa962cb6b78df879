import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { SCHEMA_VERSION } from '../../../adapters/sqlite/schema';
import { createCatalog, type Catalog } from '../../../src';
import {
  FIXTURE_ADMIN,
  FIXTURE_DATASETS,
  FIXTURE_EDITOR,
  FIXTURE_PROPERTIES,
  FIXTURE_SIGNING_KEY,
  FIXTURE_TIME,
  firstDescription,
  PROFILE_ROWS,
  propertyUrnOf,
  REMOVED_DATASET,
  REWRITTEN,
} from '../../fixtures/sqlite-0.1.0-data';

/** A file written by release 0.1.0 (test/fixtures/make-sqlite-0.1.0.ts), opened by this release. */
const FIXTURE = join(import.meta.dirname, '../../fixtures', 'sqlite-0.1.0.db');
const TOKENS = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures', 'sqlite-0.1.0.tokens.json'), 'utf8')) as Record<
  'kept' | 'revoked',
  { accessToken: string; id: string }
>;

const directories: string[] = [];
afterAll(() => {
  for (const d of directories) rmSync(d, { recursive: true, force: true });
});

function copyOfFixture(): string {
  const directory = mkdtempSync(join(tmpdir(), 'metacatalog-migration-'));
  directories.push(directory);
  const file = join(directory, 'catalog.db');
  copyFileSync(FIXTURE, file);
  return file;
}

function open(file: string): Catalog {
  return createCatalog({
    adapter: createSqliteAdapter({ filename: file }),
    tokenSigningKey: FIXTURE_SIGNING_KEY,
    superUsers: [FIXTURE_ADMIN],
    clock: () => FIXTURE_TIME + 86_400_000,
    jobs: { background: false },
  });
}

const gold = {
  types: ['DATASET' as const],
  query: '*',
  count: 100,
  orFilters: [{ and: [{ field: 'structuredProperties.fixture.tier', values: ['gold'] }] }],
};

/** Everything the fixture holds, read back through the catalog. */
async function expectFixtureContent(catalog: Catalog): Promise<void> {
  // Definitions, the soft-deleted one included.
  for (const p of FIXTURE_PROPERTIES) {
    const view = await catalog.properties.get(FIXTURE_ADMIN, propertyUrnOf(String(p.qualifiedName)));
    expect(view?.definition.qualifiedName).toBe(p.qualifiedName);
    expect(view?.removed).toBe(p.qualifiedName === 'fixture.legacy');
  }
  // Values: those of the soft-deleted property are hidden.
  for (const d of FIXTURE_DATASETS) {
    const values = await catalog.properties.getValues(FIXTURE_ADMIN, d.urn);
    expect(values.map((a) => [a.propertyUrn, a.values])).toEqual([
      [propertyUrnOf('fixture.tier'), [{ string: d.tier }]],
      [propertyUrnOf('fixture.score'), [{ double: d.score }]],
      [propertyUrnOf('fixture.reviewed'), [{ string: d.reviewed }]],
      [propertyUrnOf('fixture.tags'), d.tags.map((string) => ({ string }))],
    ]);
    expect(values[0]!.lastModified).toEqual({ time: FIXTURE_TIME + 120_000, actor: FIXTURE_EDITOR });
    const entity = await catalog.entities.get(FIXTURE_ADMIN, d.urn);
    expect(entity?.aspects.datasetProperties?.value).toEqual({
      name: d.name,
      description: d.description,
      customProperties: { origin: 'fixture' },
    });
  }
  // Search: filters, full text, the soft-deleted dataset left out.
  const golds = FIXTURE_DATASETS.filter((d) => d.tier === 'gold' && d.urn !== REMOVED_DATASET)
    .map((d) => d.urn)
    .sort();
  const found = await catalog.search.scroll(FIXTURE_ADMIN, gold);
  expect(found.searchResults.map((r) => r.entity.urn)).toEqual(golds);
  expect(found.total).toBe(golds.length);
  const text = await catalog.search.scroll(FIXTURE_ADMIN, { types: ['DATASET'], query: 'invoices', count: 100 });
  expect(text.searchResults.map((r) => r.entity.urn).sort()).toEqual(
    FIXTURE_DATASETS.filter((d) => d.name.startsWith('invoices'))
      .map((d) => d.urn)
      .sort(),
  );
  const all = await catalog.search.scroll(FIXTURE_ADMIN, { types: ['DATASET'], query: '*', count: 100 });
  expect(all.total).toBe(FIXTURE_DATASETS.length - 1);
  const facets = await catalog.search.aggregate(FIXTURE_ADMIN, {
    types: ['DATASET'],
    query: '*',
    facets: ['structuredProperties.fixture.score'],
  });
  expect(facets.facets[0]!.aggregations.find((a) => a.value === '3.0')?.count).toBe(1);
  // Tokens: the kept one verifies, the revoked one does not.
  expect((await catalog.tokens.verify(TOKENS.kept.accessToken)).actorUrn).toBe(FIXTURE_ADMIN);
  await expect(catalog.tokens.verify(TOKENS.revoked.accessToken)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  // History: the rewritten datasets have their first description as version 1.
  for (const d of FIXTURE_DATASETS.slice(0, REWRITTEN)) {
    const history = await catalog.entities.history(FIXTURE_ADMIN, d.urn, 'datasetProperties');
    expect(history.map((v) => [v.version, v.value.description])).toEqual([
      [2, d.description],
      [1, firstDescription(d)],
    ]);
    expect(history[1]!.created).toEqual({ time: FIXTURE_TIME + 60_000, actor: FIXTURE_ADMIN });
  }
  const valueHistory = await catalog.properties.valueHistory(FIXTURE_ADMIN, FIXTURE_DATASETS[0]!.urn, propertyUrnOf('fixture.tier'));
  expect(valueHistory.map((c) => [c.values, c.setBy.actor, c.current])).toEqual([[[{ string: 'gold' }], FIXTURE_EDITOR, true]]);
  // The change feed: every event of the file, in order, with its values.
  const feed = await catalog.changes.read(FIXTURE_ADMIN, { limit: 1000 });
  const rewrite = feed.events.find(
    (e) => e.entityUrn === FIXTURE_DATASETS[0]!.urn && e.aspectName === 'datasetProperties' && e.previousAspectValue !== null,
  );
  expect(rewrite?.previousAspectValue).toEqual({ name: FIXTURE_DATASETS[0]!.name, description: firstDescription(FIXTURE_DATASETS[0]!) });
  expect(rewrite?.aspect?.description).toBe(FIXTURE_DATASETS[0]!.description);
  expect(rewrite?.created).toEqual({ time: FIXTURE_TIME + 120_000, actor: FIXTURE_EDITOR });
  const valueEvents = feed.events.filter((e) => e.aspectName === 'structuredProperties' && e.entityType === 'dataset');
  expect(valueEvents).toHaveLength(FIXTURE_DATASETS.length);
  expect(feed.events.map((e) => Number(e.id))).toEqual([...feed.events.map((e) => Number(e.id))].sort((a, b) => a - b));
  // Timeseries rows.
  for (const d of FIXTURE_DATASETS.slice(0, 3)) {
    const rows = await catalog.timeseries.query(FIXTURE_ADMIN, { aspect: 'datasetProfile', urn: d.urn, count: 100 });
    expect(rows.results.map((r) => r.value.rowCount)).toEqual(Array.from({ length: PROFILE_ROWS }, (_, i) => 100 * (i + 1)));
  }
}

describe('a SQLite file written by release 0.1.0', () => {
  it('is migrated in place and reads back values, search, tokens, history, change feed and timeseries', async () => {
    const file = copyOfFixture();
    const catalog = open(file);
    try {
      await catalog.ready();
      await expectFixtureContent(catalog);
    } finally {
      await catalog.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('takes writes after the migration, keeps them across a restart, and restores the soft-deleted property', async () => {
    const file = copyOfFixture();
    const first = open(file);
    const target = FIXTURE_DATASETS[1]!;
    try {
      await first.properties.restore(FIXTURE_ADMIN, propertyUrnOf('fixture.legacy'));
      await first.properties.upsertValues(FIXTURE_ADMIN, target.urn, {
        properties: [{ propertyUrn: propertyUrnOf('fixture.tier'), values: [{ string: 'gold' }] }],
      });
    } finally {
      await first.close();
    }
    const second = open(file);
    try {
      expect((await second.properties.getValues(FIXTURE_ADMIN, target.urn)).map((a) => a.propertyUrn)).toEqual([
        propertyUrnOf('fixture.tier'),
      ]);
      const legacy = await second.properties.getValues(FIXTURE_ADMIN, FIXTURE_DATASETS[2]!.urn);
      expect(legacy.find((a) => a.propertyUrn === propertyUrnOf('fixture.legacy'))?.values).toEqual([
        { string: FIXTURE_DATASETS[2]!.legacy },
      ]);
      const found = await second.search.scroll(FIXTURE_ADMIN, gold);
      expect(found.searchResults.map((r) => r.entity.urn)).toContain(target.urn);
      const history = await second.properties.valueHistory(FIXTURE_ADMIN, target.urn, propertyUrnOf('fixture.tier'));
      expect(history.map((c) => [c.values, c.current])).toEqual([
        [[{ string: 'gold' }], true],
        [[{ string: target.tier }], false],
      ]);
    } finally {
      await second.close();
    }
  });
});
