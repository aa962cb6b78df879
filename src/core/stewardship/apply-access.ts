import type { StoredEntity } from '../../adapter/types';
import { CatalogError } from '../../errors';
import type { Actor } from '../access/actor';
import { describeRefusal, type AccessRefusal } from '../access/item-access';
import type { CatalogContext } from '../context';
import type { SearchService } from '../search/service';
import type { CheckedApply } from './apply-input';
import type { ApplyViolation } from './apply-types';

/** Matches read and checked at once. */
const PAGE = 1000;

/**
 * ACCESS HOOK (metadata policies): the matches the actor may not edit, for an actor that holds
 * EDIT_ENTITY_PROPERTIES only through policies with resources. Every match is checked (each page of the
 * scroll read once), on what is stored now, for every property the edit sets or removes; the answer is
 * one violation per refused property with the number of refused entities and the first of them.
 */
export async function accessViolations(
  ctx: CatalogContext,
  search: SearchService,
  actor: Actor,
  checked: CheckedApply,
): Promise<ApplyViolation[]> {
  const access = await ctx.authorizer.authorizeBatch(actor, ['EDIT_ENTITY_PROPERTIES']);
  if (!access) return [];
  const properties = [...checked.edit.set.map((s) => s.propertyUrn), ...checked.edit.remove];
  const refused = new Map<string, { first: AccessRefusal; entities: Set<string> }>();
  let scrollId: string | null | undefined;
  do {
    const page = await search.scroll(actor, { ...checked.scope, count: PAGE, ...(scrollId ? { scrollId } : {}) });
    const urns = page.searchResults.map((r) => r.entity.urn);
    const stored = await ctx.adapter.readEntities(urns, ['structuredProperties']);
    const read = new Map<string, StoredEntity>(stored.map((e) => [e.urn, e]));
    await access.begin(read, urns);
    for (const result of page.searchResults) {
      const { urn, type } = result.entity as { urn: string; type?: string };
      const entity = read.get(urn);
      access.check({ urn, entityType: entity?.entityType ?? type ?? '', path: '' }, 'EDIT_ENTITY_PROPERTIES', entity, properties);
    }
    for (const r of access.takeRefusals()) {
      const key = r.propertyUrn ?? '';
      const group = refused.get(key);
      if (group) group.entities.add(r.urn);
      else refused.set(key, { first: r, entities: new Set([r.urn]) });
    }
    scrollId = page.nextScrollId;
  } while (scrollId);
  return [...refused.values()].map(({ first, entities }) => ({
    ...(first.propertyUrn ? { propertyUrn: first.propertyUrn } : properties.length === 1 ? { propertyUrn: properties[0]! } : {}),
    urn: first.urn,
    count: entities.size,
    privilege: first.privilege,
    message: `${describeRefusal(access.actor, first)}${entities.size > 1 ? ` (${entities.size} matches are refused)` : ''}`,
  }));
}

/** FORBIDDEN for a real run the dry run found refused matches in: nothing is queued. */
export function accessRefusal(violations: readonly ApplyViolation[]): CatalogError | undefined {
  const denied = violations.filter((v) => v.privilege !== undefined);
  if (!denied.length) return undefined;
  return new CatalogError('FORBIDDEN', `the change is refused: ${denied[0]!.message}; nothing was queued`, {
    reason: denied[0]!.privilege!,
    details: denied.map((v) => ({ path: '/', message: v.urn ? `${v.urn}: ${v.message}` : v.message })),
  });
}
