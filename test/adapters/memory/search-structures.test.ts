import { describe, expect, it } from 'vitest';
import { FieldIndex } from '../../../adapters/memory/field-index';
import { createDocumentIndex } from '../../../adapters/memory/search-documents';
import { SlotTable } from '../../../adapters/memory/slot-table';
import { SortedStrings } from '../../../adapters/memory/sorted-strings';
import { topK } from '../../../adapters/memory/top-k';
import { ValueOrder } from '../../../adapters/memory/value-order';
import type { SearchDocument } from '../../../src/adapter/types';
import { seededRandom } from '../../../src/testing/random';

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function document(urn: string, entityType = 'dataset', removed = false): SearchDocument {
  return { urn, entityType, removed, text: { urnKey: urn }, fields: {}, properties: [] };
}

describe('SortedStrings neighbours', () => {
  it('finds the values around any string, across chunk boundaries', () => {
    const random = seededRandom(3);
    const set = new SortedStrings();
    const values = Array.from({ length: 3000 }, (_, i) => `v${Math.floor(random() * 1e6)}_${i}`);
    for (const v of values) set.add(v);
    const sorted = [...values].sort(byCodeUnits);
    for (let i = 0; i < 400; i++) {
      const probe = i % 2 ? sorted[Math.floor(random() * sorted.length)]! : `v${Math.floor(random() * 1e6)}`;
      const below = sorted.filter((v) => v < probe).pop();
      const above = sorted.find((v) => v > probe);
      expect(set.neighbours(probe)).toEqual([below, above]);
      expect(set.atOrBefore(probe)).toBe(sorted.filter((v) => v <= probe).pop());
    }
    expect(set.atOrBefore('a')).toBe(undefined);
    expect(set.neighbours('zzz')).toEqual([sorted[sorted.length - 1], undefined]);
  });
});

describe('SortedStrings addLater', () => {
  it('places values added later, in bulk or a few at a time, in code-unit order', () => {
    const random = seededRandom(4);
    const set = new SortedStrings();
    const values = Array.from({ length: 2500 }, (_, i) => `u${Math.floor(random() * 1e6)}_${i}`);
    values.slice(0, 2000).forEach((v) => set.addLater(v));
    expect(set.size).toBe(2000);
    expect([...set.valuesAfter(undefined)]).toEqual(values.slice(0, 2000).sort(byCodeUnits));
    for (const v of values.slice(2000)) {
      set.addLater(v);
      if (v.endsWith('7')) expect(set.delete(v)).toBe(true);
    }
    const kept = values.filter((v, i) => i < 2000 || !v.endsWith('7')).sort(byCodeUnits);
    expect(set.pageAfter(kept[99], 5000)).toEqual(kept.slice(100));
    expect(set.size).toBe(kept.length);
  });
});

describe('SlotTable ranks', () => {
  it('orders slots like their URNs, also when inserts keep splitting one gap and ranks are renumbered', () => {
    const table = new SlotTable();
    const urns = ['a', 'b', 'c'];
    // Each new URN falls between 'a' and the previous one: the same gap halves every time.
    for (let n = 1; n <= 300; n++) urns.push(`a${'a'.repeat(n)}b`);
    const random = seededRandom(11);
    for (let i = 0; i < 200; i++) urns.push(`r${Math.floor(random() * 1e9)}`);
    // Ranked after each write (one by one between neighbours), as when every write is followed by a question.
    for (const urn of urns) {
      table.put(document(urn));
      table.settle();
    }
    const byRank = [...table.slotOf.entries()].sort((x, y) => table.rank[x[1]]! - table.rank[y[1]]!).map(([urn]) => urn);
    expect(byRank).toEqual([...urns].sort(byCodeUnits));
    expect(new Set(byRank.map((urn) => table.rank[table.slotOf.get(urn)!])).size).toBe(urns.length);
  });

  it('keeps a slot and its rank when a document is replaced, and reuses slots of removed ones', () => {
    const table = new SlotTable();
    for (const urn of ['b', 'd', 'f']) table.put(document(urn));
    table.settle();
    const slot = table.slotOf.get('d')!;
    const rank = table.rank[slot];
    table.unplace(slot);
    table.put(document('d', 'chart', true));
    expect(table.slotOf.get('d')).toBe(slot);
    expect(table.rank[slot]).toBe(rank);
    expect(table.removed[slot]).toBe(1);
    expect(table.typeNames[table.typeId[slot]!]).toBe('chart');
    table.remove('b');
    expect(table.put(document('e'))).toBe(table.slotOf.get('e'));
    expect(table.rankAtOrBefore('c')).toBe(Number.NEGATIVE_INFINITY);
    expect(table.rankAtOrBefore('e')).toBe(table.rank[table.slotOf.get('e')!]);
    expect(table.rankAtOrBefore('ee')).toBe(table.rank[table.slotOf.get('e')!]);
  });
});

