import type { AuditStamp, JsonObject, JsonValue } from '../../src/adapter/types';
import { childOf, SHAPE, shapeRoot, shapeText } from './shape-tree';

/**
 * The packed form of a JSON document as the compact layout stores it (aspect values, kept versions,
 * change events): still JSON text, read back with `JSON.parse` and one walk, but
 * - an audit stamp `{ "time": t, "actor": a }` equal to the row's own last-modified (or created) stamp
 *   is written `"\u007f!"` (`"\u007f*"`): a structured property assignment repeats the aspect's stamps;
 * - object keys that look like identifiers, URN strings (and, in system metadata, definition keys) are
 *   written `"\u007f<id>"`, the base-36 id of the text in the dictionary: property URNs and the keys of
 *   every assignment repeat on every entity;
 * - an object of two or more such keys is written as an array `["\u007f{<id>", value, ...]`, the id that
 *   of its list of keys (its shape): the keys of an assignment are written once per catalog, not once
 *   per object;
 * - an element of an array (or a value of a shaped object) whose packed text is that of the element
 *   before it is written `"\u007f="`: the stamps of every property assignment, for instance, repeat
 *   one another (schema version 8);
 * - a string that begins with U+007F itself is written with `'` after the mark, so nothing is ambiguous.
 * Plain JSON without U+007F reads back unchanged, so rows written as plain JSON stay readable.
 */
// The marks are exported for aspect-match.ts, which reads values against packed texts in place.
const MARK = '\x7f';
export const MARK_CODE = 0x7f;
export const LITERAL_CODE = 0x27;
const LITERAL = "'";
/** What starts a string that begins with the mark itself: the mark and the literal sign. */
export const LITERAL_PREFIX = MARK + LITERAL;
const MODIFIED = `${MARK}!`;
const CREATED = `${MARK}*`;
const REPEAT = `${MARK}=`;
/** An element (or a shaped object's value) equal to the one before it. */
export const REPEAT_TEXT = JSON.stringify(REPEAT);
const MODIFIED_TEXT = JSON.stringify(MODIFIED);
const CREATED_TEXT = JSON.stringify(CREATED);
/** Object keys worth a dictionary id: identifier-like names (schema keys), not free text. */
export const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{2,63}$/;
const MAX_INTERNED = 300;
const UUID_PREFIX = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** The dictionary as packing needs it. */
export interface Symbols {
  idOf(text: string): number;
  textOf(id: number): string;
  /**
   * Object keys as packed JSON text, kept by the caller for as long as the ids they hold are valid
   * (bounded: a connection's dictionary clears it with its own caches).
   */
  readonly keys: Map<string, string>;
  /** Shapes (lists of keys) as packed JSON text, and the keys of a shape id: cached like `keys`. */
  readonly shapes: Map<string, string>;
  readonly shapeKeys: Map<number, string[]>;
}

/** The stamps a packed document is relative to (those of the row that holds it). */
export interface PackContext {
  modified?: AuditStamp;
  created?: AuditStamp;
}

/** Which strings in value position get a dictionary id. */
export type InternRule = (text: string) => boolean;

/** URNs: they name properties, platforms, users, and repeat across entities. */
// (Its first character first: most strings are not URNs, and `startsWith` is slow to say so.)
export const internUrns: InternRule = (text) => text.charCodeAt(0) === 0x75 && text.length <= MAX_INTERNED && text.startsWith('urn:li:');
/** System metadata: URNs and definition keys (a UUID and a version), one per property, on every entity. */
export const internMetadata: InternRule = (text) => internUrns(text) || (text.length <= 64 && UUID_PREFIX.test(text));

function sameStamp(value: JsonObject, stamp: AuditStamp | undefined): boolean {
  return stamp !== undefined && value.time === stamp.time && value.actor === stamp.actor;
}

function packString(text: string, symbols: Symbols, intern: InternRule): string {
  if (intern(text)) return JSON.stringify(MARK + symbols.idOf(text).toString(36));
  return JSON.stringify(text.charCodeAt(0) === MARK_CODE ? LITERAL_PREFIX + text : text);
}

function packKey(key: string, symbols: Symbols): string {
  if (KEY_PATTERN.test(key) || internUrns(key)) return JSON.stringify(MARK + symbols.idOf(key).toString(36));
  return JSON.stringify(key.charCodeAt(0) === MARK_CODE ? LITERAL_PREFIX + key : key);
}

