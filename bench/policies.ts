import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSqliteAdapter } from '../adapters/sqlite';
import { createCatalog, type Catalog, type CatalogOptions } from '../src';
import { printTable, type Figure } from './harness';

const ADMIN = 'urn:li:corpuser:admin';
const STEWARD = 'urn:li:corpuser:steward';
const DOMAIN = 'urn:li:structuredProperty:finance.domain';
const COST = 'urn:li:structuredProperty:finance.costCenter';
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,finance.table_${i},PROD)`;

function open(dir: string, name: string, extra: Partial<CatalogOptions>): Catalog {
  return createCatalog({
    adapter: createSqliteAdapter({ filename: join(dir, `${name}.db`) }),
    superUsers: [ADMIN],
    jobs: { background: false },
    ...extra,
  });
}

async function seed(catalog: Catalog, entities: number): Promise<void> {
  for (const qualifiedName of ['finance.domain', 'finance.costCenter'])
    await catalog.properties.create(ADMIN, { qualifiedName, valueType: 'string', entityTypes: ['dataset'] });
  const items = [];
  for (let i = 0; i < entities; i++)
    items.push({
      urn: urnOf(i),
      aspects: {
        datasetProperties: { name: `t${i}` },
        structuredProperties: { properties: [{ propertyUrn: DOMAIN, values: [{ string: 'finance' }] }] },
      },
    });
  await catalog.entities.upsertMany(ADMIN, items);
}

/** 99 metadata policies for other stewards (criteria on URN, type and stored values) and the steward's own, last. */
async function storeHundredPolicies(catalog: Catalog): Promise<void> {
  for (let i = 0; i < 99; i++) {
    await catalog.policies.create(ADMIN, {
      name: `team ${i}`,
      type: 'METADATA',
      privileges: ['EDIT_ENTITY_PROPERTIES'],
      actors: { users: [`urn:li:corpuser:steward${i}`] },
      resources: {
        type: 'dataset',
        filter: {
          criteria: [
            { field: 'URN', condition: 'STARTS_WITH', values: [`urn:li:dataset:(urn:li:dataPlatform:hive,team${i}.`] },
            { field: 'structuredProperties.finance.domain', condition: 'EQUALS', values: [`team${i}`] },
          ],
        },
        properties: [`team${i}.*`],
      },
    });
  }
  await catalog.policies.create(ADMIN, {
    name: 'finance stewards',
    type: 'METADATA',
    privileges: ['EDIT_ENTITY_PROPERTIES'],
    actors: { users: [STEWARD] },
    resources: {
      type: 'dataset',
      filter: { criteria: [{ field: 'structuredProperties.finance.domain', condition: 'EQUALS', values: ['finance'] }] },
      properties: ['finance.*'],
    },
  });
}

/** Value writes per second by the steward: each entity's cost centre set once. */
async function writes(catalog: Catalog, entities: number, round: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < entities; i++) {
    await catalog.properties.upsertValues(STEWARD, urnOf(i), {
      properties: [
        { propertyUrn: DOMAIN, values: [{ string: 'finance' }] },
        { propertyUrn: COST, values: [{ string: `cc-${round}` }] },
      ],
    });
  }
  return entities / ((performance.now() - start) / 1000);
}

/**
 * A structured property value write by a steward with 100 metadata policies stored (the steward's own
 * grants EDIT_ENTITY_PROPERTIES for finance.* on datasets whose finance.domain is finance: every write is
 * checked per item, on the stored value) against the same write with no stored policy (the steward holds
 * the privilege everywhere through the static option). Goal: ≥ 0.9×.
 */
export async function runPoliciesBench(options: { entities?: number } = {}): Promise<Figure[]> {
  const entities = options.entities ?? 500;
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-bench-policies-'));
  try {
    const none = open(dir, 'none', { policies: [{ actors: [STEWARD], privileges: ['EDIT_ENTITY_PROPERTIES'] }] });
    const hundred = open(dir, 'hundred', {});
    await seed(none, entities);
    await seed(hundred, entities);
    await storeHundredPolicies(hundred);
    // Warm-up, then alternate the two so that machine noise hits both alike; best of 5 each.
    await writes(none, 50, -1);
    await writes(hundred, 50, -1);
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < 5; round++) {
      a.push(await writes(none, entities, round));
      b.push(await writes(hundred, entities, round));
    }
    const base = Math.max(...a);
    const value = Math.max(...b);
    const figures: Figure[] = [
      {
        workload: `value writes with 100 metadata policies stored (${entities} writes, best of 5)`,
        unit: 'writes/s',
        value,
        baseline: base,
        baselineName: 'no stored policy',
        better: 'higher',
        goal: '≥ 0.9×',
        met: value / base >= 0.9,
      },
    ];
    await none.close();
    await hundred.close();
    printTable('metadata policies (SQLite)', figures);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runPoliciesBench();
}
