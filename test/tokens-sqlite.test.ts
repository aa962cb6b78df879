import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../adapters/sqlite';
import { registerPolicyTests } from '../src/testing/policies';
import { registerTokenRuleTests } from '../src/testing/token-rules';
import { registerTokenScenarioTests } from '../src/testing/tokens';
import type { ConformanceHarness } from '../src/testing/types';

const harness: ConformanceHarness = {
  name: 'sqlite',
  describe,
  it,
  expect,
  createAdapter: (options) => createSqliteAdapter({ filename: join(mkdtempSync(join(tmpdir(), 'metacatalog-')), 'catalog.db'), ...options }),
};

registerTokenScenarioTests(harness);
registerTokenRuleTests(harness);
registerPolicyTests(harness);
