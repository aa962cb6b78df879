/** Marks in a walk's record (never equal to a JSON value). */
const OBJECT = Symbol('object');
const ARRAY = Symbol('array');
const END = Symbol('end');

/**
 * A JSON document as the sequence of what a walk meets (object and array marks, keys, leaves), kept to
 * tell whether a later document has the same JSON text: one pass, comparing as it goes, nothing written
 * out. A member whose value is undefined is no member (as JSON drops it); an object that is not plain
 * (a toJSON, a class) never matches.
 */
export class WalkedJson {
  private readonly record: unknown[] = [];
  private at = 0;

  constructor(value: unknown) {
    this.walk(value, true);
  }

  /** Whether `value` has the JSON text of the recorded document (the record ends with its outermost value). */
  matches(value: unknown): boolean {
    this.at = 0;
    return this.walk(value, false);
  }

  /** Records `value` (`recording`) or compares it with the record from `at` on. */
  private walk(value: unknown, recording: boolean): boolean {
    if (typeof value !== 'object' || value === null) return this.meet(value, recording);
    if (Array.isArray(value)) {
      if (!this.meet(ARRAY, recording) || !this.meet(value.length, recording)) return false;
      for (let i = 0; i < value.length; i++) if (!this.walk(value[i], recording)) return false;
      return true;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      // Recorded as a value no later document equals: it is packed again each time.
      return recording ? this.meet(Symbol('opaque'), true) : false;
    }
    if (!this.meet(OBJECT, recording)) return false;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const member = (value as Record<string, unknown>)[key];
      if (member === undefined) continue;
      if (!this.meet(key, recording) || !this.walk(member, recording)) return false;
    }
    return this.meet(END, recording);
  }

  private meet(token: unknown, recording: boolean): boolean {
    if (recording) {
      this.record.push(token);
      return true;
    }
    return this.record[this.at++] === token;
  }
}
