// Checked by `tsc --noEmit` (part of `npm run lint`, which CI runs), never run: each `@ts-expect-error` line must fail to
// compile, or the type check fails. The typos a user makes are caught before anything runs.
import type { Catalog } from '../../src/index';

declare const catalog: Catalog;
const actor = 'urn:li:corpuser:ana';
const urn = 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)';

export async function typos(): Promise<void> {
  // A misspelt value type.
  // @ts-expect-error 'strng' is no value type
  await catalog.properties.create(actor, { qualifiedName: 'p', valueType: 'strng', entityTypes: ['dataset'] });
  // An entity type in the plural.
  // @ts-expect-error 'datasets' is no entity type
  await catalog.properties.create(actor, { qualifiedName: 'p', valueType: 'string', entityTypes: ['datasets'] });
  // A GraphQL entity type in the plural.
  // @ts-expect-error 'DATASETS' is no entity type
  await catalog.search.scroll(actor, { types: ['DATASETS'] });
  // A misspelt aspect name.
  // @ts-expect-error 'datasetProperty' is no aspect
  await catalog.entities.upsertAspect(actor, urn, 'datasetProperty', { name: 'x' });
  // A field of the wrong type.
  // @ts-expect-error name is a string
  await catalog.entities.upsertAspects(actor, urn, { datasetProperties: { name: 42 } });
  // @ts-expect-error the same in a bulk write
  await catalog.entities.upsertMany(actor, [{ urn, aspects: { datasetProperties: { name: 42 } } }]);

  // What is right compiles: short names, URNs, GraphQL and entity names.
  await catalog.properties.create(actor, {
    qualifiedName: 'p',
    valueType: 'urn:li:dataType:datahub.number',
    entityTypes: ['urn:li:entityType:datahub.dataset', 'dataFlow'],
  });
  await catalog.search.scroll(actor, { types: ['DATASET', 'dataFlow'] });
  await catalog.entities.upsertAspects(actor, urn, {
    datasetProperties: { name: 'orders', customProperties: { team: 'sales' } },
    status: { removed: false },
  });
}

// A host's own aspect and entity type, added by declaration merging, get the same checks.
declare module '../../src/core/entities/aspect-types' {
  interface AspectMap {
    ownership: { owners: string[] };
  }
  interface EntityTypeMap {
    notebook: true;
  }
}

export async function hostAspects(): Promise<void> {
  await catalog.entities.upsertAspect(actor, 'urn:li:notebook:n1', 'ownership', { owners: ['urn:li:corpuser:ana'] });
  await catalog.properties.create(actor, { qualifiedName: 'p', valueType: 'string', entityTypes: ['notebook'] });
  // @ts-expect-error owners is a list of strings
  await catalog.entities.upsertAspect(actor, 'urn:li:notebook:n1', 'ownership', { owners: 'ana' });
}
