import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { createFetchHandler } from '../../src/http/index';
import { createCatalog, type Catalog } from '../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'tracing-test-signing-key-0123456789abcdef';
const PROPERTY = 'urn:li:structuredProperty:tracing.owner';
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,tracing.orders,PROD)';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const SECRET_VALUE = 'owner-value-never-in-a-span';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let dir: string;
let catalog: Catalog;
let token: string;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  dir = mkdtempSync(join(tmpdir(), 'metacatalog-tracing-'));
  catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: join(dir, 'catalog.db') }),
    tokenSigningKey: KEY,
    superUsers: [ADMIN],
    jobs: { background: false },
  });
  await catalog.ready();
  token = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'tracing' })).accessToken;
  await catalog.properties.create(ADMIN, {
    qualifiedName: 'tracing.owner',
    valueType: 'string',
    entityTypes: ['dataset'],
  });
});

afterAll(async () => {
  await catalog.close();
  rmSync(dir, { recursive: true, force: true });
  trace.disable();
  context.disable();
  propagation.disable();
});

beforeEach(() => exporter.reset());

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
}

/** No attribute of any span holds the token or a property value. */
function expectNoSecrets(spans: readonly ReadableSpan[]): void {
  for (const span of spans) {
    for (const value of Object.values(span.attributes)) {
      expect(String(value)).not.toContain(token.slice(-20));
      expect(String(value)).not.toContain(SECRET_VALUE);
    }
  }
}

describe('spans', () => {
  it('a GraphQL value upsert: the request span joins the caller’s trace; verify, the catalog call and its commit are its descendants', async () => {
    const http = createFetchHandler(catalog);
    const response = await http(
      new Request('http://host/api/graphql', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
        },
        body: JSON.stringify({
          query:
            'mutation upsertOwner($input: UpsertStructuredPropertiesInput!) { upsertStructuredProperties(input: $input) { properties { values { ... on StringValue { stringValue } } } } }',
          variables: {
            input: {
              assetUrn: DATASET,
              structuredPropertyInputParams: [{ structuredPropertyUrn: PROPERTY, values: [{ stringValue: SECRET_VALUE }] }],
            },
          },
        }),
      }),
    );
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain(SECRET_VALUE);
    const spans = exporter.getFinishedSpans();

    const request = only(spans, 'POST /api/graphql');
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(parentOf(request)).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/graphql',
      'http.response.status_code': 200,
      'metacatalog.request_id': response.headers.get('x-request-id'),
      'metacatalog.actor': ADMIN,
      'graphql.operation.name': 'upsertOwner',
      'graphql.operation.type': 'mutation',
      'metacatalog.outcome': 'ok',
    });

    const verify = only(spans, 'metacatalog tokens.verify');
    expect(parentOf(verify)).toBe(idOf(request));
    expect(verify.attributes).toMatchObject({ 'metacatalog.operation': 'token_verify', 'metacatalog.outcome': 'ok' });

    const upsert = only(spans, 'metacatalog properties.upsertValues');
    expect(parentOf(upsert)).toBe(idOf(request));
    expect(upsert.attributes).toMatchObject({
      'metacatalog.operation': 'upsert',
      'metacatalog.adapter': 'sqlite',
      'metacatalog.entity_type': 'dataset',
      'metacatalog.outcome': 'ok',
    });

    const commits = spans.filter((s) => s.name === 'metacatalog adapter.commit' && parentOf(s) === idOf(upsert));
    expect(commits).toHaveLength(1);
    expect(commits[0]!.attributes).toMatchObject({
      'metacatalog.adapter': 'sqlite',
      'metacatalog.item_count': 1,
      'metacatalog.outcome': 'ok',
    });
    expect(spans.every((s) => s.spanContext().traceId === TRACE_ID)).toBe(true);
    expectNoSecrets(spans);
  });

  it('a bulk ingest: one span with the item count and entity types, a commit span per chunk, a refused item as the outcome', async () => {
    const items = Array.from({ length: 3 }, (_, i) => ({
      urn: `urn:li:dataset:(urn:li:dataPlatform:hive,tracing.bulk${i},PROD)`,
      aspects: {
        datasetProperties: { name: `bulk ${i}` },
        structuredProperties: { properties: [{ propertyUrn: PROPERTY, values: [{ string: SECRET_VALUE }] }] },
      },
    }));
    await catalog.entities.upsertMany(ADMIN, items);
    let spans = exporter.getFinishedSpans();
    const bulk = only(spans, 'metacatalog entities.upsertMany');
    expect(parentOf(bulk)).toBeUndefined();
    expect(bulk.attributes).toMatchObject({
      'metacatalog.operation': 'bulk',
      'metacatalog.item_count': 3,
      'metacatalog.entity_type': 'dataset',
      'metacatalog.adapter': 'sqlite',
      'metacatalog.outcome': 'ok',
    });
    const commits = spans.filter((s) => s.name === 'metacatalog adapter.commit' && parentOf(s) === idOf(bulk));
    expect(commits.length).toBeGreaterThanOrEqual(1);
    expect(commits.reduce((n, s) => n + Number(s.attributes['metacatalog.item_count']), 0)).toBe(3);
    expectNoSecrets(spans);

    exporter.reset();
    const bad = [{ urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,tracing.bad,PROD)', aspects: { datasetProperties: { name: 42 } } }];
    await expect(catalog.entities.upsertMany(ADMIN, bad as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    spans = exporter.getFinishedSpans();
    expect(only(spans, 'metacatalog entities.upsertMany').attributes['metacatalog.outcome']).toBe('INVALID_INPUT');
    expect(spans.filter((s) => s.name === 'metacatalog adapter.commit')).toHaveLength(0);
  });

  it('a search: the catalog call and the adapter query', async () => {
    await catalog.search.search(ADMIN, { types: ['DATASET'], query: '*', start: 0, count: 5 });
    const spans = exporter.getFinishedSpans();
    const search = only(spans, 'metacatalog search.search');
    expect(search.attributes).toMatchObject({ 'metacatalog.operation': 'search', 'metacatalog.entity_type': 'DATASET' });
    const query = only(spans, 'metacatalog adapter.search');
    expect(parentOf(query)).toBe(idOf(search));
    expect(query.attributes).toMatchObject({ 'metacatalog.adapter': 'sqlite', 'metacatalog.entity_type': 'dataset' });
  });

  it('a request without traceparent starts a trace; an unmatched one is named by method only', async () => {
    const http = createFetchHandler(catalog);
    const missing = await http(new Request('http://host/no/such/route', { headers: { authorization: `Bearer ${token}` } }));
    expect(missing.status).toBe(404);
    const span = only(exporter.getFinishedSpans(), 'GET');
    expect(parentOf(span)).toBeUndefined();
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 404, 'metacatalog.outcome': 'NOT_FOUND' });
  });
});
