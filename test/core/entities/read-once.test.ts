import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog, type StorageAdapter } from '../../../src/index';

/**
 * The write path reads each entity once and each definition once per unit of work: a bulk write of
 * entities with structured properties makes one adapter read of the batch's entities per chunk (the
 * unit of work's own read, which every owner plans on) and one read of the definitions the items name.
 */

const ADMIN = 'urn:li:corpuser:admin';
const NAMES = ['tier', 'owner', 'score'] as const;
const property = (name: string) => `urn:li:structuredProperty:io.example.${name}`;
const dataset = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,db.table_${i},PROD)`;

interface Read {
  urns: readonly string[];
  aspects: readonly string[] | undefined;
}

async function open() {
  const inner = createMemoryAdapter();
  const reads: Read[] = [];
  const adapter: StorageAdapter = {
    ...inner,
    async readEntities(urns, aspectNames) {
      reads.push({ urns: [...urns], aspects: aspectNames ? [...aspectNames] : undefined });
      return inner.readEntities(urns, aspectNames);
    },
  };
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  await catalog.ready();
  for (const name of NAMES)
    await catalog.properties.create(ADMIN, {
      qualifiedName: `io.example.${name}`,
      valueType: name === 'score' ? 'number' : 'string',
      entityTypes: ['dataset'],
    });
  return { catalog, reads };
}

function items(count: number, tier: string) {
  return Array.from({ length: count }, (_, i) => ({
    urn: dataset(i),
    aspects: {
      datasetProperties: { name: `table_${i}`, description: `table number ${i}` },
      structuredProperties: {
        properties: [
          { propertyUrn: property('tier'), values: [{ string: tier }] },
          { propertyUrn: property('owner'), values: [{ string: `team-${i % 7}` }] },
          { propertyUrn: property('score'), values: [{ double: i }] },
        ],
      },
    },
  }));
}

/** The reads of a write, split into reads of the datasets written and reads of property definitions. */
function split(reads: readonly Read[]) {
  const entities = reads.filter((r) => r.urns.some((u) => u.startsWith('urn:li:dataset:')));
  const definitions = reads.filter((r) => r.urns.some((u) => u.startsWith('urn:li:structuredProperty:')));
  return { entities, definitions, other: reads.length - entities.length - definitions.length };
}

describe('the write path reads once', () => {
  it('reads the entities of a bulk write once (the unit of work) and the definitions once, new or existing', async () => {
    const { catalog, reads } = await open();
    try {
      for (const tier of ['gold', 'silver']) {
        reads.length = 0;
        const views = await catalog.entities.upsertMany(ADMIN, items(500, tier));
        expect(views).toHaveLength(500);
        const { entities, definitions, other } = split(reads);
        expect(entities).toHaveLength(1);
        expect(entities[0]!.urns).toHaveLength(500);
        expect(entities[0]!.aspects).toBeUndefined();
        expect(definitions).toHaveLength(1);
        expect([...definitions[0]!.urns].sort()).toEqual(NAMES.map(property).sort());
        expect(other).toBe(0);
      }
      const view = await catalog.entities.get(ADMIN, dataset(3));
      expect(view?.aspects.structuredProperties?.value).toMatchObject({
        properties: [
          { propertyUrn: property('tier'), values: [{ string: 'silver' }] },
          { propertyUrn: property('owner'), values: [{ string: 'team-3' }] },
          { propertyUrn: property('score'), values: [{ double: 3 }] },
        ],
      });
    } finally {
      await catalog.close();
    }
  });

  it('reads once per chunk, plus the stored values once before the first chunk (immutable values hold for the whole batch)', async () => {
    const { catalog, reads } = await open();
    try {
      reads.length = 0;
      await catalog.entities.upsertMany(ADMIN, items(2_500, 'gold'));
      const { entities, definitions, other } = split(reads);
      // Chunks of 2,000 whole entities: two units of work, each reading its own entities once.
      const units = entities.filter((r) => r.aspects === undefined);
      expect(units.map((r) => r.urns.length)).toEqual([2_000, 500]);
      // A batch of several commits checks immutable values before the first: one read of the stored values.
      const before = entities.filter((r) => r.aspects !== undefined);
      expect(before).toHaveLength(1);
      expect(before[0]!.aspects).toEqual(['structuredProperties']);
      expect(before[0]!.urns).toHaveLength(2_500);
      expect(definitions).toHaveLength(1);
      expect(other).toBe(0);
    } finally {
      await catalog.close();
    }
  });
});
