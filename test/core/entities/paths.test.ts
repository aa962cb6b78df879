import { describe, expect, it } from 'vitest';
import { EntityRegistry } from '../../../src/core/entities/registry';
import { resolveEntityAddress } from '../../../src/core/entities/paths';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.orders,PROD)';

function violationsOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (error) {
    const e = error as { code: string; details: Array<{ path: string; message: string }> };
    expect(e.code).toBe('INVALID_INPUT');
    return e.details;
  }
  throw new Error('did not throw');
}

describe('resolveEntityAddress', () => {
  const registry = new EntityRegistry();

  it('resolves entity names ignoring case, and entity-type URNs', () => {
    for (const name of ['structuredProperty', 'structuredproperty', 'STRUCTUREDPROPERTY', 'urn:li:entityType:datahub.structuredProperty']) {
      expect(resolveEntityAddress(registry, { entityName: name }).entityType).toBe('structuredProperty');
    }
    expect(resolveEntityAddress(registry, { entityName: 'dataFlow' }).entityType).toBe('dataFlow');
  });

  it('tells versioned from timeseries aspects', () => {
    expect(resolveEntityAddress(registry, { entityName: 'dataset', urn: DATASET, aspect: 'datasetProperties' })).toEqual({
      entityType: 'dataset',
      urn: DATASET,
      aspect: 'datasetProperties',
      aspectKind: 'versioned',
    });
    expect(resolveEntityAddress(registry, { entityName: 'dataset', urn: DATASET, aspect: 'datasetProfile' }).aspectKind).toBe('timeseries');
    expect(
      resolveEntityAddress(registry, {
        entityName: 'structuredProperty',
        urn: 'urn:li:structuredProperty:a.b',
        aspect: 'propertyDefinition',
      }).aspectKind,
    ).toBe('versioned');
  });

  it('lists every violation: unknown type, bad URN, URN of another type, unknown aspect, aspect of another type', () => {
    expect(
      violationsOf(() => resolveEntityAddress(registry, { entityName: 'datasets', urn: 'urn:li', aspect: 'nope' })).map((v) => v.path),
    ).toEqual(['entityName', 'urn', 'aspectName']);
    const mismatch = violationsOf(() => resolveEntityAddress(registry, { entityName: 'chart', urn: DATASET, aspect: 'datasetProperties' }));
    expect(mismatch).toEqual([
      { path: 'urn', message: expect.stringContaining('is a dataset URN, but the address names entity type "chart"') },
      { path: 'aspectName', message: expect.stringContaining('entity type "chart" has no aspect "datasetProperties"') },
    ]);
    expect(violationsOf(() => resolveEntityAddress(registry, { entityName: 'nope' }))[0]!.message).toContain('known types: dataset');
  });

  it('knows the entity types and aspects a host registers', () => {
    const host = new EntityRegistry();
    host.registerAspect({ name: 'mlModelInfo', schema: { type: 'object' } });
    host.registerEntityType({ name: 'mlModel', graphqlType: 'MLMODEL', aspects: ['status', 'mlModelInfo'] });
    expect(resolveEntityAddress(host, { entityName: 'mlmodel', urn: 'urn:li:mlModel:churn', aspect: 'mlModelInfo' }).aspectKind).toBe(
      'versioned',
    );
  });
});
