import { SortedValueSlots, type IndexedValue } from './sorted-value-slots';

/** Slots holding one value: a single slot stays a number, a Set only from the second one on. */
type SlotSet = number | Set<number>;

/**
 * The value index of one searchable field (a standard field, or a structured property under one
 * definition key) over document slots:
 * - `valuesOf(slot)`: the distinct values of a document, so conditions are checked without a scan;
 * - a hash from value to slots, for equality;
 * - sorted (value, slot) pairs, numbers and strings apart, for ranges;
 * - counts per value for each scope (entity type × removed), so a facet over a whole scope is read,
 *   not computed.
 */
export class FieldIndex {
  private readonly valuesBySlot: Array<readonly IndexedValue[] | undefined> = [];
  private readonly withValues = new Set<number>();
  private readonly bySlotValue = new Map<IndexedValue, SlotSet>();
  readonly numbers = new SortedValueSlots<number>();
  readonly strings = new SortedValueSlots<string>();
  /** Scope key (see `scopeKey`) → value → number of documents. */
  private readonly countsByScope = new Map<string, Map<IndexedValue, number>>();

  /** Number of documents that have at least one value. */
  get size(): number {
    return this.withValues.size;
  }

  valuesOf(slot: number): readonly IndexedValue[] | undefined {
    return this.valuesBySlot[slot];
  }

  /** Slots of every document with a value. Do not change the index while iterating. */
  slots(): Iterable<number> {
    return this.withValues;
  }

  /** Distinct values present (any scope). */
  values(): Iterable<IndexedValue> {
    return this.bySlotValue.keys();
  }

  /** Number of documents with this value (any scope). */
  countOf(value: IndexedValue): number {
    const slots = this.bySlotValue.get(value);
    return slots === undefined ? 0 : typeof slots === 'number' ? 1 : slots.size;
  }

  forEachSlotWith(value: IndexedValue, visit: (slot: number) => void): void {
    const slots = this.bySlotValue.get(value);
    if (slots === undefined) return;
    if (typeof slots === 'number') visit(slots);
    else for (const slot of slots) visit(slot);
  }

  /** Counts per value of the documents in one scope. */
  countsIn(scope: string): ReadonlyMap<IndexedValue, number> | undefined {
    return this.countsByScope.get(scope);
  }

  /** Indexes the document in `slot` (which must not be indexed here yet) with these distinct values. */
  add(slot: number, values: readonly IndexedValue[], scope: string): void {
    if (values.length === 0) return;
    this.valuesBySlot[slot] = values;
    this.withValues.add(slot);
    let counts = this.countsByScope.get(scope);
    if (!counts) {
      counts = new Map();
      this.countsByScope.set(scope, counts);
    }
    for (const value of values) {
      const slots = this.bySlotValue.get(value);
      if (slots === undefined) this.bySlotValue.set(value, slot);
      else if (typeof slots === 'number') this.bySlotValue.set(value, new Set([slots, slot]));
      else slots.add(slot);
      if (typeof value === 'number') this.numbers.add(value, slot);
      else this.strings.add(value, slot);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }

  /** Removes what `add` indexed for the slot. */
  remove(slot: number, scope: string): void {
    const values = this.valuesBySlot[slot];
    if (values === undefined) return;
    this.valuesBySlot[slot] = undefined;
    this.withValues.delete(slot);
    const counts = this.countsByScope.get(scope);
    for (const value of values) {
      const slots = this.bySlotValue.get(value);
      if (typeof slots === 'number') this.bySlotValue.delete(value);
      else if (slots !== undefined) {
        slots.delete(slot);
        if (slots.size === 1) this.bySlotValue.set(value, slots.values().next().value as number);
      }
      if (typeof value === 'number') this.numbers.delete(value, slot);
      else this.strings.delete(value, slot);
      if (counts) {
        const left = (counts.get(value) ?? 1) - 1;
        if (left > 0) counts.set(value, left);
        else counts.delete(value);
      }
    }
    if (counts && counts.size === 0) this.countsByScope.delete(scope);
  }
}

/** The scope a document counts in for facets: its entity type and whether it is soft-deleted. */
export function scopeKey(entityType: string, removed: boolean): string {
  return `${removed ? '1' : '0'}${entityType}`;
}
