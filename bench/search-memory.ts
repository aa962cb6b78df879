import lunr from 'lunr';
import { createMemoryAdapter } from '../adapters/memory';
import { createMemoryFullText } from '../adapters/memory/search-text';
import { createCatalog, type Catalog, type FacetFilterInput, type SearchDocument, type StorageAdapter } from '../src';
import { deriveSearchDocument } from '../src/core/entities/search-document';
import type { GeneratedDataset } from './generator';
import { percentile, time, type Figure } from './harness';
import { ADMIN, CASES, FACETS, field, interleaved, load, propertyUrn, sameResult, scrollInput, type PropertyName } from './search-cases';

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

/** The text of a dataset's search document, as the domain derives it (name, description, URN key). */
function textOf(d: GeneratedDataset): SearchDocument['text'] {
  return { name: d.name, description: d.description, urnKey: d.urn.slice('urn:li:dataset:'.length) };
}

/**
 * Building the full-text index of N documents, in a heap that holds nothing else big (each index is
 * dropped before the next is built), against lunr() building its index of the same documents.
 */
async function fullTextBuild(datasets: readonly GeneratedDataset[]): Promise<{ ms: number; lunrMs: number }> {
  let index: ReturnType<typeof createMemoryFullText> | undefined = createMemoryFullText();
  const own = await time(() => {
    for (const d of datasets) index!.upsert(d.urn, textOf(d));
  });
  if (index.search('*') !== undefined) throw new Error('"*" must match everything');
  index = undefined;
  const lunrMs = (
    await time(() => {
      lunr(function () {
        this.ref('id');
        this.field('name', { boost: 10 });
        this.field('description');
        this.field('urnKey');
        for (const d of datasets) this.add({ id: d.urn, ...textOf(d) });
      });
    })
  ).ms;
  return { ms: own.ms, lunrMs };
}

export async function memoryFigures(datasets: readonly GeneratedDataset[]): Promise<Figure[]> {
  const build = await fullTextBuild(datasets);
  const buildFigure: Figure = {
    workload: `memory full-text index build, ${datasets.length.toLocaleString('en-US')} documents`,
    unit: 'ms',
    value: build.ms,
    baseline: build.lunrMs,
    baselineName: 'lunr() build',
    better: 'lower',
    goal: '≤ 10,000 ms',
    met: build.ms <= 10_000,
  };
  const adapter = createMemoryAdapter();
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  const loaded = await load(catalog, datasets);
  const figures: Figure[] = [
    {
      workload: `memory: write ${datasets.length.toLocaleString('en-US')} datasets + 5 properties (public API, setup)`,
      unit: 'ms',
      value: loaded.ms,
      better: 'lower',
    },
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
      figures.push({
        workload: `memory ${c.label}: count + first 20, p50`,
        unit: 'ms',
        value: p50,
        baseline: loop50,
        baselineName: 'plain JS loop',
        better: 'lower',
        goal: '≤ 0.5× loop',
        met: p50 <= 0.5 * loop50,
      });
    }
    for (const name of FACETS) {
      const input = { types: ['DATASET' as const], query: '*', facets: [field(name)], searchFlags: { maxAggValues: 20 } };
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => loopFacet(documents, propertyUrn(name), loaded.keys[name]);
      sameResult(`memory facet ${name}`, await library(), baseline());
      const runs = await interleaved(40, library, baseline);
      const [p50, loop50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
      figures.push({
        workload: `memory facet ${name} over the whole corpus, p50`,
        unit: 'ms',
        value: p50,
        baseline: loop50,
        baselineName: 'plain JS loop',
        better: 'lower',
        goal: '≤ 0.5× loop',
        met: p50 <= 0.5 * loop50,
      });
    }
    // A facet after a filter: the filtered documents' values are read, not a precomputed count.
    {
      const filters: FacetFilterInput[] = [{ field: field('score'), values: ['50'], condition: 'GREATER_THAN' }];
      const input = {
        types: ['DATASET' as const],
        query: '*',
        facets: [field('owner')],
        orFilters: [{ and: filters }],
        searchFlags: { maxAggValues: 20 },
      };
      const predicate = loopPredicate(loaded.keys, filters);
      const subset = () => documents.filter(predicate);
      const library = async () => (await catalog.search.aggregate(ADMIN, input)).facets[0]!.aggregations;
      const baseline = () => loopFacet(subset(), propertyUrn('owner'), loaded.keys.owner);
      sameResult('memory filtered facet', await library(), baseline());
      const runs = await interleaved(40, library, baseline);
      const [p50, loop50] = [percentile(runs.library, 50), percentile(runs.baseline, 50)];
      figures.push({
        workload: 'memory facet owner where score>50, p50',
        unit: 'ms',
        value: p50,
        baseline: loop50,
        baselineName: 'plain JS loop',
        better: 'lower',
        goal: '≤ 0.5× loop',
        met: p50 <= 0.5 * loop50,
      });
    }

    // Full text: a write is searchable at once (no rebuild), against what a lunr() rebuild costs.
    figures.push(buildFigure);
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
    for (const [label, value] of [
      ['p50', visible50],
      ['p99', visible99],
      ['max', visibleMax],
    ] as const) {
      figures.push({
        workload: `memory full text: write → found by a query, ${label} of 200`,
        unit: 'ms',
        value,
        baseline: build.lunrMs,
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
