/** Texts remembered for sharing; cleared when full, so the map stays small whatever is written. */
const SHARED_LIMIT = 4_096;
/**
 * Longer aspect values are only flattened: a value that long is seldom written twice (a name, a
 * description, property values), and looking it up hashes every character for nothing. The values
 * that do repeat across entities are short (`{"removed":false}`, a subtype, a platform instance).
 */
const SHARED_VALUE_LENGTH = 128;

/**
 * Makes the JSON text of a stored value cheap to hold:
 * - flat: `JSON.stringify` and `+` return long texts as a tree of concatenated parts (several times
 *   the heap of the characters, and objects every collection visits); reading a character of the
 *   text makes V8 flatten it in place, and the next collection drops the tree. (Converting it to a
 *   number, as before, does not: V8 gives up on a text starting with `{` before flattening it.)
 * - shared: a text equal to one seen lately is replaced by that one, so the values a bulk load
 *   repeats (system metadata with the same property keys and stamps, `{"removed":false}`) are held once.
 */
export class StoredTexts {
  private readonly seen = new Map<string, string>();

  /** An aspect value's text: shared when short (`{"removed":false}`), else only flattened. */
  value(json: string): string {
    return json.length > SHARED_VALUE_LENGTH ? flatText(json) : this.text(json);
  }

  text(json: string): string {
    const known = this.seen.get(json);
    if (known !== undefined) return known;
    flatText(json);
    if (this.seen.size >= SHARED_LIMIT) this.seen.clear();
    this.seen.set(json, json);
    return json;
  }
}

/** A flat copy of a text built by `JSON.stringify` or concatenation (see StoredTexts). */
export function flatText(text: string): string {
  text.charCodeAt(0); // flattens (see StoredTexts)
  return text;
}
