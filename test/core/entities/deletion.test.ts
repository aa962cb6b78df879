import { afterEach, describe, expect, it } from 'vitest';
import {
  ADMIN,
  codeOf,
  DATASET,
  DATASET_2,
  EDITOR,
  errorOf,
  openCatalog,
  READER,
  RETENTION_YAML,
  type TestCatalog,
} from '../properties/helpers';
import { parseYamlDefinitions } from '../../../src/index';
import { upsertYamlDefinitions } from '../../../src/http/property-yaml';

const RETENTION = 'urn:li:structuredProperty:io.acryl.privacy.retentionTime';

let t: TestCatalog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function withValues(): Promise<TestCatalog> {
  t = openCatalog();
  const { catalog } = t;
  await upsertYamlDefinitions(catalog, ADMIN, parseYamlDefinitions(RETENTION_YAML));
  for (const urn of [DATASET, DATASET_2]) {
    await catalog.properties.upsertValues(EDITOR, urn, { properties: [{ propertyUrn: RETENTION, values: [{ double: 30 }] }] });
  }
  return t;
}

describe('entities.deleteEntity: structured properties', () => {
  it('hard-deletes by default (as the platform does); hard: false soft-deletes, counts the entities whose values it hides, and is idempotent', async () => {
    const { catalog } = await withValues();
    expect(await catalog.entities.deleteEntity(ADMIN, RETENTION, { dryRun: true })).toMatchObject({ mode: 'hard', dryRun: true });
    const dry = await catalog.entities.deleteEntity(ADMIN, RETENTION, { hard: false, dryRun: true });
    expect(dry).toEqual({
      urn: RETENTION,
      entityType: 'structuredProperty',
      mode: 'soft',
      dryRun: true,
      changed: true,
      entitiesWithValues: 2,
    });
    expect((await catalog.properties.get(ADMIN, RETENTION))?.removed).toBe(false);

    const done = await catalog.entities.deleteEntity(ADMIN, RETENTION, { hard: false });
    expect(done).toEqual({
      urn: RETENTION,
      entityType: 'structuredProperty',
      mode: 'soft',
      dryRun: false,
      changed: true,
      entitiesWithValues: 2,
    });
    expect((await catalog.properties.get(ADMIN, RETENTION))?.removed).toBe(true);
    expect(await catalog.properties.getValues(ADMIN, DATASET)).toEqual([]);

    const again = await catalog.entities.deleteEntity(ADMIN, RETENTION, { hard: false });
    expect(again.changed).toBe(false);
  });

  it('hard: a dry run counts what the clean-up would remove and writes nothing; the real run removes the definition', async () => {
    const { catalog } = await withValues();
    const dry = await catalog.entities.deleteEntity(ADMIN, RETENTION, { hard: true, dryRun: true });
    expect(dry).toMatchObject({ mode: 'hard', dryRun: true, changed: true, entitiesWithValues: 2 });
    expect(await catalog.properties.get(ADMIN, RETENTION)).toBeDefined();
    expect(await catalog.listJobs()).toEqual([]);

    const done = await catalog.entities.deleteEntity(ADMIN, RETENTION, { hard: true });
    expect(done).toMatchObject({ mode: 'hard', dryRun: false, changed: true, entitiesWithValues: 2 });
    expect(await catalog.properties.get(ADMIN, RETENTION)).toBeUndefined();
    await catalog.settle();
    expect((await catalog.entities.get(ADMIN, DATASET))?.aspects.structuredProperties?.value).toMatchObject({ properties: [] });
  });

  it('refuses a missing property (also on a dry run) and a caller without MANAGE_STRUCTURED_PROPERTIES', async () => {
    const { catalog } = await withValues();
    expect(await codeOf(catalog.entities.deleteEntity(ADMIN, 'urn:li:structuredProperty:nope', { dryRun: true }))).toBe('NOT_FOUND');
    expect(await codeOf(catalog.entities.deleteEntity(ADMIN, 'urn:li:structuredProperty:nope', { hard: true }))).toBe('NOT_FOUND');
    const refused = await errorOf(catalog.entities.deleteEntity(READER, RETENTION, { hard: true, dryRun: true }));
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain('MANAGE_STRUCTURED_PROPERTIES');
  });
});

