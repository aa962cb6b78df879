import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandle } from '../../../adapters/sqlite/statements';

describe('the SQLite prepared statement cache', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const d of directories.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('keeps a statement while it is used and lets the least recently used go past 1,000 texts', () => {
    const directory = mkdtempSync(join(tmpdir(), 'metacatalog-statements-'));
    directories.push(directory);
    const db = new Database(join(directory, 'statements.db'));
    try {
      const h = createHandle(db);
      const often = h.stmt('SELECT 0 AS n');
      const rare = h.stmt('SELECT -1 AS n');
      // Ever new texts (as ever new search shapes would be), the frequent one used in between.
      for (let i = 1; i <= 1_500; i++) {
        expect(h.stmt(`SELECT ${i} AS n`).get()).toEqual({ n: i });
        expect(h.stmt('SELECT 0 AS n')).toBe(often);
      }
      const again = h.stmt('SELECT -1 AS n');
      expect(again).not.toBe(rare);
      expect(again.get()).toEqual({ n: -1 });
    } finally {
      db.close();
    }
  });
});
