/**
 * The tokens a full-text index has seen (fulltext.ts), looked up by the characters of the text they
 * occur in: scanning a field value finds each token's entry without cutting the token out as a
 * string, and the entry says which index term it stands for (by the term's id in the vocabulary).
 * Only a token seen for the first time is cut out (once) and run through the analyzer. An open
 * addressing hash table over typed arrays: no object per token either. Bounded: cleared when full.
 */

/** Entries kept before the table is cleared (the vocabulary of catalog text is a few ten thousand words). */
const ENTRY_LIMIT = 1 << 16;
/** Entries room is made for at first; doubled as tokens come (an index of a few documents stays small). */
const INITIAL_ENTRIES = 1 << 10;
/** `termIds` of an entry whose term was not looked up in the vocabulary yet. */
export const UNRESOLVED = -1;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** What a scan reports for each token: its entry, to read its term and remembered term id. */
export type TokenVisitor = (entry: number) => void;

export class TokenTable {
  /** Slot → entry + 1 (0: empty): a power of two of slots, at most half of them used. */
  private slots = new Int32Array(INITIAL_ENTRIES * 2);
  /** Slot → the token's hash (compared before the characters). */
  private hashes = new Int32Array(INITIAL_ENTRIES * 2);
  private mask = INITIAL_ENTRIES * 2 - 1;
  /** Entry → its token (lower-case), its index term (null: dropped). */
  private readonly tokens: string[] = [];
  readonly terms: Array<string | null> = [];
  /** Entry → the term's id when last resolved, with the vocabulary's generation of that id then. */
  termIds = new Int32Array(INITIAL_ENTRIES).fill(UNRESOLVED);
  generations = new Int32Array(INITIAL_ENTRIES);

  constructor(private readonly termOfToken: (token: string) => string | null) {}

  get size(): number {
    return this.tokens.length;
  }

  /**
   * Calls `visit` with the entry of each token of an ASCII `text`: the runs of letters and digits,
   * lower-cased (what `tokenize` returns for ASCII text). The caller checked that the text is ASCII.
   */
  scanAscii(text: string, visit: TokenVisitor): void {
    const length = text.length;
    let i = 0;
    while (i < length) {
      let code = text.charCodeAt(i);
      if (!isWordCode(code)) {
        i++;
        continue;
      }
      const start = i;
      let hash = FNV_OFFSET;
      do {
        if (code >= 65 && code <= 90) code += 32;
        hash = Math.imul(hash ^ code, FNV_PRIME);
        i++;
        code = i < length ? text.charCodeAt(i) : 0;
      } while (i < length && isWordCode(code));
      visit(this.find(text, start, i, hash, true));
    }
  }

  /** The entry of a token given as a string (already folded: the non-ASCII path). */
  entryOf(token: string): number {
    let hash = FNV_OFFSET;
    for (let i = 0; i < token.length; i++) hash = Math.imul(hash ^ token.charCodeAt(i), FNV_PRIME);
    return this.find(token, 0, token.length, hash, false);
  }

  private find(text: string, start: number, end: number, hash: number, fold: boolean): number {
    const length = end - start;
    let slot = hash & this.mask;
    for (;;) {
      const stored = this.slots[slot]!;
      if (stored === 0) break;
      if (this.hashes[slot] === hash) {
        const token = this.tokens[stored - 1]!;
        if (token.length === length && sameChars(token, text, start, fold)) return stored - 1;
      }
      slot = (slot + 1) & this.mask;
    }
    // First sight: cut the token out once and ask the analyzer what it stands for.
    if (this.tokens.length === this.termIds.length) {
      if (this.tokens.length >= ENTRY_LIMIT) this.clear();
      else this.grow();
      return this.find(text, start, end, hash, fold);
    }
    const raw = text.slice(start, end);
    const token = fold ? raw.toLowerCase() : raw;
    const entry = this.tokens.length;
    this.tokens.push(token);
    this.terms.push(this.termOfToken(token));
    this.termIds[entry] = UNRESOLVED;
    this.slots[slot] = entry + 1;
    this.hashes[slot] = hash;
    return entry;
  }

  private clear(): void {
    this.slots.fill(0);
    this.tokens.length = 0;
    this.terms.length = 0;
  }

  /** Twice the room: the entries keep their numbers, the slots are filled again from the hashes. */
  private grow(): void {
    const entries = this.termIds.length * 2;
    const termIds = new Int32Array(entries).fill(UNRESOLVED);
    termIds.set(this.termIds);
    this.termIds = termIds;
    const generations = new Int32Array(entries);
    generations.set(this.generations);
    this.generations = generations;
    const oldSlots = this.slots;
    const oldHashes = this.hashes;
    this.slots = new Int32Array(entries * 2);
    this.hashes = new Int32Array(entries * 2);
    this.mask = entries * 2 - 1;
    for (let i = 0; i < oldSlots.length; i++) {
      const stored = oldSlots[i]!;
      if (stored === 0) continue;
      const hash = oldHashes[i]!;
      let slot = hash & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = stored;
      this.hashes[slot] = hash;
    }
  }
}

function isWordCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
}

/** Whether `token` (lower-case) equals text[start, start + token.length), folding upper-case ASCII when `fold`. */
function sameChars(token: string, text: string, start: number, fold: boolean): boolean {
  for (let i = 0; i < token.length; i++) {
    let code = text.charCodeAt(start + i);
    if (fold && code >= 65 && code <= 90) code += 32;
    if (code !== token.charCodeAt(i)) return false;
  }
  return true;
}
