import type { AspectMatch, AspectMatchQuery, JsonObject } from '../../src/adapter/types';
import { rowContext } from './aspects';
import { dictionaryOf, type Dictionary } from './dictionary';
import { internUrns, KEY_PATTERN, LITERAL_CODE, LITERAL_PREFIX, MARK_CODE, REPEAT_TEXT, unpack } from './packing';
import { childOf, shapeRoot, shapeText } from './shape-tree';
import type { SqliteHandle } from './statements';

/**
 * `matchAspects` (the re-ingest of unchanged metadata): each asked value is read against the stored
 * row's packed text (packing.ts) piece by piece, so that a value stored already is never parsed or
 * built, and the asked one is never packed into a text of its own. Reading only looks ids up: a key or
 * URN the dictionary does not hold was never stored, so the value is not there. Text written otherwise
 * (another key order, a row written as plain JSON, a value holding the row's own stamp) answers
 * undefined, never "different": the domain compares those in its unit of work.
 */

// The packed form's marks and rules come from packing.ts. Whatever form a write chose, a text that reads
// back as the asked value under the packing's rules is that value; a text in a form not read here is a miss.
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** The packed text of an object key as a write packs it, or undefined when its id was never stored. */
function packedKey(key: string, d: Dictionary): string | undefined {
  let name = d.keys.get(key);
  if (name !== undefined) return name;
  if (KEY_PATTERN.test(key) || internUrns(key)) {
    const id = d.find(key);
    if (id === undefined) return undefined;
    name = JSON.stringify(`\x7f${id.toString(36)}`);
    // What packing caches for the key (the same id, the same text).
    d.keys.set(key, name);
    return name;
  }
  return JSON.stringify(key.charCodeAt(0) === MARK_CODE ? LITERAL_PREFIX + key : key);
}

/**
 * Whether `text` holds `piece` at `at`. A slice of 13 characters or more is a view of `text` (no copy), and
 * comparing it with `===` is several times faster than `startsWith` with a position, which V8 compares a
 * character at a time: 0.07 µs against 0.55 µs for a 140-character description. A shorter slice would be
 * a new string (garbage for every key, shape and repeat read), so a short piece is compared in place.
 */
function holdsAt(text: string, at: number, piece: string): boolean {
  return piece.length < 13 ? text.startsWith(piece, at) : text.slice(at, at + piece.length) === piece;
}

/** Where `literal` ends when `text` holds it at `at`; -1 when not. */
function literalAt(literal: string, text: string, at: number): number {
  return holdsAt(text, at, literal) ? at + literal.length : -1;
}

/** A dictionary reference `"\x7f<id in base 36>"` at `at`: where it ends when it names `id`; -1 when not. */
function referenceAt(id: number, text: string, at: number): number {
  if (text.charCodeAt(at) !== QUOTE || text.charCodeAt(at + 1) !== MARK_CODE) return -1;
  let n = 0;
  let i = at + 2;
  for (; ; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n = n * 36 + (c - 48);
    else if (c >= 97 && c <= 122) n = n * 36 + (c - 87);
    else break;
  }
  return i > at + 2 && text.charCodeAt(i) === QUOTE && n === id ? i + 1 : -1;
}

/**
 * A string: its dictionary reference when interned, else its JSON text. The text is compared as it is
 * first: a string without a quote or a backslash cannot read as anything but itself there (what else JSON
 * escapes, control characters and lone surrogates, is never stored unescaped, so it only fails the
 * compare); a failed compare of a string JSON escapes is made again with its JSON text.
 */
function stringAt(value: string, text: string, at: number, d: Dictionary): number {
  if (internUrns(value)) {
    const id = d.find(value);
    return id === undefined ? -1 : referenceAt(id, text, at);
  }
  const marked = value.charCodeAt(0) === MARK_CODE;
  if (value.includes('"') || value.includes('\\')) return jsonAt(value, marked, text, at);
  let body = at + 1;
  if (text.charCodeAt(at) !== QUOTE || (marked && !holdsAt(text, body, LITERAL_PREFIX))) return -1;
  if (marked) body += LITERAL_PREFIX.length;
  const end = body + value.length;
  if (holdsAt(text, body, value) && text.charCodeAt(end) === QUOTE) return end + 1;
  return ESCAPED_ELSE.test(value) ? jsonAt(value, marked, text, at) : -1;
}

/** A string compared as its JSON text (with the mark's literal sign when it begins with the mark). */
function jsonAt(value: string, marked: boolean, text: string, at: number): number {
  return literalAt(JSON.stringify(marked ? LITERAL_PREFIX + value : value), text, at);
}

/** What JSON escapes besides quotes and backslashes: control characters and lone surrogates (any surrogate here). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const ESCAPED_ELSE = /[\u0000-\u001f\ud800-\udfff]/;

/**
 * The next member of a list (an array's elements, a shaped object's values), at `at`: a repeat of the
 * member before it (the text `previous` spans) or the member's own text. Where it ends, or -1.
 */
