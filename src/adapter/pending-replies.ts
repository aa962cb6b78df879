/**
 * Requests sent to another thread (or connection) and waiting for their replies, by the increasing
 * number each was sent with. Replies come back mostly in the order the requests went, so the oldest
 * entry is found first; one that comes out of order is looked up among those waiting.
 *
 * Not a `Map`, on purpose. A long-lived Map that gains and loses an entry per request rehashes into a
 * new table every few requests, and V8 leaves each old table pointing at the new one and at the
 * entries it held (for iterators that were walking it). Once one of those tables has reached the old
 * generation, the chain of its successors keeps every entry they ever held (here: each request's
 * callbacks, and through them the whole request) alive through every young-generation collection,
 * promoted, until a full collection. Under steady load that made each young-generation collection of
 * the SQLite adapter's host copy megabytes, a pause of 5–10 ms on the event loop. Two plain arrays,
 * whose slots are cleared as replies are taken, hold nothing once a reply is in.
 */
export class PendingReplies<T> {
  private ids: number[] = [];
  private values: Array<T | undefined> = [];
  /** The first slot that may still wait (those before it are taken). */
  private head = 0;
  private count = 0;

  /** How many requests wait for their replies. */
  get size(): number {
    return this.count;
  }

  /** Records a request; `id` is greater than that of every request added before it. */
  add(id: number, value: T): void {
    const last = this.ids.length > this.head ? this.ids[this.ids.length - 1]! : -Infinity;
    if (!(id > last)) throw new Error(`internal: reply ids must increase (${id} after ${last})`);
    this.ids.push(id);
    this.values.push(value);
    this.count++;
  }

  /** Takes the request waiting under `id` (undefined when none does: answered already, or never sent). */
  take(id: number): T | undefined {
    let at = this.head;
    if (this.ids[at] !== id) {
      at = this.indexOf(id);
      if (at < 0) return undefined;
    }
    const value = this.values[at];
    if (value === undefined) return undefined;
    this.values[at] = undefined;
    this.count--;
    while (this.head < this.ids.length && this.values[this.head] === undefined) this.head++;
    this.compact();
    return value;
  }

  /** Takes every request still waiting, oldest first (the other side was lost: each gets its failure). */
  drain(): T[] {
    const waiting: T[] = [];
    for (let i = this.head; i < this.values.length; i++) {
      const value = this.values[i];
      if (value !== undefined) waiting.push(value);
    }
    this.ids = [];
    this.values = [];
    this.head = 0;
    this.count = 0;
    return waiting;
  }

  /** Binary search among the slots from `head` (ids increase). */
  private indexOf(id: number): number {
    let low = this.head;
    let high = this.ids.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const found = this.ids[middle]!;
      if (found === id) return middle;
      if (found < id) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** Drops the taken slots at the front: all of them when nothing waits, else once they are the larger part. */
  private compact(): void {
    if (this.count === 0) {
      this.ids = [];
      this.values = [];
      this.head = 0;
    } else if (this.head >= 64 && this.head * 2 >= this.ids.length) {
      this.ids = this.ids.slice(this.head);
      this.values = this.values.slice(this.head);
      this.head = 0;
    }
  }
}
