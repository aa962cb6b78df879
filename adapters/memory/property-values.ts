/**
 * The memory adapter's property-value index: which documents carry values of a structured property, read
 * from the field indexes of each (property, definition key) the document index keeps (search-documents.ts).
 */
import type { SeveralValuesRequest, SeveralValuesResponse } from '../../src/adapter/types';
import { evaluate } from './search-scope';
import type { DocumentIndex } from './search-documents';
import { topK } from './top-k';

/** Slots with values of the property under any key but `keep`, each once, with a rank above `after`. */
export function propertySlots(index: DocumentIndex, propertyUrn: string, keep: string | undefined, after: number): number[] {
  const slots: number[] = [];
  const byKey = index.propertyFields.get(propertyUrn);
  if (!byKey) return slots;
  const mark = index.table.nextMark();
  const { marks, rank } = index.table;
  for (const [key, field] of byKey) {
    if (key === keep) continue;
    field.forEachSlot((slot) => {
      if (marks[slot] === mark || rank[slot]! <= after) return;
      marks[slot] = mark;
      slots.push(slot);
    });
  }
  return slots;
}

export function findEntitiesWithPropertyValues(
  index: DocumentIndex,
  request: {
    propertyUrn: string;
    keepDefinitionKey?: string;
    afterUrn?: string;
    limit: number;
  },
): string[] {
  if (request.limit <= 0) return [];
  const after = request.afterUrn === undefined ? Number.NEGATIVE_INFINITY : index.table.rankAtOrBefore(request.afterUrn);
  const slots = propertySlots(index, request.propertyUrn, request.keepDefinitionKey, after);
  const { rank } = index.table;
  return topK(slots, request.limit, (a, b) => rank[a]! - rank[b]!).map((slot) => index.table.urns[slot]!);
}

export function countEntitiesWithPropertyValues(index: DocumentIndex, propertyUrn: string, definitionKey?: string): number {
  const byKey = index.propertyFields.get(propertyUrn);
  if (!byKey) return 0;
  if (definitionKey !== undefined) return byKey.get(definitionKey)?.size ?? 0;
  if (byKey.size === 1) return byKey.values().next().value!.size;
  return propertySlots(index, propertyUrn, undefined, Number.NEGATIVE_INFINITY).length;
}

export function findEntitiesWithSeveralPropertyValues(index: DocumentIndex, request: SeveralValuesRequest): SeveralValuesResponse {
  const field = index.propertyFields.get(request.propertyUrn)?.get(request.definitionKey);
  if (!field) return { total: 0, urns: [] };
  let slots = field.slotsWithSeveralValues();
  if (request.filter?.length) {
    const matching = evaluate(index, { entityTypes: [], filter: request.filter, includeRemoved: true });
    if (!matching.scopeOnly) {
      const { marks } = index.table;
      slots = slots.filter((slot) => marks[slot] === matching.mark);
    }
  }
  if (request.limit <= 0) return { total: slots.length, urns: [] };
  const after = request.afterUrn === undefined ? Number.NEGATIVE_INFINITY : index.table.rankAtOrBefore(request.afterUrn);
  const { rank } = index.table;
  const later = slots.filter((slot) => rank[slot]! > after);
  const urns = topK(later, request.limit, (a, b) => rank[a]! - rank[b]!).map((slot) => index.table.urns[slot]!);
  return { total: slots.length, urns };
}
