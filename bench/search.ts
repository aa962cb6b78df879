/**
 * Search and aggregation at scale: N datasets (default 100,000) × 5 structured properties (a skewed
 * 5-value enum, a 1,000-value string, a number, a date, a property on 30%) plus a name and a 20-word
 * description, written through the public API (`entities.upsertMany`, `properties.upsertValuesMany`).
 *
 * Every figure is measured through `catalog.search` (the domain resolves the filter fields, the
 * adapter evaluates) and printed beside a baseline run in the same process, interleaved with it:
 * - SQLite: the same question written by hand in SQL on the library's own schema (its best form for
 *   these data: the driving condition and the page strategy a person would pick), on a second
 *   connection to the same file with the same settings;
 * - memory: a plain JavaScript loop over the same search documents;
 * - memory full text: lunr() building an index of the same documents (what a rebuild per write costs).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import lunr from 'lunr';
import { createMemoryAdapter } from '../adapters/memory';
import { createMemoryFullText } from '../adapters/memory/search-text';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog, type FacetFilterInput, type SearchDocument, type StorageAdapter } from '../src';
import { deriveSearchDocument } from '../src/core/search-document';
import { generateDatasets, type GeneratedDataset } from './generator';
import { percentile, printTable, time, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';
const NAMES = ['tier', 'owner', 'score', 'reviewed', 'costCenter'] as const;
export type PropertyName = (typeof NAMES)[number];
const VALUE_TYPES: Record<PropertyName, string> = { tier: 'string', owner: 'string', score: 'number', reviewed: 'date', costCenter: 'string' };
export const propertyUrn = (name: PropertyName): string => `urn:li:structuredProperty:bench.${name}`;
export const field = (name: PropertyName): string => `structuredProperties.bench.${name}`;

/** One benchmarked question: its filters (as a client sends them) and how many times to ask it. */
export interface FilterCase {
  label: string;
  kind: 'filter' | 'and';
  filters: FacetFilterInput[];
}

export const CASES: readonly FilterCase[] = [
  { label: 'EQUAL tier=bronze (50%)', kind: 'filter', filters: [{ field: field('tier'), values: ['bronze'] }] },
  { label: 'EQUAL owner=team-0042 (0.1%)', kind: 'filter', filters: [{ field: field('owner'), values: ['team-0042'] }] },
  { label: 'GREATER_THAN score>90 (10%)', kind: 'filter', filters: [{ field: field('score'), values: ['90'], condition: 'GREATER_THAN' }] },
  { label: 'EXISTS costCenter (30%)', kind: 'filter', filters: [{ field: field('costCenter'), condition: 'EXISTS' }] },
  {
    label: 'AND tier=gold, score>50',
    kind: 'and',
    filters: [
      { field: field('tier'), values: ['gold'] },
      { field: field('score'), values: ['50'], condition: 'GREATER_THAN' },
    ],
  },
  {
    label: 'AND tier=bronze, costCenter EXISTS, reviewed>=2025-07-01',
    kind: 'and',
    filters: [
      { field: field('tier'), values: ['bronze'] },
      { field: field('costCenter'), condition: 'EXISTS' },
      { field: field('reviewed'), values: ['2025-07-01'], condition: 'GREATER_THAN_OR_EQUAL_TO' },
    ],
  },
  {
    label: 'AND owner=team-0042, score>50',
    kind: 'and',
    filters: [
      { field: field('owner'), values: ['team-0042'] },
      { field: field('score'), values: ['50'], condition: 'GREATER_THAN' },
    ],
  },
];

export const FACETS: readonly PropertyName[] = ['tier', 'owner'];

function assignments(d: GeneratedDataset) {
  const s = (string: string) => [{ string }];
  return [
    { propertyUrn: propertyUrn('tier'), values: s(d.tier) },
    { propertyUrn: propertyUrn('owner'), values: s(d.owner) },
    { propertyUrn: propertyUrn('score'), values: [{ double: d.score }] },
    { propertyUrn: propertyUrn('reviewed'), values: s(d.reviewed) },
    ...(d.costCenter ? [{ propertyUrn: propertyUrn('costCenter'), values: s(d.costCenter) }] : []),
  ];
}

