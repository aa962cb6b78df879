import { ValueOrder, type IndexedValue, type RangeBound } from './value-order';

export type { IndexedValue, RangeBound } from './value-order';

const NONE = -1;

/**
 * The value index of one searchable field (a standard field, or a structured property under one
 * definition key) over document slots:
 * - every distinct value gets a small id; a slot's first value id sits in a typed array (further
 *   values of multi-valued documents in a side map), so tests and facet counts read numbers, not objects;
 * - the slots holding each value id: the slot itself while one document holds the value (most values
 *   of a name or an id field), else a list; a slot's place in the list of its first value is kept,
 *   so taking a document out is a swap, not a search. Equality reads one list; adding a document with
 *   values seen before compares nothing;
 * - the value ids in value order (value-order.ts), numbers and strings apart, for ranges;
 * - counts per value id for each scope (entity type × removed), so a facet over a whole scope is read,
 *   not computed.
 */
export class FieldIndex {
  private firstId = new Int32Array(0);
  /** The slot's position in the member list of its first value. */
  private firstAt = new Int32Array(0);
  private readonly moreIds = new Map<number, number[]>();
  /** Documents with at least one value. */
  private count = 0;
  private readonly idOf = new Map<IndexedValue, number>();
  /** Value by id, and how many documents hold it; an id no document holds any more is reused. */
  private readonly valueOfId: IndexedValue[] = [];
  private readonly refsOfId: number[] = [];
  /** Id → the one slot holding the value, or the slots holding it. */
  private readonly members: Array<number | number[]> = [];
  private readonly freeIds: number[] = [];
  private readonly numberOrder: ValueOrder;
  private readonly stringOrder: ValueOrder;
  /** Scope key (see `scopeKey`) → documents per value id, and how many documents the scope has here. */
  private readonly countsByScope = new Map<string, { byId: Int32Array; documents: number }>();
  /** The scope `add` counted in last, while it still has documents here (else it left `countsByScope`). */
  private lastCounts: { scope: string; counts: { byId: Int32Array; documents: number } } | undefined;