function memberAt(value: unknown, text: string, at: number, previousStart: number, previousEnd: number, d: Dictionary): number {
  if (previousStart >= 0 && holdsAt(text, at, REPEAT_TEXT))
    return valueAt(value, text, previousStart, d) === previousEnd ? at + REPEAT_TEXT.length : -1;
  return valueAt(value, text, at, d);
}

/**
 * The members of a list from `at` on, then the closing bracket: where it ends, or -1. The list is an
 * array's elements (`keys` undefined; every member written, the first without a comma before it) or a
 * shaped object's values (its `keys`, undefined members left out; each after a comma, the first one too:
 * it follows the shape). Read in place, without a list of the members.
 */
function membersAt(
  source: readonly unknown[] | Record<string, unknown>,
  keys: readonly string[] | undefined,
  text: string,
  at: number,
  d: Dictionary,
): number {
  let i = at;
  let previousStart = -1;
  let previousEnd = -1;
  const count = keys ? keys.length : (source as readonly unknown[]).length;
  for (let n = 0; n < count; n++) {
    const member = keys ? (source as Record<string, unknown>)[keys[n]!] : (source as readonly unknown[])[n];
    if (member === undefined) {
      if (keys) continue;
      return -1;
    }
    if (keys || n > 0) {
      if (text.charCodeAt(i) !== COMMA) return -1;
      i++;
    }
    const end = memberAt(member, text, i, previousStart, previousEnd, d);
    if (end < 0) return -1;
    // After a repeat the member before stays the one repeated (it is that member's text again).
    if (previousStart < 0 || !holdsAt(text, i, REPEAT_TEXT)) {
      previousStart = i;
      previousEnd = end;
    }
    i = end;
  }
  return text.charCodeAt(i) === CLOSE_ARRAY ? i + 1 : -1;
}

function arrayAt(value: readonly unknown[], text: string, at: number, d: Dictionary): number {
  return text.charCodeAt(at) === OPEN_ARRAY ? membersAt(value, undefined, text, at + 1, d) : -1;
}

/** An object written as `{"key":value,...}`. */
function plainObjectAt(object: Record<string, unknown>, text: string, at: number, d: Dictionary): number {
  let i = at + 1;
  let count = 0;
  // `for...in` walks the keys without making a list of them (a plain object's inherited keys are none).
  for (const key in object) {
    const member = object[key];
    // An undefined member is no member (as a write packs it).
    if (member === undefined) continue;
    if (count > 0) {
      if (text.charCodeAt(i) !== COMMA) return -1;
      i++;
    }
    const name = packedKey(key, d);
    if (name === undefined || !holdsAt(text, i, name)) return -1;
    i += name.length;
    if (text.charCodeAt(i) !== COLON) return -1;
    i = valueAt(member, text, i + 1, d);
    if (i < 0) return -1;
    count++;
  }
  return text.charCodeAt(i) === CLOSE_OBJECT ? i + 1 : -1;
}

/** An object written as its shape and its values, `["\x7f{<id>",value,...]` (two or more keys, each with an id). */
function shapedObjectAt(object: Record<string, unknown>, keys: readonly string[], text: string, at: number, d: Dictionary): number {
  let node = shapeRoot;
  let count = 0;
  for (const key of keys) {
    if (object[key] === undefined) continue;
    const name = packedKey(key, d);
    // Only keys with a dictionary id make a shape.
    if (name === undefined || name.charCodeAt(1) !== MARK_CODE || name.charCodeAt(2) === LITERAL_CODE) return -1;
    node = childOf(node, key);
    count++;
  }
  if (count < 2) return -1;
  const dictionaryText = shapeText(node, () => keys.filter((key) => object[key] !== undefined));
  let shape = d.shapes.get(dictionaryText);
  if (shape === undefined) {
    const id = d.find(dictionaryText);
    if (id === undefined) return -1;
    shape = JSON.stringify(`\x7f{${id.toString(36)}`);
    d.shapes.set(dictionaryText, shape);
  }
  if (!holdsAt(text, at + 1, shape)) return -1;
  return membersAt(object, keys, text, at + 1 + shape.length, d);
}

/**
 * Where the packed text of `value` that starts at `at` of `text` ends; -1 when the text there does not
 * read back as that value (or as a plain JSON value: anything else is never stored as asked).
 */
function valueAt(value: unknown, text: string, at: number, d: Dictionary): number {
  switch (typeof value) {
    case 'string':
      return stringAt(value, text, at, d);
    case 'number':
      return Number.isFinite(value) ? literalAt(String(value), text, at) : -1;
    case 'boolean':
      return literalAt(value ? 'true' : 'false', text, at);
    case 'object':
      break;
    default:
      return -1;
  }
  if (value === null) return literalAt('null', text, at);
  if (Array.isArray(value)) return arrayAt(value, text, at, d);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return -1;
  const object = value as Record<string, unknown>;
  const first = text.charCodeAt(at);
  if (first === OPEN_OBJECT) return plainObjectAt(object, text, at, d);
  if (first === OPEN_ARRAY) return shapedObjectAt(object, Object.keys(object), text, at, d);
  return -1;
}