/** Creates the properties and writes the datasets through the public API; returns the definition keys. */
export async function load(catalog: Catalog, datasets: readonly GeneratedDataset[]): Promise<{ ms: number; keys: Record<PropertyName, string> }> {
  const keys = {} as Record<PropertyName, string>;
  for (const name of NAMES) {
    const view = await catalog.properties.create(ADMIN, { qualifiedName: `bench.${name}`, displayName: name, valueType: VALUE_TYPES[name], entityTypes: ['dataset'] });
    keys[name] = view.definitionKey;
  }
  const { ms } = await time(async () => {
    await catalog.entities.upsertMany(
      ADMIN,
      datasets.map((d) => ({ urn: d.urn, aspects: { datasetProperties: { name: d.name, description: d.description } } })),
    );
    await catalog.properties.upsertValuesMany(ADMIN, datasets.map((d) => ({ urn: d.urn, properties: assignments(d) })));
  });
  return { ms, keys };
}

/** Latencies of two functions, interleaved so that machine noise hits both alike. */
async function interleaved(iterations: number, library: () => Promise<unknown>, baseline: () => unknown): Promise<{ library: number[]; baseline: number[] }> {
  for (let i = 0; i < 3; i++) {
    await library();
    baseline();
  }
  const out = { library: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < iterations; i++) {
    let start = performance.now();
    await library();
    out.library.push(performance.now() - start);
    start = performance.now();
    baseline();
    out.baseline.push(performance.now() - start);
  }
  return out;
}

function sameResult(label: string, library: unknown, baseline: unknown): void {
  const a = JSON.stringify(library);
  const b = JSON.stringify(baseline);
  if (a !== b) throw new Error(`${label}: the library and the baseline disagree:\n  library  ${a.slice(0, 400)}\n  baseline ${b.slice(0, 400)}`);
}

export const scrollInput = (filters: FacetFilterInput[]) => ({ types: ['DATASET'], query: '*', count: 20, orFilters: [{ and: filters }] });

// --- SQLite -------------------------------------------------------------------------------------------

/** The hand-written SQL of each case on the library's schema (search_docs, search_keys, search_values). */
function handSql(db: Database.Database, keys: Record<PropertyName, string>) {
  const keyIds = {} as Record<PropertyName, number>;
  for (const name of NAMES) {
    keyIds[name] = (db.prepare("SELECT id FROM search_keys WHERE kind = 'property' AND name = ? AND def_key = ?").get(propertyUrn(name), keys[name]) as { id: number }).id;
  }
  const values = (name: PropertyName, alias: string, test: string) => `${alias}.key_id = ${keyIds[name]} AND ${test}`;
  const probe = (name: PropertyName, test: string, entity = 'd.entity_id') => `EXISTS (SELECT 1 FROM search_values w WHERE w.entity_id = ${entity} AND ${values(name, 'w', test)})`;
  const scope = "v.removed = 0 AND v.entity_type = 'dataset'";
  // Pages: walk the URNs of the scope and test each (many matches), or sort the few matches.
  const walk = (tests: string) =>
    db.prepare(`SELECT d.urn AS urn FROM search_docs d WHERE d.removed = 0 AND d.entity_type = 'dataset' AND ${tests} ORDER BY d.urn LIMIT 20`).pluck();
  const sorted = (from: string, where: string) =>
    db.prepare(`SELECT d.urn AS urn FROM ${from} JOIN search_docs d ON d.entity_id = v.entity_id WHERE ${where} ORDER BY d.urn LIMIT 20`).pluck();
  const count = (sql: string) => db.prepare(sql).pluck();
  const queries: Record<string, { count: Database.Statement; page: Database.Statement }> = {
    [CASES[0]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'bronze'")} AND ${scope}`),
      page: walk(probe('tier', "w.value = 'bronze'")),
    },
    [CASES[1]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope}`),
      page: sorted(`search_values v`, `${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope}`),
    },
    [CASES[2]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('score', 'v', 'v.value > 90')} AND ${scope}`),
      page: walk(probe('score', 'w.value > 90')),
    },
    [CASES[3]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('costCenter', 'v', '1')} AND ${scope}`),
      page: walk(probe('costCenter', '1')),
    },
    [CASES[4]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'gold'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`),
      page: walk(`${probe('tier', "w.value = 'gold'")} AND ${probe('score', 'w.value > 50')}`),
    },
    [CASES[5]!.label]: {
      count: count(
        `SELECT COUNT(*) FROM search_values v WHERE ${values('tier', 'v', "v.value = 'bronze'")} AND ${scope}
         AND ${probe('costCenter', '1', 'v.entity_id')} AND ${probe('reviewed', "w.value >= '2025-07-01'", 'v.entity_id')}`,
      ),
      page: walk(`${probe('tier', "w.value = 'bronze'")} AND ${probe('costCenter', '1')} AND ${probe('reviewed', "w.value >= '2025-07-01'")}`),
    },
    [CASES[6]!.label]: {
      count: count(`SELECT COUNT(*) FROM search_values v WHERE ${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`),
      page: sorted('search_values v', `${values('owner', 'v', "v.value = 'team-0042'")} AND ${scope} AND ${probe('score', 'w.value > 50', 'v.entity_id')}`),
    },
  };
  const facet = (name: PropertyName) =>
    db.prepare(`SELECT v.value AS value, COUNT(*) AS count FROM search_values v WHERE v.key_id = ${keyIds[name]} AND ${scope} GROUP BY v.value ORDER BY count DESC, v.value LIMIT 20`);
  return { queries, facet };
}

