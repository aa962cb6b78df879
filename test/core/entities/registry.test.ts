import { describe, expect, it } from 'vitest';
import { EntityRegistry } from '../../../src/core/entities/registry';
import { CatalogError } from '../../../src/errors';

describe('entity registry', () => {
  const registry = new EntityRegistry();

  it('knows the entity types of the contract with their GraphQL names and entity-type URNs', () => {
    const expected: Record<string, string> = {
      dataset: 'DATASET',
      dataFlow: 'DATA_FLOW',
      dataJob: 'DATA_JOB',
      chart: 'CHART',
      dashboard: 'DASHBOARD',
      container: 'CONTAINER',
      schemaField: 'SCHEMA_FIELD',
      glossaryTerm: 'GLOSSARY_TERM',
      corpuser: 'CORP_USER',
      corpGroup: 'CORP_GROUP',
      structuredProperty: 'STRUCTURED_PROPERTY',
    };
    for (const [name, graphql] of Object.entries(expected)) {
      expect(registry.graphqlTypeOf(name)).toBe(graphql);
      expect(registry.entityNameFromGraphqlType(graphql)).toBe(name);
      expect(registry.entityTypeUrn(name)).toBe(`urn:li:entityType:datahub.${name}`);
    }
    expect(registry.hasEntityType('accessToken')).toBe(true);
  });

  it('accepts short names and full entity-type URNs, and nothing else', () => {
    expect(registry.entityNameFromInput('dataFlow')).toBe('dataFlow');
    expect(registry.entityNameFromInput('urn:li:entityType:datahub.dataFlow')).toBe('dataFlow');
    expect(registry.entityNameFromInput('urn:li:entityType:dataset')).toBeUndefined();
    expect(registry.entityNameFromInput('table')).toBeUndefined();
  });

  it('marks timeseries aspects', () => {
    expect(registry.timeseriesAspectsOf('dataset').sort()).toEqual(['datasetProfile', 'datasetUsageStatistics', 'operation']);
    expect(registry.aspect('status').timeseries).toBeFalsy();
  });

  it('validates aspects against their schemas, listing every violation with its path', () => {
    expect(registry.validateAspect('datasetProperties', { name: 'orders', description: 'x', customProperties: { a: 'b' } })).toEqual([]);
    const violations = registry.validateAspect(
      'datasetProperties',
      { name: 42, customProperties: { a: 1 }, colour: 'red' },
      '/aspects/datasetProperties',
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        { path: '/aspects/datasetProperties/name', message: 'must be string' },
        { path: '/aspects/datasetProperties/customProperties/a', message: 'must be string' },
        { path: '/aspects/datasetProperties/colour', message: 'is not an allowed field' },
      ]),
    );
    expect(registry.validateAspect('status', {})).toEqual([{ path: '/removed', message: 'is required' }]);
  });

  it('refuses unknown entity types and aspects naming the known ones', () => {
    expect(() => registry.entityType('table')).toThrow(/known types: .*dataset/);
    expect(() => registry.requireAspectOf('dataset', 'dataFlowInfo')).toThrow(/its aspects: .*datasetProperties/);
    try {
      registry.aspect('nope');
    } catch (error) {
      expect((error as CatalogError).code).toBe('INVALID_INPUT');
    }
  });

  it('lets a host register its own aspects and entity types', () => {
    const own = new EntityRegistry();
    own.registerAspect({
      name: 'mlModelProperties',
      schema: { type: 'object', properties: { name: { type: 'string' }, accuracy: { type: 'number' } }, additionalProperties: false },
    });
    own.registerAspect({ name: 'mlModelMetrics', schema: { type: 'object', required: ['timestampMillis'] }, timeseries: true });
    own.registerEntityType({
      name: 'mlModel',
      graphqlType: 'MLMODEL',
      aspects: ['status', 'mlModelProperties', 'mlModelMetrics'],
      textAspect: 'mlModelProperties',
      searchFields: [{ name: 'name', aspect: 'mlModelProperties', path: ['name'] }],
    });
    expect(own.validateAspect('mlModelProperties', { name: 'churn', accuracy: 'high' })).toEqual([
      { path: '/accuracy', message: 'must be number' },
    ]);
    expect(own.timeseriesAspectsOf('mlModel')).toEqual(['mlModelMetrics']);
    expect(() => own.registerEntityType({ name: 'x', graphqlType: 'X', aspects: ['nope'] })).toThrow(CatalogError);
    expect(() => own.registerAspect({ name: 'status', schema: {} })).toThrow(/already registered/);
    expect(() => own.registerAspect({ name: 'bad name', schema: {} })).toThrow(CatalogError);
    expect(() => own.registerAspect({ name: 'badSchema', schema: { type: 'nonsense' } })).toThrow(/invalid JSON schema/);
  });
});
