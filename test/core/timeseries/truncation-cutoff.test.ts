import { describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../../../adapters/memory/index';
import { createCatalog } from '../../../src/index';

const ADMIN = 'urn:li:corpuser:admin';
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 31);
const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,cutoff,PROD)';

describe('truncation by age: the catalog counts back from its own clock', () => {
  it('olderThanMillis removes the rows at or before clock() minus the age, and the answer names the cutoff', async () => {
    const c = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], clock: () => NOW, jobs: { background: false } });
    await c.timeseries.append(
      ADMIN,
      DATASET,
      'datasetProfile',
      [1, 2, 3, 4, 5].map((d) => ({ timestampMillis: NOW - d * DAY })),
    );
    const answer = await c.timeseries.truncate(ADMIN, { entityType: 'dataset', aspect: 'datasetProfile', olderThanMillis: 3 * DAY });
    expect(answer).toMatchObject({ dryRun: true, rowsToDelete: 3, totalRows: 5, endTimeMillis: NOW - 3 * DAY });
    await c.close();
  });

  it('refuses both a cutoff and an age, or neither, naming the field', async () => {
    const c = createCatalog({ adapter: createMemoryAdapter(), superUsers: [ADMIN], clock: () => NOW, jobs: { background: false } });
    for (const extra of [{ endTimeMillis: NOW, olderThanMillis: DAY }, {}]) {
      await expect(c.timeseries.truncate(ADMIN, { entityType: 'dataset', aspect: 'datasetProfile', ...extra })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        details: [{ path: '/endTimeMillis' }],
      });
    }
    await c.close();
  });
});
