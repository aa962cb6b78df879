/**
 * Growable lists of numbers, one per owner (a term's postings, a document's term list), kept side by
 * side in one typed array: no array object per list for the garbage collector to visit or copy, and
 * the numbers themselves sit outside the JavaScript heap. A list that outgrows its room moves to the
 * end with twice the room; the room it leaves (and the room of a list let go) is counted, and the
 * lists are packed again once that waste is as large as the room in use, so the array holds at most
 * about twice what the lists need (four times while a list doubles).
 */
export class RangePool {
  values: Float64Array = new Float64Array(1024);
  /** [owner]: where its list starts in `values`, its length and its room. */
  start: Int32Array = new Int32Array(64);
  length: Int32Array = new Int32Array(64);
  room: Int32Array = new Int32Array(64);
  /** `values[0, used)` is handed out, `waste` of it to no list. */
  private used = 0;
  private waste = 0;
  /** Owners are below this (the arrays above have room for them). */
  private owners = 0;

  /** The owner's list as a view (valid until the pool next changes). */
  view(owner: number): Float64Array {
    if (owner >= this.owners) return this.values.subarray(0, 0);
    const start = this.start[owner]!;
    return this.values.subarray(start, start + this.length[owner]!);
  }

  lengthOf(owner: number): number {
    return owner < this.owners ? this.length[owner]! : 0;
  }

  /** The owner's `index`th number. */
  at(owner: number, index: number): number {
    return this.values[this.start[owner]! + index]!;
  }

  set(owner: number, index: number, value: number): void {
    this.values[this.start[owner]! + index] = value;
  }

  /** Appends a number to the owner's list (a new owner starts empty). */
  push(owner: number, value: number): void {
    this.reserve(owner, this.lengthOf(owner) + 1);
    this.values[this.start[owner]! + this.length[owner]!] = value;
    this.length[owner]! += 1;
  }

  /** Makes room for `size` numbers in the owner's list (its numbers kept). */
  reserve(owner: number, size: number): void {
    this.own(owner);
    const room = this.room[owner]!;
    if (size <= room) return;
    const next = Math.max(size, room * 2, 1);
    const at = this.allocate(next);
    // Read after allocate: packing the lists may have moved this one.
    const from = this.start[owner]!;
    const length = this.length[owner]!;
    this.values.copyWithin(at, from, from + length);
    this.waste += room;
    this.start[owner] = at;
    this.room[owner] = next;
  }

  /** Cuts the owner's list to `length` numbers (its room stays). */
  truncate(owner: number, length: number): void {
    this.length[owner] = length;
  }

  /** Lets go of the owner's list and its room. */
  release(owner: number): void {
    if (owner >= this.owners) return;
    this.waste += this.room[owner]!;
    this.start[owner] = 0;
    this.length[owner] = 0;
    this.room[owner] = 0;
  }

  private own(owner: number): void {
    if (owner < this.owners) return;
    if (owner >= this.start.length) {
      const size = Math.max(owner + 1, this.start.length * 2);
      this.start = grown(this.start, size);
      this.length = grown(this.length, size);
      this.room = grown(this.room, size);
    }
    this.owners = owner + 1;
  }

  /** `size` numbers of room at the end: the lists packed first when the waste is as large as the rest. */
  private allocate(size: number): number {
    if (this.used + size > this.values.length) {
      const live = this.used - this.waste;
      if (this.waste >= live) this.pack(Math.max(this.values.length, (live + size) * 2));
      else {
        const values = new Float64Array(Math.max(this.used + size, this.values.length * 2));
        values.set(this.values.subarray(0, this.used));
        this.values = values;
      }
    }
    const at = this.used;
    this.used += size;
    return at;
  }

  /** Copies every list (with its room) into a new array of `capacity`, in owner order. */
  private pack(capacity: number): void {
    const values = new Float64Array(Math.max(capacity, 1024));
    let at = 0;
    for (let owner = 0; owner < this.owners; owner++) {
      const room = this.room[owner]!;
      if (room === 0) continue;
      const from = this.start[owner]!;
      values.set(this.values.subarray(from, from + this.length[owner]!), at);
      this.start[owner] = at;
      at += room;
    }
    this.values = values;
    this.used = at;
    this.waste = 0;
  }
}

function grown(array: Int32Array, size: number): Int32Array {
  const next = new Int32Array(size);
  next.set(array);
  return next;
}