export async function sqliteFigures(dir: string, datasets: readonly GeneratedDataset[]): Promise<Figure[]> {
  const file = join(dir, 'search.db');
  const adapter = createSqliteAdapter({ filename: file });
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  const loaded = await load(catalog, datasets);
  await adapter.flushSearchIndex?.();
  const figures: Figure[] = [
    { workload: `SQLite: write ${datasets.length.toLocaleString('en-US')} datasets + 5 properties (public API, setup)`, unit: 'ms', value: loaded.ms, better: 'lower' },
  ];
  const hand = new Database(file, { readonly: true });
  try {
    const { queries, facet } = handSql(hand, loaded.keys);
    for (const c of CASES) {
      const q = queries[c.label]!;
      const input = scrollInput(c.filters);
      const library = async () => {
        const r = await catalog.search.scroll(ADMIN, input);
        return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
      };
      const baseline = () => ({ total: q.count.get() as number, urns: q.page.all() as string[] });
      sameResult(c.label, await library(), baseline());
      const runs = await interleaved(c.kind === 'and' ? 60 : 150, library, baseline);
      const [p50, hand50, p99] = [percentile(runs.library, 50), percentile(runs.baseline, 50), percentile(runs.library, 99)];
      const limit = c.kind === 'and' ? 30 : 5;
      figures.push(
        { workload: `SQLite ${c.label}: count + first 20, p50`, unit: 'ms', value: p50, baseline: hand50, baselineName: 'hand SQL', better: 'lower', goal: '≤ 1.5× hand SQL', met: p50 <= 1.5 * hand50 },
        { workload: `SQLite ${c.label}: count + first 20, p99`, unit: 'ms', value: p99, baseline: percentile(runs.baseline, 99), baselineName: 'hand SQL', better: 'lower', goal: `≤ ${limit} ms`, met: p99 <= limit },
      );
    }
    for (const name of FACETS) {
      const input = { types: ['DATASET'], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } };
      const statement = facet(name);
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => (statement.all() as Array<{ value: string; count: number }>).map((r) => ({ value: r.value, count: r.count }));
      sameResult(`facet ${name}`, await library(), baseline());
      const runs = await interleaved(60, library, baseline);
      const [p50, hand50, p99] = [percentile(runs.library, 50), percentile(runs.baseline, 50), percentile(runs.library, 99)];
      figures.push(
        { workload: `SQLite facet ${name} over the whole corpus, p50`, unit: 'ms', value: p50, baseline: hand50, baselineName: 'hand GROUP BY', better: 'lower', goal: '≤ 1.5× hand GROUP BY', met: p50 <= 1.5 * hand50 },
        { workload: `SQLite facet ${name} over the whole corpus, p99`, unit: 'ms', value: p99, baseline: percentile(runs.baseline, 99), baselineName: 'hand GROUP BY', better: 'lower', goal: '≤ 50 ms', met: p99 <= 50 },
      );
    }
  } finally {
    hand.close();
    await catalog.close();
  }
  return figures;
}