/** Writes the packed JSON text directly (no intermediate copy of the document): what JSON.stringify would write of the packed form. */
function packValue(value: unknown, ctx: PackContext, symbols: Symbols, intern: InternRule): string | undefined {
  switch (typeof value) {
    case 'string':
      return packString(value, symbols, intern);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined; // undefined, functions, symbols: left out of objects, null in arrays (as JSON.stringify does)
  }
  if (value === null) return 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return packValue((value as { toJSON(): unknown }).toJSON(), ctx, symbols, intern);
  if (Array.isArray(value)) {
    let out = '[';
    let previous = '';
    for (let i = 0; i < value.length; i++) {
      const packed = packValue(value[i], ctx, symbols, intern) ?? 'null';
      out += (i ? ',' : '') + (i && packed === previous && packed.length > REPEAT_TEXT.length ? REPEAT_TEXT : packed);
      previous = packed;
    }
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  // Only an object with both members can be a stamp: the others are not listed twice.
  if (object.time !== undefined && object.actor !== undefined) {
    const keys = Object.keys(object);
    if (keys.length === 2 && keys[0] === 'time' && keys[1] === 'actor') {
      if (sameStamp(object as JsonObject, ctx.modified)) return MODIFIED_TEXT;
      if (sameStamp(object as JsonObject, ctx.created)) return CREATED_TEXT;
    }
  }
  const packedKeys: string[] = [];
  const shapeKeys: string[] = [];
  const packedValues: string[] = [];
  let shaped = true;
  let shape = shapeRoot;
  // for...in visits the own keys of a plain object in the order of Object.keys, without an array of them.
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const packed = packValue(object[key], ctx, symbols, intern);
    if (packed === undefined) continue;
    let name = symbols.keys.get(key);
    if (name === undefined) {
      name = packKey(key, symbols);
      symbols.keys.set(key, name);
    }
    // Only keys with a dictionary id make a shape (free-form keys stay keys).
    if (name.charCodeAt(1) !== MARK_CODE || name.charCodeAt(2) === LITERAL_CODE) shaped = false;
    else if (shaped) shape = childOf(shape, key);
    packedKeys.push(name);
    shapeKeys.push(key);
    packedValues.push(packed);
  }
  if (shaped && packedKeys.length >= 2) {
    for (let i = packedValues.length - 1; i > 0; i--) {
      if (packedValues[i] === packedValues[i - 1] && packedValues[i]!.length > REPEAT_TEXT.length) packedValues[i] = REPEAT_TEXT;
    }
    const text = shapeText(shape, () => shapeKeys);
    let packedShape = symbols.shapes.get(text);
    if (packedShape === undefined) {
      packedShape = JSON.stringify(MARK + SHAPE + symbols.idOf(text).toString(36));
      symbols.shapes.set(text, packedShape);
    }
    return `[${packedShape},${packedValues.join(',')}]`;
  }
  let out = '{';
  for (let i = 0; i < packedKeys.length; i++) out += `${i ? ',' : ''}${packedKeys[i]}:${packedValues[i]}`;
  return `${out}}`;
}

export function pack(value: JsonObject, ctx: PackContext, symbols: Symbols, intern: InternRule = internUrns): string {
  return packValue(value, ctx, symbols, intern) ?? 'null';
}

function unpackString(text: string, ctx: PackContext, symbols: Symbols): JsonValue {
  const tag = text[1];
  if (tag === LITERAL) return text.slice(2);
  if (text === REPEAT) throw new Error('internal: a packed repeat without an element before it');
  if (text === MODIFIED || text === CREATED) {
    const stamp = text === MODIFIED ? ctx.modified : ctx.created;
    if (!stamp) throw new Error('internal: a packed stamp without its row stamp');
    return { time: stamp.time, actor: stamp.actor };
  }
  return symbols.textOf(parseInt(text.slice(1), 36));
}

/** A repeated element is its own copy: a caller that changes one element does not change the other. */
function copyOf(value: JsonValue): JsonValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyOf);
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: copyOf(value[key]!), enumerable: true, writable: true, configurable: true });
    else out[key] = copyOf(value[key]!);
  }
  return out;
}

function unpackValue(value: JsonValue, ctx: PackContext, symbols: Symbols): JsonValue {
  if (typeof value === 'string') return value.charCodeAt(0) === MARK_CODE ? unpackString(value, ctx, symbols) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const head = value[0];
    if (typeof head === 'string' && head.charCodeAt(0) === MARK_CODE && head[1] === SHAPE) {
      const id = parseInt(head.slice(2), 36);
      let keys = symbols.shapeKeys.get(id);
      if (keys === undefined) {
        keys = JSON.parse(symbols.textOf(id).slice(1)) as string[];
        symbols.shapeKeys.set(id, keys);
      }
      const out: JsonObject = {};
      let previous: JsonValue = null;
      for (let i = 0; i < keys.length; i++) {
        const raw = value[i + 1]!;
        const unpacked: JsonValue = i > 0 && raw === REPEAT ? copyOf(previous) : unpackValue(raw, ctx, symbols);
        previous = unpacked;
        if (keys[i] === '__proto__')
          Object.defineProperty(out, '__proto__', { value: unpacked, enumerable: true, writable: true, configurable: true });
        else out[keys[i]!] = unpacked;
      }
      return out;
    }
    for (let i = 0; i < value.length; i++)
      value[i] = i > 0 && value[i] === REPEAT ? copyOf(value[i - 1]!) : unpackValue(value[i]!, ctx, symbols);
    return value;
  }
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const name = key.charCodeAt(0) === MARK_CODE ? (unpackString(key, ctx, symbols) as string) : key;
    const unpacked = unpackValue(value[key]!, ctx, symbols);
    if (name === '__proto__') Object.defineProperty(out, name, { value: unpacked, enumerable: true, writable: true, configurable: true });
    else out[name] = unpacked;
  }
  return out;
}

export function unpack(text: string, ctx: PackContext, symbols: Symbols): JsonObject {
  // Most documents have a mark somewhere; a document without one is plain JSON and needs no walk.
  const parsed = JSON.parse(text) as JsonObject;
  return text.includes(MARK) ? (unpackValue(parsed, ctx, symbols) as JsonObject) : parsed;
}