describe('SlotTable ranks placed later', () => {
  it('ranks a bulk at once and a few new slots (runs of them between two old ones too) between their neighbours', () => {
    const table = new SlotTable();
    const random = seededRandom(7);
    const urns: string[] = [];
    for (let i = 0; i < 400; i++) urns.push(`m${Math.floor(random() * 1e9)}`);
    for (const urn of urns) table.put(document(urn));
    table.settle(); // one bulk: renumbered in URN order
    const few = ['a', 'm0', 'm00', 'm000', 'm0000', 'zz', 'zzz', ...Array.from({ length: 15 }, (_, i) => `m5${i}`)];
    for (const urn of few) table.put(document(urn));
    urns.push(...few);
    table.remove(urns[3]!); // a removal ranks what waits first
    urns.splice(3, 1);
    table.put(document('m4'));
    urns.push('m4');
    expect(table.rankAtOrBefore('m4')).toBe(table.rank[table.slotOf.get('m4')!]);
    const byRank = [...table.slotOf.entries()].sort((x, y) => table.rank[x[1]]! - table.rank[y[1]]!).map(([urn]) => urn);
    expect(byRank).toEqual([...urns].sort(byCodeUnits));
    expect(new Set(byRank.map((urn) => table.rank[table.slotOf.get(urn)!])).size).toBe(urns.length);
  });
});

describe('FieldIndex', () => {
  it('counts values by id, tests every value of multi-valued documents and reuses freed ids', () => {
    const index = new FieldIndex();
    index.add(0, ['gold'], '0dataset');
    index.add(1, ['gold', 'silver'], '0dataset');
    index.add(2, [3, 'silver'], '1dataset');
    const counts = new Int32Array(index.idLimit);
    for (const slot of [0, 1, 2]) index.countValues(slot, counts);
    const byValue = Object.fromEntries([...counts].map((count, id) => [String(index.valueOf(id)), count]));
    expect(byValue).toEqual({ gold: 2, silver: 2, '3': 1 });
    expect(index.someValue(2, (v) => v === 3)).toBe(true);
    expect(index.someValue(0, (v) => v === 'silver')).toBe(false);
    expect([...(index.countsIn('0dataset') ?? [])]).toEqual([
      ['gold', 2],
      ['silver', 1],
    ]);
    index.remove(2, '1dataset');
    expect(index.countsIn('1dataset')).toBe(undefined);
    const limit = index.idLimit;
    index.add(3, ['bronze'], '0dataset');
    expect(index.idLimit).toBe(limit);
    expect(index.hasValues(2)).toBe(false);
    expect(index.size).toBe(3);
  });
});

