/** Largest chunk before it is split: keeps an insert or delete to a short splice at any size. */
const MAX_CHUNK = 512;

/**
 * A set of strings kept in code-unit order (`<`, the order of SQLite's BINARY collation, not
 * `localeCompare`), so that keyset pages start with a binary search instead of a sort.
 *
 * Stored as a list of sorted chunks rather than one array: one array would make every insert and
 * delete move up to all elements (about 5·10⁹ moves to insert 100k URNs in random order).
 */
export class SortedStrings {
  /** Non-empty, each sorted, and every value of a chunk below every value of the next. */
  private chunks: string[][] = [];
  private count = 0;
  /** Values added with `addLater`, not placed yet (see `settle`). */
  private pending: string[] = [];

  get size(): number {
    return this.count + this.pending.length;
  }

  /**
   * Adds a value the caller knows is absent; its place is found when the order is next read, so a
   * bulk load of new URNs sorts them once instead of placing each.
   */
  addLater(value: string): void {
    this.pending.push(value);
  }

  /** Places the values added later: one by one when few, else by one merge of everything. */
  private settle(): void {
    const { pending } = this;
    if (pending.length === 0) return;
    this.pending = [];
    if (pending.length * 16 < this.count) {
      for (const value of pending) this.add(value);
      return;
    }
    pending.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const merged: string[] = [];
    let i = 0;
    for (const chunk of this.chunks) {
      for (const value of chunk) {
        while (i < pending.length && pending[i]! < value) merged.push(pending[i++]!);
        merged.push(value);
      }
    }
    while (i < pending.length) merged.push(pending[i++]!);
    this.chunks = [];
    for (let from = 0; from < merged.length; from += MAX_CHUNK / 2) this.chunks.push(merged.slice(from, from + MAX_CHUNK / 2));
    this.count = merged.length;
  }

  /** Adds the value; false when it was there already. */
  add(value: string): boolean {
    this.settle();
    if (this.chunks.length === 0) {
      this.chunks.push([value]);
      this.count = 1;
      return true;
    }
    const chunkIndex = Math.min(this.chunkAtOrAfter(value), this.chunks.length - 1);
    const chunk = this.chunks[chunkIndex]!;
    const position = lowerBound(chunk, value);
    if (chunk[position] === value) return false;
    chunk.splice(position, 0, value);
    this.count++;
    if (chunk.length > MAX_CHUNK) this.chunks.splice(chunkIndex, 1, chunk.slice(0, chunk.length >>> 1), chunk.slice(chunk.length >>> 1));
    return true;
  }

  /** Removes the value; false when it was not there. */
  delete(value: string): boolean {
    this.settle();
    const chunkIndex = this.chunkAtOrAfter(value);
    const chunk = this.chunks[chunkIndex];
    if (chunk === undefined) return false;
    const position = lowerBound(chunk, value);
    if (chunk[position] !== value) return false;
    chunk.splice(position, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(chunkIndex, 1);
    return true;
  }

  /** The values greater than `after` (all when undefined), ascending. Do not change the set while iterating. */
  *valuesAfter(after: string | undefined): Generator<string> {
    this.settle();
    let chunkIndex = after === undefined ? 0 : this.chunkAfter(after);
    let position = after === undefined || chunkIndex >= this.chunks.length ? 0 : upperBound(this.chunks[chunkIndex]!, after);
    for (; chunkIndex < this.chunks.length; chunkIndex++, position = 0) {
      const chunk = this.chunks[chunkIndex]!;
      for (; position < chunk.length; position++) yield chunk[position]!;
    }
  }

  /** Up to `limit` values greater than `after`, ascending. */
  pageAfter(after: string | undefined, limit: number): string[] {
    const page: string[] = [];
    if (limit <= 0) return page;
    for (const value of this.valuesAfter(after)) {
      page.push(value);
      if (page.length >= limit) break;
    }
    return page;
  }

  /** The largest value <= `value`, or undefined when every value is greater. */
  atOrBefore(value: string): string | undefined {
    this.settle();
    const chunkIndex = this.chunkAfter(value);
    // Every value of chunks before chunkIndex is <= value; inside chunkIndex, look for the boundary.
    const chunk = this.chunks[chunkIndex];
    if (chunk !== undefined) {
      const position = upperBound(chunk, value);
      if (position > 0) return chunk[position - 1];
    }
    const previous = this.chunks[chunkIndex - 1];
    return previous === undefined ? undefined : previous[previous.length - 1];
  }

  /** The value just below and just above `value` (which need not be in the set). */
  neighbours(value: string): [string | undefined, string | undefined] {
    this.settle();
    const chunkIndex = this.chunkAtOrAfter(value);
    const chunk = this.chunks[chunkIndex];
    let below: string | undefined;
    let above: string | undefined;
    if (chunk !== undefined) {
      const position = lowerBound(chunk, value);
      below = position > 0 ? chunk[position - 1] : this.lastOf(chunkIndex - 1);
      const next = chunk[position] === value ? position + 1 : position;
      above = next < chunk.length ? chunk[next] : this.chunks[chunkIndex + 1]?.[0];
    } else {
      below = this.lastOf(this.chunks.length - 1);
    }
    return [below, above];
  }

  private lastOf(chunkIndex: number): string | undefined {
    const chunk = this.chunks[chunkIndex];
    return chunk === undefined ? undefined : chunk[chunk.length - 1];
  }

  /** Index of the first chunk whose last value is >= `value` (chunks.length when none). */
  private chunkAtOrAfter(value: string): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (chunk[chunk.length - 1]! < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Index of the first chunk whose last value is > `value` (chunks.length when none). */
  private chunkAfter(value: string): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (chunk[chunk.length - 1]! <= value) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** First position whose value is >= `value`. */
function lowerBound(values: readonly string[], value: string): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** First position whose value is > `value`. */
function upperBound(values: readonly string[], value: string): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}
