/** Largest chunk before it is split: keeps an insert or delete to a short splice at any size. */
const MAX_CHUNK = 512;

export type IndexedValue = string | number;

/** One end of a range: the bound value and whether it is included. */
export interface RangeBound {
  value: IndexedValue;
  inclusive: boolean;
}

/** Numbers numerically, strings by code units (the two are kept in different orders). */
function compare(a: IndexedValue, b: IndexedValue): number {
  if (typeof a === 'number') return a - (b as number);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The value ids of one field and one value type, in value order, for range conditions. Only the
 * distinct values are ordered (a document with a value seen before changes nothing here). Stored
 * as a list of sorted chunks so that an insert or a delete is a binary search and a short splice
 * whatever the size (see SortedStrings for the same idea). New ids wait in a list until a range or
 * a delete needs the order: a bulk load of names or ids (a new value per document) sorts them once
 * instead of placing each.
 */
export class ValueOrder {
  /** Non-empty, each ascending by value, every value of a chunk below every value of the next. */
  private chunks: number[][] = [];
  private count = 0;
  /** Ids inserted since the order was last brought up to date, in no order. */
  private pending: number[] = [];

  constructor(private readonly valueOf: (id: number) => IndexedValue) {}

  insert(id: number): void {
    this.pending.push(id);
  }

  /** Places the waiting ids: one by one when few, else by one merge of everything. */
  private settle(): void {
    const { pending } = this;
    if (pending.length === 0) return;
    this.pending = [];
    const byValue = (a: number, b: number): number => compare(this.valueOf(a), this.valueOf(b));
    if (pending.length * 16 < this.count) {
      for (const id of pending) this.place(id);
      return;
    }
    pending.sort(byValue);
    const merged: number[] = [];
    let i = 0;
    for (const chunk of this.chunks) {
      for (const id of chunk) {
        while (i < pending.length && byValue(pending[i]!, id) < 0) merged.push(pending[i++]!);
        merged.push(id);
      }
    }
    while (i < pending.length) merged.push(pending[i++]!);
    this.chunks = [];
    for (let from = 0; from < merged.length; from += MAX_CHUNK / 2) this.chunks.push(merged.slice(from, from + MAX_CHUNK / 2));
    this.count = merged.length;
  }

  private place(id: number): void {
    this.count++;
    const value = this.valueOf(id);
    if (this.chunks.length === 0) {
      this.chunks.push([id]);
      return;
    }
    const chunkIndex = Math.min(this.chunkAtOrAfter(value), this.chunks.length - 1);
    const chunk = this.chunks[chunkIndex]!;
    chunk.splice(this.positionIn(chunk, value), 0, id);
    if (chunk.length > MAX_CHUNK) this.chunks.splice(chunkIndex, 1, chunk.slice(0, chunk.length >>> 1), chunk.slice(chunk.length >>> 1));
  }

  /** Removes the id (its value must still be the one it was inserted with). */
  delete(id: number): void {
    this.settle();
    const value = this.valueOf(id);
    const chunkIndex = this.chunkAtOrAfter(value);
    const chunk = this.chunks[chunkIndex];
    if (chunk === undefined) return;
    const position = this.positionIn(chunk, value);
    if (chunk[position] !== id) return;
    chunk.splice(position, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(chunkIndex, 1);
  }

  /** The ids whose values lie within the bounds (either may be open), ascending by value. */
  idsInRange(lower: RangeBound | undefined, upper: RangeBound | undefined): number[] {
    this.settle();
    const ids: number[] = [];
    let [chunkIndex, position] = this.start(lower);
    for (; chunkIndex < this.chunks.length; chunkIndex++, position = 0) {
      const chunk = this.chunks[chunkIndex]!;
      for (; position < chunk.length; position++) {
        const id = chunk[position]!;
        if (upper && !withinUpper(this.valueOf(id), upper)) return ids;
        ids.push(id);
      }
    }
    return ids;
  }

  /** Chunk index and position of the first id whose value is at or above the lower bound. */
  private start(lower: RangeBound | undefined): [number, number] {
    if (!lower) return [0, 0];
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (!withinLower(this.valueOf(chunk[chunk.length - 1]!), lower)) low = middle + 1;
      else high = middle;
    }
    if (low >= this.chunks.length) return [low, 0];
    const chunk = this.chunks[low]!;
    let from = 0;
    let to = chunk.length;
    while (from < to) {
      const middle = (from + to) >>> 1;
      if (!withinLower(this.valueOf(chunk[middle]!), lower)) from = middle + 1;
      else to = middle;
    }
    return [low, from];
  }

  /** First chunk whose last value is >= value; chunks.length when none. */
  private chunkAtOrAfter(value: IndexedValue): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (compare(this.valueOf(chunk[chunk.length - 1]!), value) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** First position in the chunk whose value is >= value. */
  private positionIn(chunk: readonly number[], value: IndexedValue): number {
    let low = 0;
    let high = chunk.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(this.valueOf(chunk[middle]!), value) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function withinLower(value: IndexedValue, lower: RangeBound): boolean {
  const order = compare(value, lower.value);
  return lower.inclusive ? order >= 0 : order > 0;
}

function withinUpper(value: IndexedValue, upper: RangeBound): boolean {
  const order = compare(value, upper.value);
  return upper.inclusive ? order <= 0 : order < 0;
}
