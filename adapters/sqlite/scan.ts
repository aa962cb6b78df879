import type { StoredEntity } from '../../src/adapter/types';
import * as aspects from './aspects';
import { dictionaryOf } from './dictionary';
import type { SqliteHandle } from './statements';

/** `scanEntities`: a page of entities in URN order, optionally of one type and carrying one aspect. */
export function scanEntities(
  db: SqliteHandle,
  request: {
    entityType?: string;
    requireAspect?: string;
    aspectNames?: readonly string[];
    afterUrn?: string;
    limit: number;
  },
): StoredEntity[] {
  const conditions = ['e.urn > @after'];
  const aspectId = request.requireAspect === undefined ? undefined : (dictionaryOf(db).find(request.requireAspect) ?? -1);
  if (aspectId !== undefined) conditions.push('EXISTS (SELECT 1 FROM aspects x WHERE x.entity_id = e.entity_id AND x.name_id = @aspect)');
  const values = { after: request.afterUrn ?? '', limit: request.limit, ...(aspectId !== undefined ? { aspect: aspectId } : {}) };
  let page: string[];
  if (request.entityType === undefined) {
    page = db
      .stmt(`SELECT e.urn FROM entities e WHERE ${conditions.join(' AND ')} ORDER BY e.urn LIMIT @limit`)
      .pluck()
      .all(values) as string[];
  } else {
    // entities_by_scope is (removed, entity_type, urn): with each removed state (no search document,
    // 0, 1) the type's entities are a URN-ordered range. A page is the first `limit` of the three.
    page = [];
    for (const removed of ['e.removed IS NULL', 'e.removed = 0', 'e.removed = 1']) {
      const sql = `SELECT e.urn FROM entities e INDEXED BY entities_by_scope WHERE ${removed} AND e.entity_type = @entityType AND ${conditions.join(' AND ')}
        ORDER BY e.urn LIMIT @limit`;
      page.push(
        ...(db
          .stmt(sql)
          .pluck()
          .all({ ...values, entityType: request.entityType }) as string[]),
      );
    }
    page = page.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, request.limit);
  }
  return aspects.readEntities(db, page, request.aspectNames);
}
