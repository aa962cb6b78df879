import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { definitionInfoOf, type DefinitionInfo } from '../../../src/core/properties/lookup';
import {
  composeValues,
  firstValues,
  FirstValuesMetadata,
  storedValues,
  type AssignmentDraft,
} from '../../../src/core/properties/value-rules';
import { createCatalog } from '../../../src/index';

/**
 * The bulk path writes an entity's first values with `firstValues`, a direct form of what `composeValues`
 * makes when nothing is stored yet: the two must store the same aspect, value and system metadata alike.
 */

const ADMIN = 'urn:li:corpuser:admin';
const TIER = 'urn:li:structuredProperty:first.tier';
const SCORE = 'urn:li:structuredProperty:first.score';

async function definitions(): Promise<Map<string, DefinitionInfo>> {
  const adapter = createMemoryAdapter();
  const catalog = createCatalog({ adapter, superUsers: [ADMIN], jobs: { background: false } });
  try {
    await catalog.properties.create(ADMIN, { qualifiedName: 'first.tier', valueType: 'string', entityTypes: ['dataset'] });
    await catalog.properties.create(ADMIN, {
      qualifiedName: 'first.score',
      valueType: 'number',
      cardinality: 'MULTIPLE',
      entityTypes: ['dataset'],
    });
    const entities = await adapter.readEntities([TIER, SCORE]);
    return new Map(entities.map((e) => [e.urn, definitionInfoOf(e)!] as const));
  } finally {
    await catalog.close();
  }
}

describe('first values of an entity', () => {
  it('are stored as composeValues stores them when nothing is stored: value, stamps sent, keys and stamps beside', async () => {
    const defs = await definitions();
    expect([...defs.values()].every((d) => d !== undefined)).toBe(true);
    const stamp = { time: 1_700_000_000_000, actor: ADMIN };
    const drafts: AssignmentDraft[] = [
      { propertyUrn: TIER, values: ['gold'], path: '/properties/0', urnPath: '/properties/0/propertyUrn' },
      {
        propertyUrn: SCORE,
        values: [3, 1.5],
        path: '/properties/1',
        urnPath: '/properties/1/propertyUrn',
        sent: { created: { time: 5, actor: 'urn:li:corpuser:writer' } },
      },
    ];
    const direct = firstValues(drafts, new FirstValuesMetadata(stamp, defs));
    const composed = composeValues(undefined, storedValues(undefined, defs), drafts, defs, stamp).change;
    const composedShared = composeValues(undefined, storedValues(undefined, defs), drafts, defs, stamp, { visible: false }).change;
    expect(direct).toBeDefined();
    expect(direct).toEqual(composed);
    expect(direct).toEqual(composedShared);
    expect(firstValues([], new FirstValuesMetadata(stamp, defs))).toBeUndefined();
  });
});
