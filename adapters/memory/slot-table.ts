import { SortedStrings } from './sorted-strings';

/** Gap between neighbouring ranks after a relabel. */
const RANK_STEP = 2 ** 20;

/**
 * Documents in numbered slots (reused after removal), with what every query reads per slot kept in
 * typed arrays: removed flag, entity type id, and a rank that orders slots like their URNs (code
 * units). Ranks turn "the first 20 URNs of 50,000 matches" into number comparisons: a new URN takes
 * the midpoint of its neighbours' ranks, and when doubles run out of room between two neighbours
 * every rank is renumbered in URN order (O(n), rare).
 */
export class SlotTable {
  readonly slotOf = new Map<string, number>();
  /** The URN of each slot (undefined when free): nothing else of a document is kept here. */
  readonly urns: Array<string | undefined> = [];
  removed = new Uint8Array(1024);
  typeId = new Int32Array(1024);
  rank = new Float64Array(1024);
  /** Generation marks for evaluations (see `nextMark`). */
  marks = new Int32Array(1024);
  readonly allUrns = new SortedStrings();
  readonly urnsByType = new Map<string, SortedStrings>();
  /** Slots by entity type id. */
  readonly typeSlots: Array<Set<number>> = [];
  private readonly typeIds = new Map<string, number>();
  readonly typeNames: string[] = [];
  private readonly freeSlots: number[] = [];
  private generation = 0;
  /** New slots whose URN is in the orders but not ranked yet (see `settle`). */
  private unranked: number[] = [];

  /** The id of an entity type, created on first use. */
  typeIdOf(entityType: string): number {
    let id = this.typeIds.get(entityType);
    if (id === undefined) {
      id = this.typeNames.length;
      this.typeIds.set(entityType, id);
      this.typeNames.push(entityType);
      this.typeSlots.push(new Set());
    }
    return id;
  }

  /** The id of an entity type when some document ever had it. */
  knownTypeId(entityType: string): number | undefined {
    return this.typeIds.get(entityType);
  }

  /** A fresh mark value: slots with `marks[slot] === mark` were taken by the current evaluation. */
  nextMark(): number {
    this.generation += 1;
    if (this.generation === 0x7fffffff) {
      this.marks.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }

  /**
   * Places a document: a new slot for a new URN, the same slot (and rank) for a replacement. `known`:
   * the URN's slot as the caller just read it from `slotOf` (null: it has none), to spare a lookup.
   */
  put(document: { readonly urn: string; readonly entityType: string; readonly removed: boolean }, known?: number | null): number {
    let slot = known === undefined ? this.slotOf.get(document.urn) : (known ?? undefined);
    const isNew = slot === undefined;
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.urns.length;
      this.slotOf.set(document.urn, slot);
      this.ensureCapacity(slot + 1);
    }
    const type = this.typeIdOf(document.entityType);
    this.urns[slot] = document.urn;
    this.removed[slot] = document.removed ? 1 : 0;
    this.typeId[slot] = type;
    this.typeSlots[type]!.add(slot);
    let byType = this.urnsByType.get(document.entityType);
    if (!byType) {
      byType = new SortedStrings();
      this.urnsByType.set(document.entityType, byType);
    }
    // The URN was absent from both orders (a replacement was unplaced first): placed when next read.
    byType.addLater(document.urn);
    if (isNew) {
      this.allUrns.addLater(document.urn);
      this.rank[slot] = Number.NaN;
      this.unranked.push(slot);
    }
    return slot;
  }

  /**
   * Ranks the slots placed since the last read: one by one when few (each between its neighbours),
   * else every rank at once in URN order, so a bulk load sorts its URNs once instead of placing each
   * with a binary search of long, alike strings. Every reader of `rank` calls this first.
   */
  settle(): void {
    const { unranked } = this;
    if (unranked.length === 0) return;
    this.unranked = [];
    if (unranked.length * 16 >= this.allUrns.size - unranked.length) {
      this.relabel();
      return;
    }
    // Ascending, so the neighbour below is always ranked; one above may still wait (skipped).
    const urns = this.urns;
    unranked.sort((a, b) => (urns[a]! < urns[b]! ? -1 : urns[a]! > urns[b]! ? 1 : 0));
    for (const slot of unranked) if (!this.assignRank(slot, urns[slot]!)) return;
  }

  /** Takes a document out of the per-type structures (before `put` of its replacement, or for good). */
  unplace(slot: number): void {
    const urn = this.urns[slot];
    if (urn === undefined) return;
    const type = this.typeId[slot]!;
    this.typeSlots[type]!.delete(slot);
    const entityType = this.typeNames[type]!;
    const byType = this.urnsByType.get(entityType);
    byType?.delete(urn);
    if (byType?.size === 0) this.urnsByType.delete(entityType);
  }

  /** Removes the document of a URN for good; its slot is reused later. */
  remove(urn: string): void {
    const slot = this.slotOf.get(urn);
    if (slot === undefined) return;
    this.settle();
    this.unplace(slot);
    this.slotOf.delete(urn);
    this.allUrns.delete(urn);
    this.urns[slot] = undefined;
    this.freeSlots.push(slot);
  }

  /** The rank below which every URN is <= `urn` (the rank of `urn`, or of the largest URN before it). */
  rankAtOrBefore(urn: string): number {
    this.settle();
    const slot = this.slotOf.get(urn);
    if (slot !== undefined) return this.rank[slot]!;
    const before = this.allUrns.atOrBefore(urn);
    return before === undefined ? Number.NEGATIVE_INFINITY : this.rank[this.slotOf.get(before)!]!;
  }

  /** Ranks one slot between its ranked neighbours; false when every rank was renumbered instead. */
  private assignRank(slot: number, urn: string): boolean {
    const [below, aboveNext] = this.allUrns.neighbours(urn);
    let above = aboveNext;
    let high: number | undefined;
    while (above !== undefined) {
      high = this.rank[this.slotOf.get(above)!]!;
      if (!Number.isNaN(high)) break;
      high = undefined;
      above = this.allUrns.neighbours(above)[1];
    }
    const low = below === undefined ? undefined : this.rank[this.slotOf.get(below)!]!;
    let rank: number;
    if (low === undefined && high === undefined) rank = 0;
    else if (low === undefined) rank = high! - RANK_STEP;
    else if (high === undefined) rank = low + RANK_STEP;
    else rank = low + (high - low) / 2;
    if ((low !== undefined && rank <= low) || (high !== undefined && rank >= high) || !Number.isFinite(rank)) {
      this.relabel();
      return false;
    }
    this.rank[slot] = rank;
    return true;
  }

  /** Renumbers every rank in URN order. */
  private relabel(): void {
    let next = 0;
    for (const urn of this.allUrns.valuesAfter(undefined)) {
      this.rank[this.slotOf.get(urn)!] = next;
      next += RANK_STEP;
    }
  }

  private ensureCapacity(size: number): void {
    if (size <= this.removed.length) return;
    const capacity = Math.max(size, this.removed.length * 2);
    const grow = <T extends Uint8Array | Int32Array | Float64Array>(array: T, make: (n: number) => T): T => {
      const grown = make(capacity);
      grown.set(array);
      return grown;
    };
    this.removed = grow(this.removed, (n) => new Uint8Array(n));
    this.typeId = grow(this.typeId, (n) => new Int32Array(n));
    this.rank = grow(this.rank, (n) => new Float64Array(n));
    this.marks = grow(this.marks, (n) => new Int32Array(n));
  }
}
