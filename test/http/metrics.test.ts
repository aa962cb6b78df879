import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createFetchHandler, createMetricsHandler, startMetricsServer } from '../../src/http/index';
import { createCatalog, type Catalog } from '../../src/index';
import { parsePrometheusText, type Exposition } from '../support/prometheus-text';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'metrics-test-signing-key-0123456789abcdef';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,metrics.orders,PROD)';
const ASPECT_ROUTE = '/openapi/v2/entity/{entityName}/{urn}/{aspectName}';

const open: Catalog[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function catalogFor(options: { fail?: () => boolean; clock?: () => number } = {}): Catalog {
  const catalog = createCatalog({
    adapter: createMemoryAdapter({
      faultInjector: () => {
        if (options.fail?.()) throw new Error('disk full (injected)');
      },
    }),
    tokenSigningKey: KEY,
    superUsers: [ADMIN],
    jobs: { background: false },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  open.push(catalog);
  return catalog;
}

async function scrape(handler: ReturnType<typeof createMetricsHandler>): Promise<Exposition> {
  const response = await handler(new Request('http://host/metrics'));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheusText(await response.text());
}

const aspectPath = (urn: string) => `http://host/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`;

describe('metrics', () => {
  it('count the preview of a definition change as a preview operation of catalog.properties', async () => {
    const catalog = catalogFor();
    await catalog.ready();
    const metrics = createMetricsHandler(catalog);
    const definition = { valueType: 'urn:li:dataType:datahub.string', entityTypes: ['urn:li:entityType:datahub.dataset'] };
    const before = await scrape(metrics);
    await catalog.properties.previewChange(ADMIN, { urn: 'urn:li:structuredProperty:metrics.tier', ...definition });
    await catalog.properties.previewChange('urn:li:corpuser:nobody', definition).catch(() => undefined);
    const after = await scrape(metrics);
    const delta = (labels: Record<string, string>) =>
      after.sum('metacatalog_operations_total', labels) - before.sum('metacatalog_operations_total', labels);
    expect(delta({ operation: 'preview', method: 'properties.previewChange', outcome: 'ok' })).toBe(1);
    expect(delta({ operation: 'preview', method: 'properties.previewChange', outcome: 'FORBIDDEN' })).toBe(1);
  });

  it('parse as Prometheus text and move with requests: a write raises its counters, bad tokens their refusal outcome', async () => {
    let offset = 0;
    const catalog = catalogFor({ clock: () => Date.now() + offset });
    await catalog.ready();
    const metrics = createMetricsHandler(catalog);
    const http = createFetchHandler(catalog);
    const token = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'm' })).accessToken;
    const revoked = await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'r' });
    await catalog.tokens.revoke(ADMIN, revoked.metadata.id);
    const soonExpired = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'e' }))
      .accessToken;

    const before = await scrape(metrics);
    const write = (bearer: string) =>
      http(
        new Request(aspectPath(DATASET), {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'orders', description: 'secret-looking value 42' }),
        }),
      );
    expect((await write(token)).status).toBe(200);
    const forged = `${token.slice(0, -4)}AAAA`;
    expect((await write(forged)).status).toBe(401);
    expect((await write(revoked.accessToken)).status).toBe(401);
    offset += 2 * 3600_000;
    expect((await write(soonExpired)).status).toBe(401);
    const after = await scrape(metrics);

    const delta = (name: string, labels: Record<string, string> = {}) => after.sum(name, labels) - before.sum(name, labels);
    expect(delta('metacatalog_http_requests_total', { method: 'POST', route: ASPECT_ROUTE, status: '200' })).toBe(1);
    expect(delta('metacatalog_http_requests_total', { method: 'POST', route: ASPECT_ROUTE, status: '401' })).toBe(3);
    expect(delta('metacatalog_http_request_duration_seconds_count', { method: 'POST', route: ASPECT_ROUTE })).toBe(4);
    expect(delta('metacatalog_operations_total', { operation: 'upsert', adapter: 'memory', outcome: 'ok' })).toBe(1);
    expect(delta('metacatalog_commits_total', { adapter: 'memory', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(delta('metacatalog_commit_entities_count')).toBeGreaterThanOrEqual(1);
    expect(delta('metacatalog_change_events_total')).toBeGreaterThanOrEqual(1);
    expect(after.value('metacatalog_change_feed_head')).toBeGreaterThan(before.value('metacatalog_change_feed_head'));
    expect(delta('metacatalog_token_verifications_total', { outcome: 'ok' })).toBe(1);
    expect(delta('metacatalog_token_verifications_total', { outcome: 'forged' })).toBe(1);
    expect(delta('metacatalog_token_verifications_total', { outcome: 'revoked' })).toBe(1);
    expect(delta('metacatalog_token_verifications_total', { outcome: 'expired' })).toBe(1);
    expect(after.value('metacatalog_storage_up')).toBe(1);
    expect(after.types.get('metacatalog_operation_duration_seconds')).toBe('histogram');
    // Process metrics (prom-client's defaults) come with the catalog's.
    expect(after.types.get('process_cpu_user_seconds_total')).toBe('counter');

    // Bounded labels: route templates, never a URN, an actor, a token or a value.
    for (const sample of after.samples) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toContain('urn:li:');
        expect(value).not.toContain(token.slice(0, 20));
        expect(value).not.toContain('secret-looking');
      }
    }
  });

  it('jobs by type and state, the oldest pending age, and storage health as gauges', async () => {
    let failing = false;
    const catalog = catalogFor({ fail: () => failing });
    const metrics = createMetricsHandler(catalog);
    await catalog.properties.create(ADMIN, {
      qualifiedName: 'metrics.owner',
      valueType: 'string',
      entityTypes: ['dataset'],
    });
    await catalog.properties.upsertValues(ADMIN, DATASET, {
      properties: [{ propertyUrn: 'urn:li:structuredProperty:metrics.owner', values: [{ string: 'a' }] }],
    });
    await catalog.properties.hardDelete(ADMIN, 'urn:li:structuredProperty:metrics.owner');
    const queued = await scrape(metrics);
    expect(queued.sum('metacatalog_jobs', { state: 'queued' })).toBeGreaterThanOrEqual(1);
    expect(queued.value('metacatalog_jobs_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);
    await catalog.settle();
    const settled = await scrape(metrics);
    expect(settled.sum('metacatalog_jobs', { state: 'queued' })).toBe(0);

    failing = true;
    await expect(catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'x' })).rejects.toThrow('disk full');
    const down = await scrape(metrics);
    expect(down.value('metacatalog_storage_up')).toBe(0);
    expect(down.sum('metacatalog_commits_total', { outcome: 'error' })).toBe(1);
    expect(down.sum('metacatalog_operations_total', { operation: 'upsert', outcome: 'error' })).toBe(1);
    failing = false;
    await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'x' });
    expect((await scrape(metrics)).value('metacatalog_storage_up')).toBe(1);
  });

  it('counts GraphQL operations by name and outcome, with a bounded set of names', async () => {
    const catalog = catalogFor();
    const metrics = createMetricsHandler(catalog, { processMetrics: false });
    const http = createFetchHandler(catalog, { trustActorHeader: true });
    const graphql = (query: string) =>
      http(
        new Request('http://host/api/graphql', {
          method: 'POST',
          headers: { 'x-service-actor': ADMIN, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }),
      );
    expect((await graphql('query Probe { entity(urn: "urn:li:dataset:(urn:li:dataPlatform:hive,none,PROD)") { urn } }')).status).toBe(200);
    expect((await graphql('mutation Refused { revokeAccessToken(tokenId: "nope") }')).status).toBe(200);
    for (let i = 0; i < 105; i++) expect((await graphql(`query Name${i} { __typename }`)).status).toBe(200);
    const text = await scrape(metrics);
    expect(text.value('metacatalog_graphql_operations_total', { operation: 'Probe', type: 'query', outcome: 'ok' })).toBe(1);
    expect(text.value('metacatalog_graphql_operations_total', { operation: 'Refused', type: 'mutation', outcome: 'NOT_FOUND' })).toBe(1);
    const names = new Set(text.samples.filter((s) => s.name === 'metacatalog_graphql_operations_total').map((s) => s.labels.operation));
    expect(names.size).toBe(101); // 100 names, then `other`
    expect(text.value('metacatalog_graphql_operations_total', { operation: 'other' })).toBe(7);
    expect(text.types.has('process_cpu_user_seconds_total')).toBe(false);
  });

  it('counts open change-feed followers', async () => {
    const catalog = catalogFor();
    const metrics = createMetricsHandler(catalog, { processMetrics: false });
    const abort = new AbortController();
    const iterator = catalog.changes.follow(ADMIN, { signal: abort.signal })[Symbol.asyncIterator]();
    const first = iterator.next();
    await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'followed' });
    expect((await first).done).toBe(false);
    expect((await scrape(metrics)).value('metacatalog_change_feed_followers')).toBe(1);
    await iterator.return?.();
    abort.abort();
    expect((await scrape(metrics)).value('metacatalog_change_feed_followers')).toBe(0);
  });

  it('serves /metrics on a listener of its own, on loopback by default', async () => {
    const catalog = catalogFor();
    const server = await startMetricsServer(catalog, { port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(parsePrometheusText(await response.text()).types.get('metacatalog_http_requests_total')).toBe('counter');
      expect((await fetch(server.url.replace('/metrics', '/other'))).status).toBe(404);
      expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it('refuses an object that is not a catalog', () => {
    expect(() => createMetricsHandler({} as Catalog)).toThrow('metrics need a catalog made by createCatalog');
  });
});