describe('entities.deleteEntity: other entities', () => {
  it('soft writes status.removed (reversible), hard removes; left out, hard is the default', async () => {
    t = openCatalog();
    const { catalog } = t;
    await catalog.entities.upsertAspect(ADMIN, DATASET, 'status', { removed: false });
    await catalog.entities.upsertAspect(ADMIN, DATASET_2, 'status', { removed: false });

    expect(await catalog.entities.deleteEntity(EDITOR, DATASET, { hard: false, dryRun: true })).toEqual({
      urn: DATASET,
      entityType: 'dataset',
      mode: 'soft',
      dryRun: true,
      changed: true,
    });
    expect((await catalog.entities.get(ADMIN, DATASET))?.aspects.status?.value).toEqual({ removed: false });
    expect((await catalog.entities.deleteEntity(EDITOR, DATASET, { hard: false })).changed).toBe(true);
    expect((await catalog.entities.get(ADMIN, DATASET))?.aspects.status?.value).toEqual({ removed: true });
    expect((await catalog.entities.deleteEntity(EDITOR, DATASET, { hard: false })).changed).toBe(false);

    expect(await catalog.entities.deleteEntity(EDITOR, DATASET_2, { dryRun: true })).toMatchObject({ mode: 'hard', dryRun: true });
    expect(await catalog.entities.get(ADMIN, DATASET_2)).toBeDefined();
    expect(await catalog.entities.deleteEntity(EDITOR, DATASET_2)).toMatchObject({ mode: 'hard', dryRun: false, changed: true });
    expect(await catalog.entities.get(ADMIN, DATASET_2)).toBeUndefined();
    expect(await codeOf(catalog.entities.deleteEntity(EDITOR, DATASET_2, { hard: true }))).toBe('NOT_FOUND');
    // A soft delete of something absent does not create it.
    expect(await codeOf(catalog.entities.deleteEntity(EDITOR, DATASET_2, { hard: false }))).toBe('NOT_FOUND');
    expect(await catalog.entities.get(ADMIN, DATASET_2)).toBeUndefined();
  });

  it('needs EDIT_ENTITY, also for a dry run', async () => {
    t = openCatalog();
    await t.catalog.entities.upsertAspect(ADMIN, DATASET, 'status', { removed: false });
    expect(await codeOf(t.catalog.entities.deleteEntity(READER, DATASET, { dryRun: true }))).toBe('FORBIDDEN');
  });

  it('access tokens are revoked by a hard delete only', async () => {
    t = openCatalog({ tokenSigningKey: 'k'.repeat(32) });
    const { metadata } = await t.catalog.tokens.issueBootstrapToken({ actorUrn: ADMIN });
    expect(await codeOf(t.catalog.entities.deleteEntity(ADMIN, metadata.urn, { hard: false }))).toBe('INVALID_INPUT');
    expect(await codeOf(t.catalog.entities.deleteEntity(ADMIN, metadata.urn, { hard: true, dryRun: true }))).toBe('UNSUPPORTED');
    expect(await t.catalog.entities.deleteEntity(ADMIN, metadata.urn, { hard: true })).toMatchObject({ mode: 'hard', changed: true });
    expect((await t.catalog.tokens.list(ADMIN, {})).total).toBe(0);
  });
});

describe('reindex for transports', () => {
  it('counts the entities first when asked, and reports the total with every step', async () => {
    const { catalog } = await withValues();
    const seen: Array<{ processed: number; total?: number; done: boolean }> = [];
    const result = await catalog.reindex({
      batchSize: 1,
      countTotal: true,
      onProgress: (p) => seen.push({ processed: p.processed, total: p.total, done: p.done }),
    });
    expect(result.total).toBe(3);
    expect(result.processed).toBe(3);
    expect(seen.at(-1)).toEqual({ processed: 3, total: 3, done: true });
    expect(seen.every((p) => p.total === 3)).toBe(true);
  });

  it('reindexAs needs MANAGE_SYSTEM_OPERATIONS', async () => {
    const { catalog } = await withValues();
    const refused = await errorOf(catalog.reindexAs(EDITOR));
    expect(refused.code).toBe('FORBIDDEN');
    expect(refused.message).toContain('MANAGE_SYSTEM_OPERATIONS');
    expect((await catalog.reindexAs(ADMIN)).processed).toBe(3);
  });
});
