import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { createCatalog } from '../../src/index';
import { createFetchHandler } from '../../src/http/index';
import { ADMIN, call, DATASET, EDITOR, enc, startTestServer, type TestServer } from './helpers';

const ASPECT = `/openapi/v2/entity/dataset/${enc(DATASET)}/datasetProperties`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** Reads server-sent events from a streamed response until `count` events arrived. */
async function readEvents(
  response: Response,
  count: number,
): Promise<Array<{ id: string; data: { id: string; aspect: { name: string } } }>> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const events: Array<{ id: string; data: { id: string; aspect: { name: string } } }> = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id && data) events.push({ id, data: JSON.parse(data) });
    }
  }
  await reader.cancel();
  return events;
}

describe('GET /openapi/v2/changes', () => {
  it('answers { events, next } as JSON, pages with after, and needs VIEW_CHANGE_FEED', async () => {
    const token = t.adminToken;
    for (const name of ['a', 'b', 'c']) expect((await call(t.url, 'POST', ASPECT, { token, body: { name } })).status).toBe(200);
    const first = await call(t.url, 'GET', '/openapi/v2/changes?limit=2&aspects=datasetProperties', { token });
    expect(first.status).toBe(200);
    expect(first.json.events.map((e: { aspect: { name: string } }) => e.aspect.name)).toEqual(['a', 'b']);
    const rest = await call(t.url, 'GET', `/gms/openapi/v2/changes?after=${first.json.next}&aspects=datasetProperties`, { token });
    expect(rest.json.events.map((e: { aspect: { name: string } }) => e.aspect.name)).toEqual(['c']);
    expect(rest.json.events[0].previousAspectValue).toEqual({ name: 'b' });
    const bad = await call(t.url, 'GET', '/openapi/v2/changes?after=nope', { token });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_INPUT');
    const editor = await call(t.url, 'GET', '/openapi/v2/changes', { token: await t.tokenFor(EDITOR) });
    expect(editor.status).toBe(403);
  });

  it('reads one kept version with ?version=N (DataHub: 0 the latest, 1 the first value written)', async () => {
    const token = t.adminToken;
    const latest = await call(t.url, 'GET', `${ASPECT}?version=0`, { token });
    const first = await call(t.url, 'GET', `${ASPECT}?version=1`, { token });
    const second = await call(t.url, 'GET', `${ASPECT}?version=2`, { token });
    expect(latest.json.value).toEqual({ name: 'c' });
    expect(first.json.value).toEqual({ name: 'a' });
    expect(second.json.value).toEqual({ name: 'b' });
    expect(latest.json.version).toBe(3);
    expect((await call(t.url, 'GET', `${ASPECT}?version=99`, { token })).status).toBe(404);
  });

  it('streams server-sent events with ids, resumable with Last-Event-ID, and lets go when the client leaves', async () => {
    const token = t.adminToken;
    const all = (await call(t.url, 'GET', '/openapi/v2/changes?aspects=datasetProperties', { token })).json.events as Array<{ id: string }>;
    const controller = new AbortController();
    const response = await fetch(`${t.url}/openapi/v2/changes?aspects=datasetProperties`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'last-event-id': all[1]!.id },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reading = readEvents(response, 2);
    await call(t.url, 'POST', ASPECT, { token, body: { name: 'd' } });
    const events = await reading;
    expect(events.map((e) => e.data.aspect.name)).toEqual(['c', 'd']);
    expect(events.map((e) => e.id)).toEqual(events.map((e) => e.data.id));
    controller.abort();
    // The server notices the disconnect and logs the stream as finished.
    for (
      let i = 0;
      i < 100 && !t.accessLog.some((e) => e.path.startsWith('/openapi/v2/changes') && e.status === 200 && e.responseBytes > 0);
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(t.accessLog.some((e) => e.path.startsWith('/openapi/v2/changes') && e.responseBytes > 0)).toBe(true);
  });

  it('streams through the fetch handler too', async () => {
    const catalog = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], jobs: { background: false } });
    try {
      const handler = createFetchHandler(catalog, { trustActorHeader: true });
      await catalog.entities.upsertAspect(ADMIN, DATASET, 'datasetProperties', { name: 'x' });
      const response = await handler(
        new Request('http://localhost/openapi/v2/changes', { headers: { 'x-service-actor': ADMIN, accept: 'text/event-stream' } }),
      );
      const events = await readEvents(response, 1);
      expect(events[0]!.data.aspect.name).toBe('x');
    } finally {
      await catalog.close();
    }
  });
});