// --- memory -------------------------------------------------------------------------------------------

/** The search documents the memory adapter holds, derived again from the stored aspects. */
async function documentsOf(catalog: Catalog, adapter: StorageAdapter): Promise<SearchDocument[]> {
  const out: SearchDocument[] = [];
  let afterUrn: string | undefined;
  for (;;) {
    const page = await adapter.scanEntities({ entityType: 'dataset', limit: 5000, ...(afterUrn ? { afterUrn } : {}) });
    for (const e of page) out.push(deriveSearchDocument(catalog.registry, e.urn, e.entityType, e.aspects));
    if (page.length < 5000) return out;
    afterUrn = page[page.length - 1]!.urn;
  }
}

type Predicate = (d: SearchDocument) => boolean;

/** The plain loop: every document, the condition, the count, and the 20 smallest URNs kept in order. */
function loopSearch(documents: readonly SearchDocument[], predicate: Predicate): { total: number; urns: string[] } {
  let total = 0;
  const top: string[] = [];
  for (const d of documents) {
    if (d.removed || d.entityType !== 'dataset' || !predicate(d)) continue;
    total++;
    if (top.length === 20 && d.urn >= top[19]!) continue;
    let i = top.length;
    while (i > 0 && top[i - 1]! > d.urn) i--;
    top.splice(i, 0, d.urn);
    if (top.length > 20) top.pop();
  }
  return { total, urns: top };
}

