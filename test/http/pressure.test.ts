import { request as httpRequest, Agent } from 'node:http';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createRequestHandler } from '../../src/http/handler';
import type { IncomingExchange } from '../../src/http/exchange';
import { nodeListenerOf } from '../../src/http/node-listener';
import { Admission, graphqlUnits } from '../../src/http/admission';
import { createMetricsHandler } from '../../src/http/index';
import { metaRoutes } from '../../src/http/routes/meta';
import type { RouteSpec } from '../../src/http/router';
import { createCatalog, type Catalog } from '../../src/index';
import { ADMIN, DATASET, startTestServer, type TestServer } from './helpers';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function exchange(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): IncomingExchange {
  const bytes = body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body));
  const all: Record<string, string> = { ...headers, ...(bytes ? { 'content-type': 'application/json' } : {}) };
  return {
    method,
    rawPath: path,
    rawQuery: '',
    header: (name) => all[name],
    hasBody: () => bytes !== undefined,
    readBody: async () => bytes ?? new Uint8Array(0),
    isGone: () => false,
    remoteAddress: '127.0.0.1',
  };
}

/** A catalog whose `/slow` routes wait until released: requests held in flight at will. */
function heldRoutes() {
  const waiting: Array<() => void> = [];
  const slow = async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return { body: { ok: true } };
  };
  const routes: RouteSpec[] = [
    ...metaRoutes,
    {
      pattern: '/slow',
      methods: { GET: { body: 'none', public: true, handle: slow }, POST: { body: 'none', public: true, handle: slow } },
    },
  ];
  return {
    routes,
    waiting,
    releaseAll() {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

function memoryCatalog(): Catalog {
  const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
  closers.push(() => catalog.close());
  return catalog;
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));
/** Until `count` requests are inside the held route (admitted and running): one timer turn is not always enough on a busy machine. */
async function inside(held: { waiting: unknown[] }, count: number): Promise<void> {
  while (held.waiting.length < count) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('admission control', () => {
  it('answers 503 UNAVAILABLE with Retry-After at once when the queue is full; health still answers 200', async () => {
    const catalog = memoryCatalog();
    const metrics = createMetricsHandler(catalog, { processMetrics: false });
    const held = heldRoutes();
    const handle = createRequestHandler(catalog, { admission: { maxInFlight: 1, maxQueued: 1, maxQueueMs: 60_000 } }, held.routes);
    const first = handle(exchange('GET', '/slow'));
    await inside(held, 1);
    const second = handle(exchange('GET', '/slow'));
    await settled();
    expect(held.waiting).toHaveLength(1); // the second waits in the queue

    const third = await handle(exchange('GET', '/slow'));
    expect(third.answer.status).toBe(503);
    expect(third.answer.headers['retry-after']).toBe('1');
    const body = JSON.parse(third.answer.body) as { error: { code: string; reason: string }; message: string };
    expect(body.error).toMatchObject({ code: 'UNAVAILABLE', reason: 'overloaded' });
    expect(body.message).toMatch(/overloaded/);

    // Writes have their own gate: one runs while the reads are full.
    const write = handle(exchange('POST', '/slow'));
    await inside(held, 2);
    expect(held.waiting).toHaveLength(2);

    const health = await handle(exchange('GET', '/health'));
    expect(health.answer.status).toBe(200);

    held.releaseAll();
    expect((await first).answer.status).toBe(200);
    await settled();
    held.releaseAll();
    expect((await second).answer.status).toBe(200);
    expect((await write).answer.status).toBe(200);
    expect(await metrics.metrics()).toMatch(/metacatalog_http_shed_total\{kind="overloaded",class="read",why="queue-full"\} 1/);
  });

  it('starts admitted work on a later turn: requests read in one turn are all admitted or refused before any runs', async () => {
    // A route whose work needs no I/O: started at once, it would run to its answer in promise callbacks
    // alone, before the next request of the same turn was read, and every request would find the gate empty.
    const routes: RouteSpec[] = [
      { pattern: '/quick', methods: { GET: { body: 'none', public: true, handle: async () => ({ body: { ok: true } }) } } },
    ];
    const handle = createRequestHandler(memoryCatalog(), { admission: { maxInFlight: 1, maxQueued: 0 } }, routes);
    const first = handle(exchange('GET', '/quick'));
    for (let i = 0; i < 1_000; i++) await Promise.resolve(); // promise callbacks only: the loop does not turn
    const second = await handle(exchange('GET', '/quick'));
    expect(second.answer.status).toBe(503);
    expect((await first).answer.status).toBe(200);
    expect((await handle(exchange('GET', '/quick'))).answer.status).toBe(200);
  });

  it('serves a queued request past its maxQueueMs, refuses newcomers at once meanwhile, and refuses it past ten bounds', async () => {
    const held = heldRoutes();
    const handle = createRequestHandler(memoryCatalog(), { admission: { maxInFlight: 1, maxQueued: 10, maxQueueMs: 200 } }, held.routes);
    // A bound well above the loop lag of a busy machine (past it, the loop-lag rule would refuse first).
    const first = handle(exchange('GET', '/slow'));
    await inside(held, 1);
    const second = handle(exchange('GET', '/slow'));
    await new Promise((r) => setTimeout(r, 300));
    // The second waits past its bound: a newcomer behind it would too, so it is refused at once.
    const third = await handle(exchange('GET', '/slow'));
    expect(third.answer.status).toBe(503);
    expect(third.answer.headers['retry-after']).toBe('1');
    expect(JSON.parse(third.answer.body)).toMatchObject({ error: { message: expect.stringMatching(/waited past the bound/) as unknown } });
    // The second is still served once the slot is free: refused now, it would have waited for nothing.
    held.releaseAll();
    expect((await first).answer.status).toBe(200);
    await inside(held, 1);
    held.releaseAll();
    expect((await second).answer.status).toBe(200);
    // One kept waiting past ten bounds (a slot held far longer than ever seen) is refused. A new handler: this
    // one has seen slow requests, and would refuse the next one at once for its expected wait.
    const again = createRequestHandler(memoryCatalog(), { admission: { maxInFlight: 1, maxQueued: 10, maxQueueMs: 200 } }, held.routes);
    const blocker = again(exchange('GET', '/slow'));
    await inside(held, 1);
    const stuck = await again(exchange('GET', '/slow'));
    expect(stuck.answer.status).toBe(503);
    expect(JSON.parse(stuck.answer.body)).toMatchObject({ error: { message: expect.stringMatching(/waited 2000 ms/) as unknown } });
    held.releaseAll();
    expect((await blocker).answer.status).toBe(200);
  });

  it('counts the time a request was held before it came in: past the bound it runs only on a free slot', async () => {
    const held = heldRoutes();
    const handle = createRequestHandler(memoryCatalog(), { admission: { maxInFlight: 1, maxQueued: 10, maxQueueMs: 5_000 } }, held.routes);
    const first = handle(exchange('GET', '/slow'));
    await inside(held, 1);
    // An empty queue and a slot soon free would admit a fresh request; one held 5 s already is refused at once.
    const heldBefore = await handle({ ...exchange('GET', '/slow'), waitedMs: 5_000 });
    expect(heldBefore.answer.status).toBe(503);
    expect(JSON.parse(heldBefore.answer.body)).toMatchObject({
      error: { message: expect.stringMatching(/held 5000 ms already/) as unknown },
    });
    held.releaseAll();
    expect((await first).answer.status).toBe(200);
    // On a free slot it runs.
    const free = handle({ ...exchange('GET', '/slow'), waitedMs: 5_000 });
    await inside(held, 1);
    held.releaseAll();
    expect((await free).answer.status).toBe(200);
  });

  it('lets everything through with admission: false', async () => {
    const held = heldRoutes();
    const handle = createRequestHandler(memoryCatalog(), { admission: false }, held.routes);
    const all = Array.from({ length: 50 }, () => handle(exchange('GET', '/slow')));
    await settled();
    expect(held.waiting).toHaveLength(50);
    held.releaseAll();
    expect((await Promise.all(all)).every((h) => h.answer.status === 200)).toBe(true);
  });

  it('refuses bad options with INVALID_INPUT', () => {
    expect(() => createRequestHandler(memoryCatalog(), { admission: { maxInFlight: -1 } })).toThrow(/admission.maxInFlight/);
    expect(() => createRequestHandler(memoryCatalog(), { rateLimit: 0 })).toThrow(/rateLimit.perSecond/);
  });

  it('takes up a request re-sent at once on a refused connection only after a pause; health is not held', async () => {
    const held = heldRoutes();
    const handler = createRequestHandler(memoryCatalog(), { admission: { maxInFlight: 1, maxQueued: 0 } }, held.routes);
    const server = createServer(nodeListenerOf(handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const port = (server.address() as AddressInfo).port;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    closers.push(async () => agent.destroy());
    const get = (path: string, via?: Agent) =>
      new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, ...(via ? { agent: via } : { agent: false }) }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
        });
        req.on('error', reject);
        req.end();
      });
    const first = get('/slow'); // takes the only slot, on a connection of its own
    while (held.waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    expect(await get('/slow', agent)).toEqual({ status: 503, retryAfter: '1' });
    expect((await get('/health', agent)).status).toBe(200); // never held, never shed
    const startedAt = performance.now();
    const again = await get('/slow', agent); // sent at once on the same connection: held, then refused again
    expect(again).toEqual({ status: 503, retryAfter: '1' });
    // a lower bound only: the server waited (a slow machine only makes it longer)
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(400);

    held.releaseAll();
    expect((await first).status).toBe(200);
    const last = get('/slow', agent); // held too, then admitted: the slot is free now
    while (held.waiting.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    held.releaseAll();
    expect((await last).status).toBe(200);
  });

  it('weighs GraphQL searches with a total or facets more than a lookup', () => {
    expect(graphqlUnits({ query: '{ me { corpUser { urn } } }' })).toBe(1);
    expect(graphqlUnits({ query: 'query { searchAcrossEntities(input: {query: "*"}) { start } }' })).toBe(2);
    expect(graphqlUnits({ query: 'query { searchAcrossEntities(input: {query: "*"}) { total facets { field } } }' })).toBe(3);
    expect(graphqlUnits('not a body')).toBe(1);
  });
});

describe('the wait a queued request is admitted on', () => {
  const message = (f: () => unknown): string => {
    try {
      f();
    } catch (error) {
      return (error as Error).message;
    }
    return 'admitted';
  };

  it('before any request was timed, queues one round of work and refuses the rest at once', async () => {
    const gates = new Admission({ maxInFlight: 2, maxQueueMs: 500 }, () => undefined);
    const running = [gates.admit('graphql', 1), gates.admit('graphql', 1)];
    // Two units of work may wait (a round: what runs now is about to tell its time); the next is refused.
    const queued = [gates.admit('graphql', 1), gates.admit('graphql', 1)];
    expect(message(() => gates.admit('graphql', 1))).toMatch(/no request has been timed yet/);
    expect(message(() => gates.precheck('graphql'))).toMatch(/no request has been timed yet/);
    for (const release of await Promise.all(running)) release();
    for (const release of await Promise.all(queued)) release();
  });

  /**
   * A gate of `maxInFlight` units with a bound of 1 ms (every wait is refused, saying its estimate) that has
   * timed one request of `units` (about 100 ms, timed by the test around the span the gate times); then
   * `running` more of `units` run and one more asks: its estimate against the one expected from the slot.
   */
  async function estimateBehind(maxInFlight: number, units: number, running: number) {
    const gates = new Admission({ maxInFlight, maxQueueMs: 1 }, () => undefined);
    const t0 = performance.now();
    const timed = await gates.admit('graphql', units);
    await new Promise((resolve) => setTimeout(resolve, 100));
    timed();
    const slotMs = performance.now() - t0;
    const releases = [];
    for (let i = 0; i < running; i++) releases.push(await gates.admit('graphql', units));
    const estimate = Number(/about (\d+) ms/.exec(message(() => gates.admit('graphql', units)))?.[1]);
    for (const release of releases) release();
    return { estimate, slotMs };
  }

  it('counts a request of k units as holding k units for its whole time: the estimate is not divided by k', async () => {
    // Two of 2 units run (all 4 units); the next waits behind 2 units of work, which drain at 4 units per
    // slot: about half a slot. Divided by the units (the estimate before), it said a quarter.
    const { estimate, slotMs } = await estimateBehind(4, 2, 2);
    expect(estimate).toBeGreaterThanOrEqual(Math.floor(0.9 * (slotMs / 2)));
    expect(estimate).toBeLessThanOrEqual(Math.ceil(1.1 * (slotMs / 2)) + 1);
  });

  it('counts only the units requests of its size can use: 3-unit requests run two at a time in 8 units', async () => {
    // 6 units run, 2 stay free; 3 more ask: ahead = 6 + 3 - 8 = 1 unit, draining at 6 units a slot.
    const { estimate, slotMs } = await estimateBehind(8, 3, 2);
    expect(estimate).toBeGreaterThanOrEqual(Math.floor(0.9 * (slotMs / 6)));
    expect(estimate).toBeLessThanOrEqual(Math.ceil(1.1 * (slotMs / 6)) + 1);
  });
});

describe('rate limits', () => {
  it('answers 429 RATE_LIMITED with Retry-After and RateLimit headers, per token', async () => {
    const server = await startTestServer({ http: { rateLimit: { perSecond: 0.5, burst: 2 } } });
    closers.push(() => server.close());
    const me = (token: string) => fetch(`${server.url}/openapi/v2/me`, { headers: { authorization: `Bearer ${token}` } });
    const first = await me(server.adminToken);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect((await me(server.adminToken)).status).toBe(200);
    const refused = await me(server.adminToken);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { error: { code: string }; message: string };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.message).toMatch(/too many requests/);
    // Another token has a bucket of its own; health is never limited.
    const other = await server.tokenFor(ADMIN);
    expect((await me(other)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('limits requests without a token by address, failed authentications included', async () => {
    const server = await startTestServer({ http: { rateLimit: { perSecond: 0.5, burst: 2 } } });
    closers.push(() => server.close());
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${server.url}/openapi/v2/me`, { headers: { authorization: 'Bearer not-a-token' } });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 429]);
  });
});

/** Sends raw bytes on a connection; resolves with what the server answered and when the connection closed. */
function rawConnection(port: number) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => undefined);
  return { socket, closed };
}

describe('slow and oversized requests', () => {
  let server: TestServer;

  it('times out a client that trickles its headers, within the headers timeout', async () => {
    server = await startTestServer({ http: { headersTimeoutMs: 300, requestTimeoutMs: 300 } });
    closers.push(() => server.close());
    const { socket, closed } = rawConnection(server.server.port);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    let sent = 0;
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-${sent++}: y\r\n`);
    }, 50);
    const startedAt = Date.now();
    const answer = await closed;
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'TIMEOUT' } });
    // node's default check every 30 s would have let it trickle for 30 s; the check follows the timeout now.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });

  it('answers 431 with the top-level message of every error answer', async () => {
    server = await startTestServer();
    closers.push(() => server.close());
    const { socket, closed } = rawConnection(server.server.port);
    socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string }; message: string };
    expect(body.error.code).toBe('INVALID_INPUT');
    expect(body.message).toBe(body.error.message);
  });
});

