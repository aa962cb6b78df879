import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../../src/index';
import { call, startTestServer, type TestServer } from './helpers';

/**
 * DataHub's smoke test of structured properties over OpenAPI v3
 * (datahub-project/datahub smoke-test/tests/openapi/v3/structured_properties.json): its steps copied
 * (URLs, query parameters, bodies, expected answers), run as its runner runs them (test_openapi.py: the
 * method defaults to POST, every status must be 200, 202 or 204, the answer must equal the expected
 * JSON, ignoring order). Two differences are excluded, as the runner's `exclude_regex_paths` would: the
 * catalog stamps definitions and value assignments with `created` / `lastModified`, and writes the
 * default `immutable: false` into a definition that leaves it out.
 */

interface Step {
  url: string;
  description: string;
  method?: 'get' | 'post' | 'patch' | 'delete';
  params?: Record<string, string>;
  json?: unknown;
  response?: unknown;
}

const definition = (name: string, extra: Record<string, unknown>) => ({ value: { qualifiedName: name, ...extra } });
const retentionDefinition = {
  valueType: 'urn:li:dataType:datahub.number',
  description: 'Retention Time is used to figure out how long to retain records in a dataset',
  displayName: 'Retention Time',
  cardinality: 'MULTIPLE',
  entityTypes: ['urn:li:entityType:datahub.dataset', 'urn:li:entityType:datahub.dataFlow'],
  allowedValues: [
    { value: { double: 30 }, description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
    { value: { double: 60 }, description: 'Use this for datasets that drive monthly reporting but contain pii' },
    { value: { double: 365 }, description: 'Use this for non-sensitive data that can be retained for longer' },
  ],
};
const retention02Definition = {
  displayName: 'Retention Time 02',
  valueType: 'urn:li:dataType:datahub.string',
  allowedValues: [
    { value: { string: 'foo2' }, description: 'test foo2 value' },
    { value: { string: 'bar2' }, description: 'test bar2 value' },
  ],
  cardinality: 'SINGLE',
  entityTypes: ['urn:li:entityType:datahub.dataset'],
};
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:test,datasetStructPropV3,PROD)';
const DATASET_PATH = '/openapi/v3/entity/dataset/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3Atest%2CdatasetStructPropV3%2CPROD%29';
const P1 = 'urn:li:structuredProperty:io.acryl.privacy.v3.retentionTime';
const P2 = 'urn:li:structuredProperty:io.acryl.privacy.v3.retentionTime02';
const keyed = { properties: ['propertyUrn'] };

const STEPS: Step[] = [
  { url: DATASET_PATH, description: 'Remove test dataset', method: 'delete' },
  {
    url: '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.v3.retentionTime',
    description: 'Remove test structured property',
    method: 'delete',
  },
  {
    url: '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.v3.retentionTime02',
    description: 'Remove test structured property #2',
    method: 'delete',
  },
  {
    url: '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.v3.retentionTime/propertyDefinition',
    description: 'Create structured property definition',
    params: { createIfNotExists: 'false' },
    json: definition('io.acryl.privacy.v3.retentionTime', retentionDefinition),
    response: { urn: P1, propertyDefinition: definition('io.acryl.privacy.v3.retentionTime', retentionDefinition) },
  },
  {
    url: '/openapi/v3/entity/dataset?createIfNotExists=false&createEntityIfNotExists=false',
    description: 'Create dataset',
    json: [{ urn: DATASET, status: { value: { removed: false } } }],
    response: [{ urn: DATASET, status: { value: { removed: false } } }],
  },
  {
    url: `${DATASET_PATH}/structuredProperties?createIfNotExists=false`,
    description: 'Add structured property to dataset',
    json: { value: { properties: [{ propertyUrn: P1, values: [{ double: 60.0 }] }] } },
    response: { urn: DATASET, structuredProperties: { value: { properties: [{ values: [{ double: 60.0 }], propertyUrn: P1 }] } } },
  },
  {
    url: '/openapi/v3/entity/structuredProperty/urn%3Ali%3AstructuredProperty%3Aio.acryl.privacy.v3.retentionTime02/propertyDefinition?createIfNotExists=false',
    description: 'Create structured property definition #2',
    params: { createIfNotExists: 'false' },
    json: definition('io.acryl.privacy.v3.retentionTime02', retention02Definition),
    response: { urn: P2, propertyDefinition: definition('io.acryl.privacy.v3.retentionTime02', retention02Definition) },
  },
  {
    url: `${DATASET_PATH}/structuredProperties`,
    description: 'Patch ADD structured property',
    method: 'patch',
    json: {
      patch: [{ op: 'add', path: `/properties/${P2}`, value: { propertyUrn: P2, values: [{ string: 'bar2' }] } }],
      arrayPrimaryKeys: keyed,
    },
    response: {
      urn: DATASET,
      structuredProperties: {
        value: {
          properties: [
            { values: [{ double: 60.0 }], propertyUrn: P1 },
            { values: [{ string: 'bar2' }], propertyUrn: P2 },
          ],
        },
      },
    },
  },
  {
    url: `${DATASET_PATH}/structuredProperties`,
    description: 'Patch REMOVE structured property',
    method: 'patch',
    json: { patch: [{ op: 'remove', path: `/properties/${P2}`, value: { propertyUrn: P2 } }], arrayPrimaryKeys: keyed },
    response: { urn: DATASET, structuredProperties: { value: { properties: [{ values: [{ double: 60.0 }], propertyUrn: P1 }] } } },
  },
];

/** The answer without what the catalog adds: audit stamps, and a definition's default `immutable: false`. */
function withoutStamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutStamps);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => key !== 'created' && key !== 'lastModified' && !(key === 'immutable' && v === false))
      .map(([key, v]) => [key, withoutStamps(v)]),
  );
}

/** Equal ignoring the order of list elements (the runner's DeepDiff with ignore_order). */
function sameIgnoringOrder(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    const left = [...b];
    return a.every((x) => {
      const i = left.findIndex((y) => sameIgnoringOrder(x, y));
      return i >= 0 && left.splice(i, 1).length === 1;
    });
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return (
      isDeepStrictEqual(ka, kb) && ka.every((k) => sameIgnoringOrder((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return isDeepStrictEqual(a, b);
}

/** Registers the suite over a catalog on the adapter `adapter` makes (the test server's SQLite file when left out). */
export function smokeSuite(kind: string, adapter?: () => StorageAdapter): void {
  describe(`smoke-test/tests/openapi/v3/structured_properties.json (${kind})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer(adapter ? { catalog: { adapter: adapter() } } : {});
    });
    afterAll(() => t.close());

    it('runs every step with a 2xx status and the expected answer, twice in a row (the first steps clean up)', async () => {
      for (let round = 0; round < 2; round++) {
        for (const step of STEPS) {
          const query = step.params ? new URLSearchParams(step.params).toString() : '';
          const url = query ? `${step.url}${step.url.includes('?') ? '&' : '?'}${query}` : step.url;
          const method = (step.method ?? 'post').toUpperCase();
          const r = await call(t.url, method, url, { token: t.adminToken, ...(step.json !== undefined ? { body: step.json } : {}) });
          expect([200, 202, 204], `${step.description}: ${r.text}`).toContain(r.status);
          if (step.response !== undefined)
            expect(sameIgnoringOrder(withoutStamps(r.json), step.response), `${step.description}: ${r.text}`).toBe(true);
        }
        await t.catalog.settle();
      }
    });
  });
}
