import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from './helpers';
import { MODES, withMode } from './modes';
import { FINANCE_POLICY_YAML } from './finance-policy';

afterAll(removeTempDirs);

describe.each(MODES)('policies and service-accounts commands ($name)', (mode) => {
  it('create, list and delete a policy; create, list and disable a service account', { timeout: 60_000 }, async () => {
    await withMode(mode, async (_mc, cli) => {
      const file = join(tempDir(), 'policy.yaml');
      writeFileSync(file, FINANCE_POLICY_YAML);
      const created = await cli('policies', 'create', '-f', file, '--json');
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const [{ urn }] = JSON.parse(created.stdout) as [{ urn: string }];
      expect(urn).toMatch(/^urn:li:policy:/);
      const listed = await cli('policies', 'list', '--json');
      expect(JSON.parse(listed.stdout)).toMatchObject({
        total: 1,
        policies: [
          {
            urn,
            type: 'METADATA',
            resources: {
              type: 'dataset',
              filter: { criteria: [{ field: 'structuredProperties.finance.domain', condition: 'EQUALS', values: ['finance'] }] },
              properties: ['finance.*'],
            },
          },
        ],
      });
      expect((await cli('policies', 'list')).stdout).toContain('finance stewards');
      const bad = join(tempDir(), 'bad.yaml');
      writeFileSync(bad, 'name: x\nprivileges: [NOPE]\nactors: { users: [] }\n');
      const refused = await cli('policies', 'create', '-f', bad);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('/privileges/0');
      expect((await cli('policies', 'delete', urn)).stdout).toContain(`Deleted policy ${urn}`);
      expect(JSON.parse((await cli('policies', 'list', '--json')).stdout)).toMatchObject({ total: 0 });

      const account = await cli('service-accounts', 'create', '--id', 'etl', '--display-name', 'nightly ETL');
      expect(account.stdout).toContain('Created service account urn:li:corpuser:service_etl');
      expect((await cli('service-accounts', 'list')).stdout).toContain('urn:li:corpuser:service_etl  enabled  "nightly ETL"');
      const disabled = await cli('service-accounts', 'disable', 'urn:li:corpuser:service_etl', '--json');
      expect(JSON.parse(disabled.stdout)).toMatchObject({ urn: 'urn:li:corpuser:service_etl', disabled: true });
      expect((await cli('service-accounts', 'list')).stdout).toContain('DISABLED');
    });
  });
});