describe('a stop under writers', () => {
  it('answers every request it accepted: no reset connection, every acknowledged write stored', async () => {
    const server = await startTestServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const acknowledged: string[] = [];
    const failures: string[] = [];
    let stopping = false;
    const writeOnce = (name: string) =>
      new Promise<void>((resolve) => {
        const urn = DATASET.replace('sales.orders', name);
        const req = httpRequest(
          `${server.url}/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`,
          { method: 'POST', agent, headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode === 200 || res.statusCode === 201) acknowledged.push(urn);
              else failures.push(`status ${res.statusCode}`);
              resolve();
            });
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          // Refused connections after the stop are fine: those requests were never accepted.
          if (error.code !== 'ECONNREFUSED') failures.push(error.code ?? error.message);
          else stopping = true;
          resolve();
        });
        req.end(JSON.stringify({ name }));
      });
    const writer = async (w: number) => {
      for (let i = 0; !stopping && i < 2_000; i++) await writeOnce(`w${w}.n${i}`);
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await new Promise((resolve) => setTimeout(resolve, 400));
    await server.server.close();
    stopping = true;
    await Promise.all(writers);
    agent.destroy();
    expect(failures).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(8);
    const stored = await server.catalog.entities.getMany(ADMIN, acknowledged, { aspects: ['datasetProperties'] });
    expect(stored.filter((e) => e !== null && e !== undefined)).toHaveLength(acknowledged.length);
    await server.catalog.close();
  });
});