/** Whether the stored packed text reads back as exactly the asked value. */
function holdsValue(text: string, value: unknown, d: Dictionary): boolean {
  return valueAt(value, text, 0, d) === text.length;
}

/** A stored row of an asked aspect (raw: columns by position). */
type MatchRow = [
  urnIndex: number,
  nameId: number,
  value: string,
  systemMetadata: string | null,
  // The row's stamps, read only when it has system metadata (whose packed text may refer to them).
  createdTime: number | null,
  createdActor: number | null,
  modifiedTime: number | null,
  modifiedActor: number | null,
];

/**
 * One statement reads the asked aspects of the asked entities (their packed text and system metadata,
 * and the row's stamps only where there is system metadata: nothing else of the entity); each asked
 * value is read against the stored text. A value holding an object `{ time, actor }` equal to the row's
 * own stamp was stored as a reference to it, does not read back as asked, and is left to the domain.
 */
export function matchAspects(h: SqliteHandle, queries: readonly AspectMatchQuery[]): Array<AspectMatch | undefined> {
  const out = new Array<AspectMatch | undefined>(queries.length).fill(undefined);
  if (queries.length === 0) return out;
  const d = dictionaryOf(h);
  /** The distinct URNs asked, and the first query of each (an entity's queries usually come together). */
  const urns: string[] = [];
  const firstQuery: number[] = [];
  /** The next query of the same URN after each query (-1: none). */
  const nextQuery = new Array<number>(queries.length).fill(-1);
  const lastQuery: number[] = [];
  const urnIndex = new Map<string, number>();
  const names = new Set<number>();
  const nameIds = new Array<number>(queries.length);
  let previousUrn: string | undefined;
  let previousIndex = -1;
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i]!;
    const nameId = d.find(q.aspect);
    // An aspect whose name was never stored is nowhere.
    if (nameId === undefined) continue;
    nameIds[i] = nameId;
    names.add(nameId);
    let u = q.urn === previousUrn ? previousIndex : urnIndex.get(q.urn);
    if (u === undefined) {
      u = urns.length;
      urns.push(q.urn);
      urnIndex.set(q.urn, u);
      firstQuery.push(i);
      lastQuery.push(i);
    } else {
      nextQuery[lastQuery[u]!] = i;
      lastQuery[u] = i;
    }
    previousUrn = q.urn;
    previousIndex = u;
  }
  if (urns.length === 0) return out;
  const rows = h
    .stmt(
      `SELECT u.key, a.name_id, a.value, a.system_metadata,
         CASE WHEN a.system_metadata IS NOT NULL THEN a.created_time END, CASE WHEN a.system_metadata IS NOT NULL THEN a.created_actor END,
         CASE WHEN a.system_metadata IS NOT NULL THEN a.modified_time END, CASE WHEN a.system_metadata IS NOT NULL THEN a.modified_actor END
       FROM json_each(@urns) u
         CROSS JOIN entities e INDEXED BY entities_by_urn ON e.urn = u.value
         CROSS JOIN aspects a INDEXED BY aspects_by_entity ON a.entity_id = e.entity_id
       WHERE a.name_id IN (SELECT value FROM json_each(@names))`,
    )
    .raw()
    .all({ urns: JSON.stringify(urns), names: JSON.stringify([...names]) }) as MatchRow[];
  const unpacked: Unpacked = new Map();
  for (const row of rows) {
    const nameId = row[1];
    // Every query of this entity and aspect (the same aspect twice in a batch: each compared on its own).
    for (let i = firstQuery[row[0]]!; i !== -1; i = nextQuery[i]!) {
      if (nameIds[i] !== nameId) continue;
      const query = queries[i]!;
      if (holdsValue(row[2], query.value, d)) out[i] = matched(query, row, d, unpacked);
    }
  }
  return out;
}

/**
 * System metadata unpacked in one call, by packed text and the row stamps it refers to: rows written by
 * one commit with the same properties hold the same text. Shared between answers, so deeply frozen.
 */
type Unpacked = Map<string, Array<{ stamps: MatchRow; value: JsonObject }>>;

function sameStamps(a: MatchRow, b: MatchRow): boolean {
  return a[4] === b[4] && a[5] === b[5] && a[6] === b[6] && a[7] === b[7];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** The match of a row that holds the asked value. */
function matched(query: AspectMatchQuery, row: MatchRow, d: Dictionary, unpacked: Unpacked): AspectMatch {
  const systemMetadata = row[3];
  if (systemMetadata === null) return { value: query.value };
  let seen = unpacked.get(systemMetadata);
  if (!seen) unpacked.set(systemMetadata, (seen = []));
  let entry = seen.find((e) => sameStamps(e.stamps, row));
  if (!entry) {
    const ctx = rowContext({ created_time: row[4], created_actor: row[5], modified_time: row[6]!, modified_actor: row[7]! }, d);
    seen.push((entry = { stamps: row, value: deepFreeze(unpack(systemMetadata, ctx, d)) }));
  }
  return { value: query.value, systemMetadata: entry.value };
}
