import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import { createCatalog, type Catalog, type CatalogOptions } from '../../../src/index';

export const ADMIN = 'urn:li:corpuser:admin';
export const EDITOR = 'urn:li:corpuser:editor';
export const READER = 'urn:li:corpuser:reader';
export const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)';
export const DATASET_2 = 'urn:li:dataset:(urn:li:dataPlatform:hive,customers,PROD)';
export const FLOW = 'urn:li:dataFlow:(airflow,nightly,prod)';
export const CHART = 'urn:li:chart:(looker,sales)';

export interface TestCatalog {
  catalog: Catalog;
  file: string;
  close(): Promise<void>;
}

/** A catalog on a fresh SQLite file; background jobs off (tests call settle()). */
export function openCatalog(options: Partial<CatalogOptions> = {}): TestCatalog {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-'));
  const file = join(dir, 'catalog.db');
  const catalog = createCatalog({
    adapter: createSqliteAdapter({ filename: file }),
    superUsers: [ADMIN],
    policies: [{ actors: [EDITOR], privileges: ['EDIT_ENTITY_PROPERTIES', 'EDIT_ENTITY'] }],
    jobs: { background: false },
    ...options,
  });
  return {
    catalog,
    file,
    async close() {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The code of a rejection (or 'resolved'). */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : `uncoded: ${String(error)}`;
  }
}

export { errorOf } from '../../support/errors';

export const RETENTION_YAML = `
- id: io.acryl.privacy.retentionTime
  qualified_name: io.acryl.privacy.retentionTime
  type: number
  cardinality: MULTIPLE
  display_name: Retention Time
  entity_types:
    - dataset
    - dataFlow
  description: "Retention Time is used to figure out how long to retain records in a dataset"
  allowed_values:
    - value: 30
      description: 30 days, usually reserved for datasets that are ephemeral and contain pii
    - value: 90
      description: Use this for datasets that drive monthly reporting but contain pii
    - value: 365
      description: Use this for non-sensitive data that can be retained for longer
`;