describe('a stop while a departed client’s write runs', () => {
  it('waits for the write to finish before it resolves, so the catalog is not closed under it', async () => {
    const inner = createMemoryAdapter();
    let commitStarted!: () => void;
    const started = new Promise<void>((resolve) => (commitStarted = resolve));
    let commitFinishedAt = Number.NaN;
    // The write's commit takes 300 ms: the client leaves and the stop begins while it runs.
    const adapter = Object.assign(Object.create(inner) as typeof inner, {
      commit: async (batch: Parameters<typeof inner.commit>[0]) => {
        if (!JSON.stringify(batch).includes('departed')) return inner.commit(batch);
        commitStarted();
        await new Promise((resolve) => setTimeout(resolve, 300));
        const result = await inner.commit(batch);
        commitFinishedAt = performance.now();
        return result;
      },
    });
    const server = await startTestServer({ catalog: { adapter } });
    const urn = DATASET.replace('sales.orders', 'departed');
    const req = httpRequest(`${server.url}/openapi/v2/entity/dataset/${encodeURIComponent(urn)}/datasetProperties`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined); // the client hangs up on purpose
    req.end(JSON.stringify({ name: 'departed' }));
    await started;
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the server sees the connection close
    await server.server.close();
    const closedAt = performance.now();
    expect(commitFinishedAt).toBeLessThanOrEqual(closedAt);
    expect(server.errors).toEqual([]);
    expect(await server.catalog.entities.get(ADMIN, urn)).toBeDefined();
    await server.catalog.close();
  });
});
