import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../adapters/sqlite/index';
import { registerStructuredPropertyTests } from '../../src/testing/structured-properties';

const dir = mkdtempSync(join(tmpdir(), 'metacatalog-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

registerStructuredPropertyTests({
  name: 'sqlite',
  describe,
  it,
  expect,
  createAdapter: (options) => createSqliteAdapter({ filename: join(dir, `c${n++}.db`), ...options }),
});
