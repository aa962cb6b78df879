import type { EntityScanRequest, EntityStore } from './entity-store';
import type { StoredEntity } from './values';

/**
 * Every page of a scan, in URN order: it follows the cursor until a page comes back short. Callers
 * that stop early (a `return` or `break` in their loop) read no further.
 */
export async function* scanPages(
  store: Pick<EntityStore, 'scanEntities'>,
  request: Omit<EntityScanRequest, 'afterUrn' | 'limit'> & { afterUrn?: string },
  pageSize: number,
): AsyncGenerator<StoredEntity[]> {
  let afterUrn = request.afterUrn;
  for (;;) {
    const page = await store.scanEntities({ ...request, afterUrn, limit: pageSize });
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    afterUrn = page[page.length - 1]!.urn;
  }
}
