/** Largest chunk before it is split: keeps an insert or delete to a short splice at any size. */
const MAX_CHUNK = 512;

export type IndexedValue = string | number;

/** One end of a range: the bound value and whether it is included. */
export interface RangeBound<V extends IndexedValue> {
  value: V;
  inclusive: boolean;
}

interface Chunk<V> {
  values: V[];
  slots: number[];
}

function compare<V extends IndexedValue>(a: V, b: V): number {
  if (typeof a === 'number') return a - (b as number);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * (value, slot) pairs kept sorted by value (numbers numerically, strings by code units) and then by
 * slot, for range conditions. Stored as a list of sorted chunks so that an insert or a delete is a
 * binary search and a short splice whatever the size (see SortedStrings for the same idea).
 */
export class SortedValueSlots<V extends IndexedValue> {
  private readonly chunks: Chunk<V>[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(value: V, slot: number): void {
    if (this.chunks.length === 0) {
      this.chunks.push({ values: [value], slots: [slot] });
      this.count = 1;
      return;
    }
    const chunkIndex = Math.min(this.chunkAtOrAfter(value, slot), this.chunks.length - 1);
    const chunk = this.chunks[chunkIndex]!;
    const position = this.positionIn(chunk, value, slot);
    chunk.values.splice(position, 0, value);
    chunk.slots.splice(position, 0, slot);
    this.count++;
    if (chunk.values.length > MAX_CHUNK) {
      const half = chunk.values.length >>> 1;
      this.chunks.splice(
        chunkIndex,
        1,
        { values: chunk.values.slice(0, half), slots: chunk.slots.slice(0, half) },
        { values: chunk.values.slice(half), slots: chunk.slots.slice(half) },
      );
    }
  }

  /** Removes the pair; false when it was not there. */
  delete(value: V, slot: number): boolean {
    const chunkIndex = this.chunkAtOrAfter(value, slot);
    const chunk = this.chunks[chunkIndex];
    if (chunk === undefined) return false;
    const position = this.positionIn(chunk, value, slot);
    if (position >= chunk.values.length || chunk.slots[position] !== slot || compare(chunk.values[position]!, value) !== 0) return false;
    chunk.values.splice(position, 1);
    chunk.slots.splice(position, 1);
    this.count--;
    if (chunk.values.length === 0) this.chunks.splice(chunkIndex, 1);
    return true;
  }

  /** Calls `visit` with the slot of every pair whose value lies within the bounds (either may be open). */
  forEachInRange(lower: RangeBound<V> | undefined, upper: RangeBound<V> | undefined, visit: (slot: number) => void): void {
    let [chunkIndex, position] = this.start(lower);
    for (; chunkIndex < this.chunks.length; chunkIndex++, position = 0) {
      const { values, slots } = this.chunks[chunkIndex]!;
      for (; position < values.length; position++) {
        if (upper && !withinUpper(values[position]!, upper)) return;
        visit(slots[position]!);
      }
    }
  }

  /** Number of pairs within the bounds, counting whole chunks at once. */
  countInRange(lower: RangeBound<V> | undefined, upper: RangeBound<V> | undefined): number {
    let [chunkIndex, position] = this.start(lower);
    let total = 0;
    for (; chunkIndex < this.chunks.length; chunkIndex++, position = 0) {
      const { values } = this.chunks[chunkIndex]!;
      if (!upper || withinUpper(values[values.length - 1]!, upper)) {
        total += values.length - position;
        continue;
      }
      for (; position < values.length && withinUpper(values[position]!, upper); position++) total++;
      return total;
    }
    return total;
  }

  /** Chunk index and position of the first pair at or above the lower bound. */
  private start(lower: RangeBound<V> | undefined): [number, number] {
    if (!lower) return [0, 0];
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const values = this.chunks[middle]!.values;
      if (!withinLower(values[values.length - 1]!, lower)) low = middle + 1;
      else high = middle;
    }
    if (low >= this.chunks.length) return [low, 0];
    const values = this.chunks[low]!.values;
    let from = 0;
    let to = values.length;
    while (from < to) {
      const middle = (from + to) >>> 1;
      if (!withinLower(values[middle]!, lower)) from = middle + 1;
      else to = middle;
    }
    return [low, from];
  }

  /** First chunk whose last pair is >= (value, slot); chunks.length when none. */
  private chunkAtOrAfter(value: V, slot: number): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      const last = chunk.values.length - 1;
      const order = compare(chunk.values[last]!, value) || chunk.slots[last]! - slot;
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** First position in the chunk whose pair is >= (value, slot). */
  private positionIn(chunk: Chunk<V>, value: V, slot: number): number {
    let low = 0;
    let high = chunk.values.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = compare(chunk.values[middle]!, value) || chunk.slots[middle]! - slot;
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function withinLower<V extends IndexedValue>(value: V, lower: RangeBound<V>): boolean {
  const order = compare(value, lower.value);
  return lower.inclusive ? order >= 0 : order > 0;
}

function withinUpper<V extends IndexedValue>(value: V, upper: RangeBound<V>): boolean {
  const order = compare(value, upper.value);
  return upper.inclusive ? order <= 0 : order < 0;
}