function loopFacet(documents: readonly SearchDocument[], property: string, key: string): Array<{ value: string; count: number }> {
  const counts = new Map<string | number, number>();
  for (const d of documents) {
    if (d.removed || d.entityType !== 'dataset') continue;
    for (const p of d.properties) {
      if (p.propertyUrn !== property || p.definitionKey !== key) continue;
      for (const v of new Set(p.values)) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, 20)
    .map(([value, count]) => ({ value: String(value), count }));
}

function loopPredicate(keys: Record<PropertyName, string>, filters: readonly FacetFilterInput[]): Predicate {
  const tests = filters.map((f) => {
    const name = f.field.slice('structuredProperties.bench.'.length) as PropertyName;
    const urn = propertyUrn(name);
    const key = keys[name];
    const wanted = f.values?.[0];
    const number = Number(wanted);
    const test: (v: string | number) => boolean =
      f.condition === 'EXISTS'
        ? () => true
        : f.condition === 'GREATER_THAN'
          ? (v) => typeof v === 'number' && v > number
          : f.condition === 'GREATER_THAN_OR_EQUAL_TO'
            ? (v) => typeof v === 'string' && v >= wanted!
            : (v) => v === wanted;
    return (d: SearchDocument) => d.properties.some((p) => p.propertyUrn === urn && p.definitionKey === key && p.values.some(test));
  });
  return (d) => tests.every((t) => t(d));
}

async function memoryFigures(datasets: readonly GeneratedDataset[]): Promise<Figure[]> {
  const adapter = createMemoryAdapter();
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  const loaded = await load(catalog, datasets);
  const figures: Figure[] = [
    { workload: `memory: write ${datasets.length.toLocaleString('en-US')} datasets + 5 properties (public API, setup)`, unit: 'ms', value: loaded.ms, better: 'lower' },
  ];
  const documents = await documentsOf(catalog, adapter);
  try {
    for (const c of CASES) {
      const input = scrollInput(c.filters);
      const predicate = loopPredicate(loaded.keys, c.filters);
      const library = async () => {
        const r = await catalog.search.scroll(ADMIN, input);
        return { total: r.total, urns: r.searchResults.map((x) => x.entity.urn) };
      };
      const baseline = () => loopSearch(documents, predicate);
      sameResult(c.label, await library(), baseline());
      const runs = await interleaved(40, library, baseline);
      const [p50, loop50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
      figures.push({ workload: `memory ${c.label}: count + first 20, p50`, unit: 'ms', value: p50, baseline: loop50, baselineName: 'plain JS loop', better: 'lower', goal: '≤ 0.5× loop', met: p50 <= 0.5 * loop50 });
    }
    for (const name of FACETS) {
      const input = { types: ['DATASET'], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } };
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => loopFacet(documents, propertyUrn(name), loaded.keys[name]);
      sameResult(`memory facet ${name}`, await library(), baseline());
      const runs = await interleaved(40, library, baseline);
      const [p50, loop50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
      figures.push({ workload: `memory facet ${name} over the whole corpus, p50`, unit: 'ms', value: p50, baseline: loop50, baselineName: 'plain JS loop', better: 'lower', goal: '≤ 0.5× loop', met: p50 <= 0.5 * loop50 });
    }
    // A facet after a filter: the filtered documents' values are read, not a precomputed count.
    {
      const filters: FacetFilterInput[] = [{ field: field('score'), values: ['50'], condition: 'GREATER_THAN' }];
      const input = { types: ['DATASET'], query: '*', facets: [field('owner')], orFilters: [{ and: filters }], searchFlags: { maxAggValues: 20 } };
      const predicate = loopPredicate(loaded.keys, filters);
      const subset = () => documents.filter(predicate);
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => loopFacet(subset(), propertyUrn('owner'), loaded.keys.owner);
      sameResult('memory filtered facet', await library(), baseline());
      const runs = await interleaved(40, library, baseline);
      const [p50, loop50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
      figures.push({ workload: 'memory facet owner where score>50, p50', unit: 'ms', value: p50, baseline: loop50, baselineName: 'plain JS loop', better: 'lower', goal: '≤ 0.5× loop', met: p50 <= 0.5 * loop50 });
    }

    // Full text: a write is searchable at once (no rebuild), against what a lunr() rebuild costs.
    const lunrDocs = documents.map((d) => ({ id: d.urn, name: d.text.name ?? '', description: d.text.description ?? '', urnKey: d.text.urnKey }));
    const lunrBuild = await time(() =>
      lunr(function () {
        this.ref('id');
        this.field('name', { boost: 10 });
        this.field('description');
        this.field('urnKey');
        for (const doc of lunrDocs) this.add(doc);
      }),
    );
    const fullText = createMemoryFullText();
    const build = await time(() => {
      for (const d of documents) fullText.upsert(d.urn, d.text);
    });
    figures.push({
      workload: `memory full-text index build, ${documents.length.toLocaleString('en-US')} documents`,
      unit: 'ms',
      value: build.ms,
      baseline: lunrBuild.ms,
      baselineName: 'lunr() build',
      better: 'lower',
      goal: '≤ 10,000 ms',
      met: build.ms <= 10_000,
    });
    const visible: number[] = [];
    for (let i = 0; i < 200; i++) {
      const urn = `urn:li:dataset:(urn:li:dataPlatform:hive,bench.fresh_${i},PROD)`;
      const word = `zq${i}freshword`;
      const start = performance.now();
      await catalog.entities.upsertAspect(ADMIN, urn, 'datasetProperties', { name: `fresh ${i}`, description: `just written ${word}` });
      const found = await catalog.search.scroll(ADMIN, { query: word, count: 1 });
      visible.push(performance.now() - start);
      if (found.total !== 1) throw new Error(`a write was not searchable at once: ${word}`);
    }
    const [visible50, visible99, visibleMax] = [percentile(visible, 50), percentile(visible, 99), Math.max(...visible)];
    for (const [label, value] of [['p50', visible50], ['p99', visible99], ['max', visibleMax]] as const) {
      figures.push({
        workload: `memory full text: write → found by a query, ${label} of 200`,
        unit: 'ms',
        value,
        baseline: lunrBuild.ms,
        baselineName: 'lunr() rebuild per write',
        better: 'lower',
        goal: label === 'max' ? '' : '≤ 100 ms',
        ...(label === 'max' ? {} : { met: value <= 100 }),
      });
    }
  } finally {
    await catalog.close();
  }
  return figures;
}

export async function runSearchBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const count = options.entities ?? 100_000;
  const datasets = [...generateDatasets({ count, seed: 42 })];
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-'));
  const figures: Figure[] = [];
  try {
    figures.push(...(await sqliteFigures(dir, datasets)));
    figures.push(...(await memoryFigures(datasets)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(`Search and aggregation: ${count.toLocaleString('en-US')} datasets × 5 properties (latencies through catalog.search; baselines interleaved in the same process)`, figures);
  return figures;
}
