import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { activeTracingApi } from '../../../src/core/telemetry/index';
import { createFetchHandler } from '../../../src/http/index';
import { createCatalog, type Catalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const KEY = 'no-sdk-test-signing-key-0123456789abcdef';

/** A context manager that counts the contexts code enters: a no-op span enters one per span. */
class CountingContextManager implements ContextManager {
  entered = 0;
  active(): Context {
    return ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    _context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.entered++;
    return fn.call(thisArg, ...args);
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

const manager = new CountingContextManager();
let catalog: Catalog;
let token: string;

beforeAll(async () => {
  context.setGlobalContextManager(manager);
  catalog = createCatalog({ adapter: createMemoryAdapter(), tokenSigningKey: KEY, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  token = (await catalog.tokens.create(ADMIN, { type: 'PERSONAL', actorUrn: ADMIN, duration: 'ONE_HOUR', name: 'no-sdk' })).accessToken;
});

afterAll(async () => {
  await catalog.close();
  trace.disable();
  context.disable();
});

async function writeOverHttp(name: string): Promise<void> {
  const urn = encodeURIComponent('urn:li:dataset:(urn:li:dataPlatform:hive,no.sdk,PROD)');
  const response = await createFetchHandler(catalog)(
    new Request(`http://host/openapi/v2/entity/dataset/${urn}/datasetProperties`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    }),
  );
  expect(response.status).toBe(200);
}

describe('tracing with @opentelemetry/api installed', () => {
  it('and no SDK registered: requests, catalog calls and commits make no spans and enter no contexts', async () => {
    expect(activeTracingApi()).toBeUndefined();
    manager.entered = 0;
    await writeOverHttp('first');
    await catalog.entities.upsertAspect(ADMIN, 'urn:li:dataset:(urn:li:dataPlatform:hive,no.sdk.2,PROD)', 'datasetProperties', {
      name: 'x',
    });
    expect(manager.entered).toBe(0);
  });

  it('an SDK registered later is used from then on', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    expect(activeTracingApi()).toBeDefined();
    await writeOverHttp('second');
    const names = exporter.getFinishedSpans().map((span) => span.name);
    expect(names).toContain('POST /openapi/v2/entity/{entityName}/{urn}/{aspectName}');
    expect(names).toContain('metacatalog adapter.commit');
    expect(manager.entered).toBeGreaterThan(0);
  });
});
