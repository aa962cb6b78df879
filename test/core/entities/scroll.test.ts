import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog, DEFAULT_SCROLL_COUNT } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,t${String(i).padStart(2, '0')},PROD)`;

describe('catalog.entities.scroll: pages of one entity type with an opaque scroll id', () => {
  it('pages in URN order with the default count, and refuses a scroll id it did not give out', async () => {
    const c = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
    await c.entities.upsertMany(
      ADMIN,
      Array.from({ length: 25 }, (_, i) => ({ urn: dataset(i), aspects: { datasetProperties: { name: `t${i}` } } })),
    );
    const seen: string[] = [];
    let page = await c.entities.scroll(ADMIN, { entityType: 'dataset' });
    expect(page.entities).toHaveLength(DEFAULT_SCROLL_COUNT);
    for (;;) {
      seen.push(...page.entities.map((e) => e.urn));
      if (page.scrollId === undefined) break;
      page = await c.entities.scroll(ADMIN, { entityType: 'dataset', scrollId: page.scrollId });
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => dataset(i)));
    await expect(c.entities.scroll(ADMIN, { entityType: 'dataset', scrollId: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: [{ path: 'scrollId' }],
    });
    await c.close();
  });
});
