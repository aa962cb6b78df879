/**
 * The tokens a full-text index has seen (fulltext.ts), looked up by the characters of the text they
 * occur in: scanning a field value finds each token's entry without cutting the token out as a
 * string, and the entry says which index term it stands for (by the term's id in the vocabulary).
 * Only a token seen for the first time is cut out (once) and run through the analyzer. An open
 * addressing hash table over typed arrays: no object per token either. Bounded: cleared when full.
 *
 * Each entry is one record of `RESOLUTION_STRIDE` numbers (64 bytes, about a cache line) holding what
 * a token's every occurrence reads: its term id as last resolved, and the token's characters when
 * short (nearly every word). Finding a known token reads its slot and its record and nothing else:
 * with the characters in the token's string and the term id in another array, each token of a bulk
 * load cost four or five reads from all over memory, most of them cache misses.
 */

/** Entries kept before the table is cleared (the vocabulary of catalog text is a few ten thousand words). */
const ENTRY_LIMIT = 1 << 16;
/** Entries room is made for at first; doubled as tokens come (an index of a few documents stays small). */
const INITIAL_ENTRIES = 1 << 10;
/** The term id of an entry whose term was not looked up in the vocabulary yet. */
export const UNRESOLVED = -1;
/**
 * Numbers (32-bit) per entry in `resolutions`: the term id (`TERM_ID`), the id's generation then
 * (`GENERATION`), the vocabulary's count of released terms then (`RELEASES_LOW`, `RELEASES_HIGH`: its
 * low and high 32 bits), the token's length, and its first `INLINE_CHARS` UTF-16 code units, two a number.
 */
export const RESOLUTION_STRIDE = 16;
export const TERM_ID = 0;
export const GENERATION = 1;
export const RELEASES_LOW = 2;
export const RELEASES_HIGH = 3;
const LENGTH = 4;
const CHARS = 5;
/** Code units kept in the record: longer tokens are compared with their string. */
const INLINE_CHARS = (RESOLUTION_STRIDE - CHARS) * 2;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** What a scan reports for each token: its entry, to read its term and remembered term id. */
export type TokenVisitor = (entry: number) => void;

export class TokenTable {
  /**
   * Per slot, side by side (one cache line): entry + 1 (0: empty) and the token's hash (compared
   * before the characters). A power of two of slots, at most half of them used.
   */
  private slots = new Int32Array(INITIAL_ENTRIES * 4);
  private mask = INITIAL_ENTRIES * 2 - 1;
  /** Entry → its token (lower-case), its index term (null: dropped). */
  private readonly tokens: string[] = [];
  readonly terms: Array<string | null> = [];
  /**
   * Per entry (`RESOLUTION_STRIDE` numbers, side by side): the term's id when last resolved
   * (UNRESOLVED at first), the vocabulary's generation of that id then, and how many terms the
   * vocabulary had released then (while none was released since, the id is known good unread); then
   * the token's length and characters (see RESOLUTION_STRIDE).
   */
  resolutions: Int32Array = newResolutions(INITIAL_ENTRIES);

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
    const { slots, mask, resolutions } = this;
    let slot = hash & mask;
    for (;;) {
      const stored = slots[slot * 2]!;
      if (stored === 0) break;
      if (slots[slot * 2 + 1] === hash) {
        const at = (stored - 1) * RESOLUTION_STRIDE;
        if (resolutions[at + LENGTH] === length) {
          if (
            length <= INLINE_CHARS
              ? sameInline(resolutions, at + CHARS, text, start, length, fold)
              : sameChars(this.tokens[stored - 1]!, text, start, fold)
          )
            return stored - 1;
        }
      }
      slot = (slot + 1) & mask;
    }
    // First sight: cut the token out once and ask the analyzer what it stands for.
    if (this.tokens.length * RESOLUTION_STRIDE === this.resolutions.length) {
      if (this.tokens.length >= ENTRY_LIMIT) this.clear();
      else this.grow();
      return this.find(text, start, end, hash, fold);
    }
    const raw = text.slice(start, end);
    const token = fold ? raw.toLowerCase() : raw;
    const entry = this.tokens.length;
    this.tokens.push(token);
    this.terms.push(this.termOfToken(token));
    const at = entry * RESOLUTION_STRIDE;
    this.resolutions[at + TERM_ID] = UNRESOLVED;
    this.resolutions[at + LENGTH] = length;
    for (let i = 0; i < INLINE_CHARS && i < length; i += 2) {
      const high = i + 1 < length ? token.charCodeAt(i + 1) : 0;
      this.resolutions[at + CHARS + (i >> 1)] = token.charCodeAt(i) | (high << 16);
    }
    slots[slot * 2] = entry + 1;
    slots[slot * 2 + 1] = hash;
    return entry;
  }

  private clear(): void {
    this.slots.fill(0);
    this.tokens.length = 0;
    this.terms.length = 0;
  }

  /** Twice the room: the entries keep their numbers, the slots are filled again from the hashes. */
  private grow(): void {
    const entries = (this.resolutions.length / RESOLUTION_STRIDE) * 2;
    const resolutions = newResolutions(entries);
    resolutions.set(this.resolutions);
    this.resolutions = resolutions;
    const old = this.slots;
    const slots = new Int32Array(entries * 4);
    const mask = entries * 2 - 1;
    for (let i = 0; i < old.length; i += 2) {
      const stored = old[i]!;
      if (stored === 0) continue;
      const hash = old[i + 1]!;
      let slot = hash & mask;
      while (slots[slot * 2] !== 0) slot = (slot + 1) & mask;
      slots[slot * 2] = stored;
      slots[slot * 2 + 1] = hash;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Room for `entries` records, every one UNRESOLVED. */
function newResolutions(entries: number): Int32Array {
  const resolutions = new Int32Array(entries * RESOLUTION_STRIDE);
  for (let at = 0; at < resolutions.length; at += RESOLUTION_STRIDE) resolutions[at + TERM_ID] = UNRESOLVED;
  return resolutions;
}

/** Whether the code units kept at `record[from..]` (two a number) equal text[start, start + length), folding upper-case ASCII when `fold`. */
function sameInline(record: Int32Array, from: number, text: string, start: number, length: number, fold: boolean): boolean {
  for (let i = 0; i < length; i++) {
    let code = text.charCodeAt(start + i);
    if (fold && code >= 65 && code <= 90) code += 32;
    if (code !== ((record[from + (i >> 1)]! >>> ((i & 1) << 4)) & 0xffff)) return false;
  }
  return true;
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
