import type { AggregateRequest, SearchDocument, SearchRequest, StorageAdapter } from '../adapter/types';
import {
  randomAggregateRequest,
  randomCatalog,
  randomDocument,
  randomScope,
  randomSearchRequest,
  seededRandom,
  type Random,
} from './search-catalog';
import { compareCodeUnits, referenceAggregate, referenceSearch } from './search-reference';
import { aspect, faultAt, INJECTED_FAULT, withAdapter } from './support';
import type { ConformanceExpect, ConformanceHarness } from './types';

const CATALOG_SIZE = 260;
const SEARCHES = 300;
const AGGREGATIONS = 120;

/** The documents an adapter holds, as the test wrote them, with each entity's version. */
export class WrittenCatalog {
  readonly documents = new Map<string, SearchDocument>();
  readonly versions = new Map<string, number>();

  constructor(private readonly adapter: StorageAdapter) {}

  get list(): SearchDocument[] {
    return [...this.documents.values()];
  }

  /** Writes (creates or replaces) the documents, `batchSize` entities per commit. */
  async put(documents: readonly SearchDocument[], batchSize = 40): Promise<void> {
    for (let i = 0; i < documents.length; i += batchSize) {
      const batch = documents.slice(i, i + batchSize);
      await this.adapter.commit({
        entities: batch.map((d) => ({
          urn: d.urn,
          entityType: d.entityType,
          expectVersion: this.versions.get(d.urn) ?? 0,
          put: [aspect('info', { title: d.urn }, (this.versions.get(d.urn) ?? 0) + 1)],
          searchDocument: d,
        })),
      });
      for (const d of batch) {
        this.versions.set(d.urn, (this.versions.get(d.urn) ?? 0) + 1);
        this.documents.set(d.urn, d);
      }
    }
  }

  /** Deletes the entities (and so their documents). */
  async deleteEntities(urns: readonly string[]): Promise<void> {
    await this.adapter.commit({
      entities: urns.map((urn) => ({
        urn,
        entityType: this.documents.get(urn)!.entityType,
        expectVersion: this.versions.get(urn)!,
        deleteEntity: true,
      })),
    });
    for (const urn of urns) {
      this.documents.delete(urn);
      this.versions.delete(urn);
    }
  }

  /** Keeps the entities but removes their search documents (`searchDocument: null`). */
  async dropDocuments(urns: readonly string[]): Promise<void> {
    await this.adapter.commit({
      entities: urns.map((urn) => ({
        urn,
        entityType: this.documents.get(urn)!.entityType,
        expectVersion: this.versions.get(urn)!,
        put: [aspect('info', { title: 'dropped' }, this.versions.get(urn)! + 1)],
        searchDocument: null,
      })),
    });
    for (const urn of urns) {
      this.documents.delete(urn);
      this.versions.set(urn, this.versions.get(urn)! + 1);
    }
  }
}

/** Compares one search with the reference; a failure shows the request next to the difference. */
export async function expectSearchLikeReference(
  expect: ConformanceExpect,
  adapter: StorageAdapter,
  documents: readonly SearchDocument[],
  request: SearchRequest,
): Promise<void> {
  const actual = await adapter.search(request);
  const expected = referenceSearch(documents, request);
  const typeOf = new Map(documents.map((d) => [d.urn, d.entityType]));
  for (const hit of actual.hits)
    expect({ request, hit, entityType: typeOf.get(hit.urn) }).toEqual({ request, hit, entityType: hit.entityType });
  if (!expected.ranked) {
    expect({ request, total: actual.total, urns: actual.hits.map((h) => h.urn) }).toEqual({
      request,
      total: expected.total,
      urns: expected.urns,
    });
    return;
  }
  // Ranked by full-text score: the same matches, best first by the adapter's own scores, and pages
  // that are slices of one ranking.
  const all = await adapter.search({ ...request, offset: 0, limit: documents.length + 1 });
  const matched = all.hits.map((h) => h.urn).sort(compareCodeUnits);
  expect({ request, total: all.total, matched }).toEqual({ request, total: expected.total, matched: expected.urns });
  expect({ request, total: actual.total }).toEqual({ request, total: expected.total });
  const outOfOrder = all.hits.findIndex((hit, i) => {
    const next = all.hits[i + 1];
    if (!next) return false;
    const a = hit.score ?? Number.NaN;
    const b = next.score ?? Number.NaN;
    return !(a > b || (a === b && hit.urn < next.urn));
  });
  expect({ request, outOfOrder }).toEqual({ request, outOfOrder: -1 });
  const offset = request.offset ?? 0;
  expect({ request, page: actual.hits.map((h) => h.urn) }).toEqual({
    request,
    page: all.hits.slice(offset, offset + request.limit).map((h) => h.urn),
  });
}

async function expectAggregateLikeReference(
  expect: ConformanceExpect,
  adapter: StorageAdapter,
  documents: readonly SearchDocument[],
  request: AggregateRequest,
): Promise<void> {
  const actual = await adapter.aggregate(request);
  expect({ request, facets: actual }).toEqual({ request, facets: referenceAggregate(documents, request) });
}