  constructor() {
    const valueOf = (id: number): IndexedValue => this.valueOfId[id]!;
    this.numberOrder = new ValueOrder(valueOf);
    this.stringOrder = new ValueOrder(valueOf);
  }

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
    const id = this.idOf.get(value);
    if (id !== undefined) this.forEachSlotOf(id, visit);
  }

  /** The ids of the values (of the bounds' type) within the bounds; either bound may be open, not both. */
  idsInRange(lower: RangeBound | undefined, upper: RangeBound | undefined): number[] {
    const kind = (lower ?? upper)!.value;
    return (typeof kind === 'number' ? this.numberOrder : this.stringOrder).idsInRange(lower, upper);
  }

  /** Number of documents holding one of these value ids (each holds a value once). */
  countOfIds(ids: readonly number[]): number {
    let total = 0;
    for (const id of ids) total += this.refsOfId[id]!;
    return total;
  }

  forEachSlotOf(id: number, visit: (slot: number) => void): void {
    const held = this.members[id];
    if (typeof held === 'number') {
      if (held !== NONE) visit(held);
    } else if (held !== undefined) {
      for (let i = 0; i < held.length; i++) visit(held[i]!);
    }
  }

  /** Counts per value of the documents in one scope (built when asked: facets over a whole scope). */
  countsIn(scope: string): ReadonlyMap<IndexedValue, number> | undefined {
    const counts = this.countsByScope.get(scope);
    if (!counts) return undefined;
    const out = new Map<IndexedValue, number>();
    const { byId } = counts;
    for (let id = 0; id < byId.length; id++) if (byId[id]! > 0) out.set(this.valueOfId[id]!, byId[id]!);
    return out;
  }

  /** Indexes the document in `slot` (which must not be indexed here yet) with these distinct values. */
  add(slot: number, values: readonly IndexedValue[], scope: string): void {
    if (values.length === 0) return;
    if (slot >= this.firstId.length) this.grow(slot + 1);
    const counts = this.scopeCounts(scope);
    for (let i = 0; i < values.length; i++) {
      const id = this.intern(values[i]!);
      const at = this.join(id, slot);
      if (i === 0) {
        this.firstId[slot] = id;
        this.firstAt[slot] = at;
      } else {
        let more = this.moreIds.get(slot);
        if (!more) this.moreIds.set(slot, (more = []));
        more.push(id);
      }
      if (id >= counts.byId.length) counts.byId = grown(counts.byId, id + 1);
      counts.byId[id]! += 1;
    }
    counts.documents += 1;
    this.count += 1;
  }

  /** Removes what `add` indexed for the slot. */
  remove(slot: number, scope: string): void {
    if (!this.hasValues(slot)) return;
    const first = this.firstId[slot]!;
    const more = this.moreIds.get(slot);
    this.leave(first, slot, this.firstAt[slot]!);
    if (more) for (const id of more) this.leave(id, slot, NONE);
    this.firstId[slot] = NONE;
    this.moreIds.delete(slot);
    this.count -= 1;
    const counts = this.countsByScope.get(scope);
    if (counts) {
      counts.byId[first]! -= 1;
      if (more) for (const id of more) counts.byId[id]! -= 1;
      counts.documents -= 1;
      if (counts.documents === 0) this.countsByScope.delete(scope);
    }
    this.release(first);
    if (more) for (const id of more) this.release(id);
  }

  private scopeCounts(scope: string): { byId: Int32Array; documents: number } {
    // A bulk load adds documents of one scope after another: the last one is kept at hand.
    const last = this.lastCounts;
    if (last !== undefined && last.scope === scope && last.counts.documents > 0) return last.counts;
    let counts = this.countsByScope.get(scope);
    if (!counts) {
      counts = { byId: new Int32Array(Math.max(16, this.valueOfId.length)), documents: 0 };
      this.countsByScope.set(scope, counts);
    }
    this.lastCounts = { scope, counts };
    return counts;
  }

  /** Puts the slot into the member list of the id; returns its position there. */
  private join(id: number, slot: number): number {
    const held = this.members[id]!;
    if (held === NONE) {
      this.members[id] = slot;
      return 0;
    }
    if (typeof held === 'number') {
      this.members[id] = [held, slot];
      return 1;
    }
    held.push(slot);
    return held.length - 1;
  }

  /** Takes the slot out of the id's member list; `at` is its position when known (else NONE). */
  private leave(id: number, slot: number, at: number): void {
    const held = this.members[id]!;
    if (typeof held === 'number') {
      this.members[id] = NONE;
      return;
    }
    const position = at === NONE ? held.indexOf(slot) : at;
    const last = held.pop()!;
    if (position >= held.length) return;
    // Swap: the last member takes the place; when it is its first value, its recorded place moves.
    held[position] = last;
    if (this.firstId[last] === id) this.firstAt[last] = position;
  }

  private grow(size: number): void {
    const capacity = Math.max(1024, this.firstId.length * 2, size);
    const firstId = new Int32Array(capacity).fill(NONE);
    firstId.set(this.firstId);
    this.firstId = firstId;
    const firstAt = new Int32Array(capacity);
    firstAt.set(this.firstAt);
    this.firstAt = firstAt;
  }

  private intern(value: IndexedValue): number {
    let id = this.idOf.get(value);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.valueOfId.length;
      this.valueOfId[id] = value;
      this.refsOfId[id] = 0;
      this.members[id] = NONE;
      this.idOf.set(value, id);
      (typeof value === 'number' ? this.numberOrder : this.stringOrder).insert(id);
    }
    this.refsOfId[id]! += 1;
    return id;
  }

  private release(id: number): void {
    this.refsOfId[id]! -= 1;
    if (this.refsOfId[id] !== 0) return;
    const value = this.valueOfId[id]!;
    (typeof value === 'number' ? this.numberOrder : this.stringOrder).delete(id);
    this.idOf.delete(value);
    this.members[id] = NONE;
    this.freeIds.push(id);
  }
}

function grown(array: Int32Array, size: number): Int32Array {
  const next = new Int32Array(Math.max(size, array.length * 2));
  next.set(array);
  return next;
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
