import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS, ADMIN, openHarness, type CompatHarness } from '../../http/compat/harness';

const P = 'urn:li:structuredProperty:io.settings.tier';
const Q = 'urn:li:structuredProperty:io.settings.owner';
const SETTINGS_PATH = (urn: string) => `/openapi/v2/entity/structuredProperty/${encodeURIComponent(urn)}/structuredPropertySettings`;

describe.each(ADAPTERS)('the structuredPropertySettings aspect (%s)', (kind) => {
  let h: CompatHarness;
  beforeEach(async () => {
    h = await openHarness(kind);
    for (const qualifiedName of ['io.settings.tier', 'io.settings.owner']) {
      await h.catalog.properties.create(ADMIN, { qualifiedName, valueType: 'string', entityTypes: ['dataset'] });
    }
  });
  afterEach(() => h.close());

  it('REST writes the whole aspect: read back with every flag, stamped, and refused when hidden yet shown, for a missing or soft-deleted property', async () => {
    const written = await h.request('POST', SETTINGS_PATH(P), { showInSearchFilters: true });
    expect(written.status).toBe(200);
    const read = await h.request('GET', SETTINGS_PATH(P));
    expect(read.json.value).toMatchObject({
      isHidden: false,
      showInSearchFilters: true,
      showInAssetSummary: false,
      hideInAssetSummaryWhenEmpty: false,
      showAsAssetBadge: false,
      showInColumnsTable: false,
      lastModified: { actor: ADMIN },
    });
    expect((await h.catalog.properties.get(ADMIN, P))?.settings?.showInSearchFilters).toBe(true);

    const hidden = await h.request('POST', SETTINGS_PATH(P), { isHidden: true, showInColumnsTable: true });
    expect(hidden.status).toBe(400);
    expect(hidden.json.error.details).toEqual([{ path: '/isHidden', message: expect.stringContaining('showInColumnsTable') }]);
    expect((await h.request('POST', SETTINGS_PATH(P), { isHidden: 'yes' })).status).toBe(400);
    expect((await h.request('POST', SETTINGS_PATH('urn:li:structuredProperty:io.settings.none'), { isHidden: true })).status).toBe(404);
    await h.catalog.properties.softDelete(ADMIN, P);
    expect((await h.request('POST', SETTINGS_PATH(P), { isHidden: true })).status).toBe(400);
    // Nothing refused was written.
    expect((await h.request('GET', SETTINGS_PATH(P))).json.value.isHidden).toBe(false);
  });

  it('one asset badge at most, also through bulk writes; the flags are search fields', async () => {
    expect((await h.request('POST', SETTINGS_PATH(P), { showAsAssetBadge: true })).status).toBe(200);
    const second = await h.request('POST', SETTINGS_PATH(Q), { showAsAssetBadge: true });
    expect(second.status).toBe(400);
    expect(second.json.error.message).toContain(P);
    // Writing the badge holder's own settings again is fine.
    expect((await h.request('POST', SETTINGS_PATH(P), { showAsAssetBadge: true, showInSearchFilters: true })).status).toBe(200);

    const bulk = h.catalog.entities.upsertMany(ADMIN, [
      { urn: Q, aspects: { structuredPropertySettings: { isHidden: true, showInAssetSummary: true } } },
    ]);
    await expect(bulk).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await h.catalog.entities.upsertMany(ADMIN, [{ urn: Q, aspects: { structuredPropertySettings: { isHidden: true } } }]);
    const hidden = await h.catalog.search.scroll(ADMIN, {
      types: ['STRUCTURED_PROPERTY'],
      orFilters: [{ and: [{ field: 'isHidden', values: ['true'] }] }],
    });
    expect(hidden.searchResults.map((r) => r.entity.urn)).toEqual([Q]);
    const badges = await h.catalog.search.aggregate(ADMIN, { types: ['STRUCTURED_PROPERTY'], facets: ['showAsAssetBadge'] });
    expect(badges.facets[0]!.aggregations).toEqual([
      { value: 'false', count: 1 },
      { value: 'true', count: 1 },
    ]);
  });
});
