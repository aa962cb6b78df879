import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Database file paths in temporary directories of their own (`<prefix>…/catalog.db`), all removed after the
 * test file: call at the top level of a test file, then `newFile()` for each database.
 */
export function tempDatabases(prefix: string): () => string {
  const directories: string[] = [];
  afterAll(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });
  return () => {
    const directory = mkdtempSync(join(tmpdir(), `metacatalog-${prefix}-`));
    directories.push(directory);
    return join(directory, 'catalog.db');
  };
}
