import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../adapters/memory/index';
import { allRoutes } from '../../src/http/routes/index';
import { createCatalog } from '../../src/index';
import { call, startTestServer, type TestServer } from './helpers';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const doc = JSON.parse(readFileSync(join(root, 'src/http/openapi.json'), 'utf8')) as {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        parameters?: Array<{ name: string; in: string }>;
        responses: Record<string, unknown>;
        requestBody?: unknown;
        operationId?: string;
      }
    >
  >;
};
const routes = allRoutes(createCatalog({ adapter: createMemoryAdapter() }), {});

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('the OpenAPI document (src/http/openapi.json)', () => {
  it('has its copy in docs/openapi.json (the build writes it)', () => {
    expect(readFileSync(join(root, 'docs/openapi.json'), 'utf8')).toBe(readFileSync(join(root, 'src/http/openapi.json'), 'utf8'));
  });

  it('is served as is at /openapi/v2/api-docs and /gms/openapi/v2/api-docs', async () => {
    for (const path of ['/openapi/v2/api-docs', '/gms/openapi/v2/api-docs']) {
      const r = await call(t.url, 'GET', path);
      expect(r.status).toBe(200);
      expect(r.json).toEqual(doc);
    }
    expect(doc.openapi).toMatch(/^3\.0\./);
  });

  it('documents exactly the routes the handler serves, with the same methods', () => {
    const served = routes.flatMap((r) => Object.keys(r.methods).map((m) => `${m} ${r.pattern}`)).sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(served);
  });

  it('marks exactly the public routes as needing no credentials, and documents 401 on every other', () => {
    for (const route of routes) {
      for (const [method, spec] of Object.entries(route.methods)) {
        const op = doc.paths[route.pattern]![method.toLowerCase()]!;
        expect(op.security, `${method} ${route.pattern}`).toEqual(spec.public ? [] : undefined);
        if (!spec.public) expect(Object.keys(op.responses), `${method} ${route.pattern}`).toContain('401');
        if (spec.body === 'json' || spec.body === 'json-patch') {
          expect(op.requestBody, `${method} ${route.pattern}`).toBeDefined();
          expect(Object.keys(op.responses), `${method} ${route.pattern}`).toEqual(expect.arrayContaining(['413', '415']));
        }
      }
    }
  });

  it('declares every path parameter of each template, and every operation has a unique id', () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      const inTemplate = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(ops)) {
        const declared = (op.parameters ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => p.name)
          .sort();
        expect(declared, `${method} ${path}`).toEqual(inTemplate);
        expect(op.operationId).toBeTruthy();
        expect(ids.has(op.operationId!)).toBe(false);
        ids.add(op.operationId!);
      }
    }
  });

  it('has no dangling $ref', () => {
    const text = JSON.stringify(doc);
    for (const [, ref] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
      let node: unknown = doc;
      for (const key of ref!.split('/')) node = (node as Record<string, unknown>)[key];
      expect(node, ref).toBeDefined();
    }
  });
});
