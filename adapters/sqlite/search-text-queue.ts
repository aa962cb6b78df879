/**
 * Full text is written through a small pending table (search_text_pending) and moved into the FTS5
 * index in one transaction before the next full-text query: an FTS5 write per small transaction cost
 * more than the rest of a single-entity write (docs/adapters-sqlite.md).
 */
import { analyzeText } from '../../src/adapter/text-analysis';
import type { SqliteHandle } from './statements';

/** The FTS5 form of a text: its analysed terms separated by spaces. */
export function terms(text: string | null): string {
  return analyzeText(text ?? '').join(' ');
}

/**
 * Moves pending full-text rows into the FTS5 index in one transaction, analysed. Called before every
 * query that uses full text, so a query always sees every committed write.
 */
export function flushSearchText(h: SqliteHandle): number {
  const pending = h.stmt('SELECT EXISTS (SELECT 1 FROM search_text_pending) AS n').get() as { n: number };
  if (pending.n === 0) return 0;
  return h.db.transaction(() => movePendingText(h)).immediate();
}

/** Inside a write transaction: moves the pending full-text rows into FTS5. */
export function movePendingText(h: SqliteHandle): number {
  const rows = h.stmt('SELECT entity_id, name, description, urn_key, deleted FROM search_text_pending').all() as Array<{
    entity_id: number;
    name: string | null;
    description: string | null;
    urn_key: string | null;
    deleted: number;
  }>;
  if (rows.length === 0) return 0;
  const remove = h.stmt('DELETE FROM search_text WHERE rowid = ?');
  const insert = h.stmt('INSERT INTO search_text (rowid, name, description, urn_key) VALUES (?, ?, ?, ?)');
  for (const row of rows) {
    remove.run(row.entity_id);
    if (!row.deleted) insert.run(row.entity_id, terms(row.name), terms(row.description), terms(row.urn_key));
  }
  h.stmt('DELETE FROM search_text_pending').run();
  return rows.length;
}
