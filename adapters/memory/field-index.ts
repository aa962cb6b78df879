import { SortedValueSlots, type IndexedValue } from './sorted-value-slots';

const NONE = -1;

/**
 * The value index of one searchable field (a standard field, or a structured property under one
 * definition key) over document slots:
 * - every distinct value gets a small id; a slot's first value id sits in a typed array (further
 *   values of multi-valued documents in a side map), so tests and facet counts read numbers, not objects;
 * - sorted (value, slot) pairs, numbers and strings apart, for ranges and equality (an equality is
 *   the range from the value to itself: no hash of slots per value beside them, which cost about a
 *   tenth of the heap per entity at 100k entities);
 * - counts per value for each scope (entity type × removed), so a facet over a whole scope is read,
 *   not computed.
 */
export class FieldIndex {
  private firstId = new Int32Array(0);
  private readonly moreIds = new Map<number, number[]>();
  /** Documents with at least one value. */
  private count = 0;
  private readonly idOf = new Map<IndexedValue, number>();
  /** Value by id, and how many documents hold it; an id no document holds any more is reused. */
  private readonly valueOfId: IndexedValue[] = [];
  private readonly refsOfId: number[] = [];
  private readonly freeIds: number[] = [];
  readonly numbers = new SortedValueSlots<number>();
  readonly strings = new SortedValueSlots<string>();
  /** Scope key (see `scopeKey`) → value → number of documents. */
  private readonly countsByScope = new Map<string, Map<IndexedValue, number>>();

  /** Number of documents that have at least one value. */
  get size(): number {
    return this.count;
  }

  /** Number of value ids handed out so far (ids are below it). */
  get idLimit(): number {
    return this.valueOfId.length;
  }

  valueOf(id: number): IndexedValue {
    return this.valueOfId[id]!;
  }

  /** Whether some value of the document passes the test. */
  someValue(slot: number, test: (value: IndexedValue) => boolean): boolean {
    const first = slot < this.firstId.length ? this.firstId[slot]! : NONE;
    if (first === NONE) return false;
    if (test(this.valueOfId[first]!)) return true;
    const more = this.moreIds.get(slot);
    if (more) for (const id of more) if (test(this.valueOfId[id]!)) return true;
    return false;
  }

  /** The slots of documents with more than one value. */
  slotsWithSeveralValues(): number[] {
    return [...this.moreIds.keys()];
  }

  hasValues(slot: number): boolean {
    return slot < this.firstId.length && this.firstId[slot] !== NONE;
  }

  /** Adds one to `counts[id]` for every value of the document. */
  countValues(slot: number, counts: Int32Array): void {
    const first = slot < this.firstId.length ? this.firstId[slot]! : NONE;
    if (first === NONE) return;
    counts[first]! += 1;
    const more = this.moreIds.get(slot);
    if (more) for (const id of more) counts[id]! += 1;
  }

  /** Calls `visit` with the slot of every document with a value, ascending. Do not change the index meanwhile. */
  forEachSlot(visit: (slot: number) => void): void {
    const { firstId } = this;
    for (let slot = 0; slot < firstId.length; slot++) if (firstId[slot] !== NONE) visit(slot);
  }

  /** Distinct values present (any scope). */
  values(): Iterable<IndexedValue> {
    return this.idOf.keys();
  }

  /** Number of documents with this value (any scope): a document holds each of its values once. */
  countOf(value: IndexedValue): number {
    const id = this.idOf.get(value);
    return id === undefined ? 0 : this.refsOfId[id]!;
  }

  forEachSlotWith(value: IndexedValue, visit: (slot: number) => void): void {
    if (!this.idOf.has(value)) return;
    if (typeof value === 'number') this.numbers.forEachInRange({ value, inclusive: true }, { value, inclusive: true }, visit);
    else this.strings.forEachInRange({ value, inclusive: true }, { value, inclusive: true }, visit);
  }

  /** Counts per value of the documents in one scope. */
  countsIn(scope: string): ReadonlyMap<IndexedValue, number> | undefined {
    return this.countsByScope.get(scope);
  }

  /** Indexes the document in `slot` (which must not be indexed here yet) with these distinct values. */
  add(slot: number, values: readonly IndexedValue[], scope: string): void {
    if (values.length === 0) return;
    if (slot >= this.firstId.length) {
      const grown = new Int32Array(Math.max(1024, this.firstId.length * 2, slot + 1)).fill(NONE);
      grown.set(this.firstId);
      this.firstId = grown;
    }
    const ids = values.map((value) => this.intern(value));
    this.firstId[slot] = ids[0]!;
    if (ids.length > 1) this.moreIds.set(slot, ids.slice(1));
    this.count += 1;
    let counts = this.countsByScope.get(scope);
    if (!counts) {
      counts = new Map();
      this.countsByScope.set(scope, counts);
    }
    for (const value of values) {
      if (typeof value === 'number') this.numbers.add(value, slot);
      else this.strings.add(value, slot);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }

  /** Removes what `add` indexed for the slot. */
  remove(slot: number, scope: string): void {
    if (!this.hasValues(slot)) return;
    const ids = [this.firstId[slot]!, ...(this.moreIds.get(slot) ?? [])];
    const values = ids.map((id) => this.valueOfId[id]!);
    for (const id of ids) this.release(id);
    this.firstId[slot] = NONE;
    this.moreIds.delete(slot);
    this.count -= 1;
    const counts = this.countsByScope.get(scope);
    for (const value of values) {
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

  private intern(value: IndexedValue): number {
    let id = this.idOf.get(value);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.valueOfId.length;
      this.valueOfId[id] = value;
      this.refsOfId[id] = 0;
      this.idOf.set(value, id);
    }
    this.refsOfId[id]! += 1;
    return id;
  }

  private release(id: number): void {
    this.refsOfId[id]! -= 1;
    if (this.refsOfId[id] === 0) {
      this.idOf.delete(this.valueOfId[id]!);
      this.freeIds.push(id);
    }
  }
}

/** Scope keys by entity type, built once (one per entity type the catalog knows, twice). */
const scopeKeys = [new Map<string, string>(), new Map<string, string>()] as const;

/** The scope a document counts in for facets: its entity type and whether it is soft-deleted. */
export function scopeKey(entityType: string, removed: boolean): string {
  const keys = scopeKeys[removed ? 1 : 0];
  let key = keys.get(entityType);
  if (key === undefined) {
    key = `${removed ? '1' : '0'}${entityType}`;
    // Entity types come from the registry, so this stays small; cleared should a host invent many.
    if (keys.size >= 10_000) keys.clear();
    keys.set(entityType, key);
  }
  return key;
}