async function compareMany(
  expect: ConformanceExpect,
  adapter: StorageAdapter,
  documents: readonly SearchDocument[],
  random: Random,
): Promise<void> {
  let some = 0;
  let notAll = 0;
  for (let i = 0; i < SEARCHES; i++) {
    const request = randomSearchRequest(random, documents);
    await expectSearchLikeReference(expect, adapter, documents, request);
    const { total } = referenceSearch(documents, request);
    if (total > 0) some++;
    if (total < documents.length / 2) notAll++;
  }
  // Guards the generator: most requests must select something, and many must select little.
  expect(some > SEARCHES / 2 && notAll > SEARCHES / 4).toBe(true);
  let buckets = 0;
  for (let i = 0; i < AGGREGATIONS; i++) {
    const request = randomAggregateRequest(random, documents);
    await expectAggregateLikeReference(expect, adapter, documents, request);
    for (const facet of referenceAggregate(documents, request)) buckets += facet.buckets.length;
  }
  expect(buckets > AGGREGATIONS).toBe(true);
}

/**
 * A seeded random catalog written through `commit`, then seeded random requests (every operator,
 * negation, OR of ANDs, entity types, text, removed, both orders, keyset and offset paging, facets),
 * each compared with the plain-JS reference evaluation.
 */
export function registerRandomSearchTests(harness: ConformanceHarness): void {
  const { describe, it, expect } = harness;

  describe('search and aggregation compared with the reference evaluation', () => {
    it('answers seeded random searches and aggregations like the reference', async () => {
      await withAdapter(harness, async (adapter) => {
        const catalog = new WrittenCatalog(adapter);
        await catalog.put(randomCatalog(20240611, CATALOG_SIZE));
        await compareMany(expect, adapter, catalog.list, seededRandom(7));
      });
    });

    it('still answers like the reference after replacements, deletions, dropped documents and a rolled-back commit', async () => {
      const fault = faultAt(2);
      await withAdapter(
        harness,
        async (adapter) => {
          const catalog = new WrittenCatalog(adapter);
          const random = seededRandom(99);
          await catalog.put(randomCatalog(31337, CATALOG_SIZE));
          const urns = catalog.list.map((d) => d.urn);
          // Replace a fifth of the documents with new random content under the same URN.
          const replaced = urns
            .filter(() => random() < 0.2)
            .map((urn, i) => ({ ...randomDocument(random, 10_000 + i), urn, entityType: catalog.documents.get(urn)!.entityType }));
          await catalog.put(replaced, 7);
          await catalog.deleteEntities(urns.filter(() => random() < 0.06));
          await catalog.dropDocuments(catalog.list.map((d) => d.urn).filter(() => random() < 0.03));
          await catalog.put(Array.from({ length: 30 }, (_, i) => randomDocument(random, 20_000 + i)));
          // A batch that fails half-way must leave the indexes as they were.
          const victims = catalog.list.slice(0, 4);
          fault.arm();
          let failed = '';
          try {
            await adapter.commit({
              entities: victims.map((d, i) => ({
                urn: d.urn,
                entityType: d.entityType,
                expectVersion: catalog.versions.get(d.urn)!,
                ...(i % 2 === 0
                  ? { searchDocument: { ...randomDocument(random, 30_000 + i), urn: d.urn, entityType: d.entityType } }
                  : { deleteEntity: true }),
              })),
            });
          } catch (error) {
            failed = error instanceof Error ? error.message : String(error);
          } finally {
            fault.disarm();
          }
          expect(failed).toBe(INJECTED_FAULT);
          await compareMany(expect, adapter, catalog.list, seededRandom(8));
        },
        fault.injector,
      );
    });

    it('pages through every match exactly once with afterUrn, and with offsets in relevance order', async () => {
      await withAdapter(harness, async (adapter) => {
        const catalog = new WrittenCatalog(adapter);
        await catalog.put(randomCatalog(4242, CATALOG_SIZE));
        const random = seededRandom(5);
        for (let round = 0; round < 20; round++) {
          const request = randomScope(random, catalog.list);
          const expected = referenceSearch(catalog.list, { ...request, order: 'urn', limit: CATALOG_SIZE + 1 });
          const seen: string[] = [];
          let afterUrn: string | undefined;
          for (let pages = 0; pages <= CATALOG_SIZE; pages++) {
            const page = await adapter.search({ ...request, order: 'urn', limit: 7, ...(afterUrn === undefined ? {} : { afterUrn }) });
            seen.push(...page.hits.map((h) => h.urn));
            if (page.hits.length < 7) break;
            afterUrn = page.hits[page.hits.length - 1]!.urn;
          }
          expect({ request, seen }).toEqual({ request, seen: expected.urns });
          const ranked: string[] = [];
          for (let offset = 0; offset <= expected.total; offset += 9) {
            const page = await adapter.search({ ...request, order: 'relevance', offset, limit: 9 });
            ranked.push(...page.hits.map((h) => h.urn));
          }
          expect({ request, ranked: [...ranked].sort(compareCodeUnits) }).toEqual({ request, ranked: expected.urns });
        }
      });
    });
  });
}