describe('FieldIndex ranges and topK', () => {
  it('ranges and counts agree with a filter over the pairs, and topK with a sort', () => {
    const random = seededRandom(5);
    const sorted = new FieldIndex();
    const pairs: Array<[number, number]> = [];
    for (let slot = 0; slot < 2000; slot++) {
      const value = Math.floor(random() * 100) / 4;
      sorted.add(slot, [value], '0dataset');
      pairs.push([value, slot]);
    }
    for (const [, slot] of pairs.filter((_, i) => i % 3 === 0)) {
      expect(sorted.hasValues(slot)).toBe(true);
      sorted.remove(slot, '0dataset');
      expect(sorted.hasValues(slot)).toBe(false);
    }
    const kept = pairs.filter((_, i) => i % 3 !== 0);
    for (const [low, high] of [
      [3, 10],
      [0, 0],
      [24.75, 30],
      [-1, 2.5],
    ] as const) {
      const visited: number[] = [];
      const ids = sorted.idsInRange({ value: low, inclusive: true }, { value: high, inclusive: false });
      for (const id of ids) sorted.forEachSlotOf(id, (slot) => visited.push(slot));
      const expected = kept.filter(([v]) => v >= low && v < high).map(([, slot]) => slot);
      expect(visited.sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
      expect(sorted.countOfIds(ids)).toBe(expected.length);
    }
    const numbers = Array.from({ length: 500 }, () => Math.floor(random() * 1000));
    expect(topK(numbers, 7, (a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b).slice(0, 7));
  });
});

describe('ValueOrder', () => {
  it('answers ranges like a sort of the live values, whether new values were placed one by one or merged', () => {
    const random = seededRandom(9);
    const values: string[] = [];
    const order = new ValueOrder((id) => values[id]!);
    const live = new Set<number>();
    for (let round = 0; round < 40; round++) {
      // Rounds of many inserts (merged at once) and of few (placed one by one), deletes between.
      const inserts = round % 4 === 0 ? 600 : 5;
      for (let i = 0; i < inserts; i++) {
        const id = values.length;
        values.push(`v${Math.floor(random() * 1e6)}_${id}`);
        order.insert(id);
        live.add(id);
      }
      for (const id of [...live].filter(() => random() < 0.05)) {
        order.delete(id);
        live.delete(id);
      }
      const low = `v${Math.floor(random() * 1e6)}`;
      const high = `v${Math.floor(random() * 1e6)}`;
      const expected = [...live]
        .filter((id) => values[id]! > low && values[id]! <= high)
        .sort((a, b) => byCodeUnits(values[a]!, values[b]!));
      expect(order.idsInRange({ value: low, inclusive: false }, { value: high, inclusive: true })).toEqual(expected);
    }
    const all = [...live].sort((a, b) => byCodeUnits(values[a]!, values[b]!));
    expect(order.idsInRange({ value: '', inclusive: true }, undefined)).toEqual(all);
  });
});

describe('the document index: fields found by the shape of the documents before', () => {
  it('indexes a document of the same shape into a new field index once the old one was dropped', () => {
    const index = createDocumentIndex();
    const withValues = (urn: string, tier: string, owner: string): SearchDocument => ({
      ...document(urn),
      fields: { origin: ['PROD'] },
      properties: [
        { propertyUrn: 'urn:li:structuredProperty:tier', definitionKey: 'k1', values: [tier] },
        { propertyUrn: 'urn:li:structuredProperty:owner', definitionKey: 'k2', values: [owner] },
      ],
    });
    index.documentChanged('a', withValues('a', 'gold', 'x'));
    index.documentChanged('b', withValues('b', 'gold', 'y'));
    const tierKey = [...index.fields.keys()].find((key) => key.includes('tier'))!;
    const first = index.fields.get(tierKey)!;
    expect(first.countOf('gold')).toBe(2);
    // Both documents go: every field index is dropped with its property entry.
    index.documentChanged('a', undefined);
    index.documentChanged('b', undefined);
    expect(index.fields.size).toBe(0);
    expect(index.propertyFields.size).toBe(0);
    // The same shape again: new field indexes, listed under their property again, not the dropped ones.
    index.documentChanged('c', withValues('c', 'silver', 'z'));
    const second = index.fields.get(tierKey)!;
    expect(second).not.toBe(first);
    expect(second.countOf('silver')).toBe(1);
    expect(index.propertyFields.get('urn:li:structuredProperty:tier')?.get('k1')).toBe(second);
    // A different shape at the same positions (another definition key) gets its own index.
    index.documentChanged('d', {
      ...document('d'),
      fields: { origin: ['PROD'] },
      properties: [{ propertyUrn: 'urn:li:structuredProperty:tier', definitionKey: 'k9', values: ['gold'] }],
    });
    expect(index.propertyFields.get('urn:li:structuredProperty:tier')?.get('k9')?.countOf('gold')).toBe(1);
    expect(second.countOf('gold')).toBe(0);
  });
});
