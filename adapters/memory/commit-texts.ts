/**
 * The JSON texts of the aspect values one commit stored, by the value object they were written from:
 * the change events of the same commit carry the very same objects, and take the stored text instead
 * of writing the value out again (changes.ts). The domain lists the events in the order it wrote the
 * aspects, so the next event's value is nearly always the next one stored: a cursor finds it with one
 * comparison, with no hash per object; a value met out of order is looked up in a map built then (and
 * the cursor goes on from there). Nobody changes a value while the commit runs, so an object stored
 * twice has the same text both times. Lives for one commit.
 */
export class CommitTexts {
  private readonly values: object[] = [];
  private readonly texts: string[] = [];
  private next = 0;
  private positions: Map<object, number> | undefined;

  /** Remembers the text stored for `value`. */
  add(value: object, text: string): void {
    this.positions?.set(value, this.values.length);
    this.values.push(value);
    this.texts.push(text);
  }

  /** The text stored for this very object in this commit, if any. */
  textOf(value: object): string | undefined {
    let at = this.next;
    if (at >= this.values.length || this.values[at] !== value) {
      if (this.positions === undefined) {
        this.positions = new Map();
        this.values.forEach((stored, i) => this.positions!.set(stored, i));
      }
      const found = this.positions.get(value);
      if (found === undefined) return undefined;
      at = found;
    }
    this.next = at + 1;
    return this.texts[at];
  }
}
