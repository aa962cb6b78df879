import type { AspectMatchQuery, JsonObject, StoredAspect } from '../../src/adapter/types';
import { rowContext } from './aspects';
import { dictionaryOf, type Dictionary } from './dictionary';
import { unpack } from './packing';
import type { SqliteHandle } from './statements';

/**
 * `matchAspects` (the re-ingest of unchanged metadata): each asked value is packed (packing.ts) and
 * compared with the stored row's packed text, so that a value stored already is never parsed or built.
 * Packing here only looks ids up: a key or URN the dictionary does not hold was never stored, so the
 * value is not there. Text that differs (another key order, a row written as plain JSON, a value holding
 * the row's own stamp) answers undefined, never "different": the domain compares those in its unit of work.
 */

/** Thrown when a text has no dictionary id (the value cannot be stored already) or a value is not plain JSON. */
const MISS = Symbol('not stored as asked');

// The packed form's marks (packing.ts). Packing here need not match a write's byte for byte: whatever it
// writes unpacks to the asked value, so equal text means an equal value; a text written otherwise is a miss.
const MARK = '\x7f';
const MARK_CODE = 0x7f;
const LITERAL_CODE = 0x27;
const REPEAT_TEXT = JSON.stringify(`${MARK}=`);
const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{2,63}$/;
const isInterned = (text: string): boolean => text.length <= 300 && text.startsWith('urn:li:');

/** Lists of object keys → their shape's dictionary text (`{["a","b"]`), without building that text per object. */
interface ShapeNode {
  next: Map<string, ShapeNode>;
  text?: string;
}
const MAX_SHAPE_NODES = 10_000;
const shapeRoot: ShapeNode = { next: new Map() };
let shapeNodes = 0;

/** The node of one more key (made on first use; the tree starts over past its bound). */
function childOf(node: ShapeNode, key: string): ShapeNode {
  let child = node.next.get(key);
  if (!child) {
    if (++shapeNodes > MAX_SHAPE_NODES) {
      shapeRoot.next.clear();
      shapeNodes = 0;
    }
    node.next.set(key, (child = { next: new Map() }));
  }
  return child;
}

function packedString(text: string, d: Dictionary): string {
  if (isInterned(text)) {
    const id = d.find(text);
    if (id === undefined) throw MISS;
    return JSON.stringify(MARK + id.toString(36));
  }
  return JSON.stringify(text.charCodeAt(0) === MARK_CODE ? `${MARK}'${text}` : text);
}

function packedKey(key: string, d: Dictionary): string {
  let name = d.keys.get(key);
  if (name !== undefined) return name;
  if (KEY_PATTERN.test(key) || isInterned(key)) {
    const id = d.find(key);
    if (id === undefined) throw MISS;
    name = JSON.stringify(MARK + id.toString(36));
    // What packing caches for the key (the same id, the same text).
    d.keys.set(key, name);
    return name;
  }
  return JSON.stringify(key.charCodeAt(0) === MARK_CODE ? `${MARK}'${key}` : key);
}

/** The packed text of a plain JSON value (no stamps of a row referred to); throws MISS for anything else. */
function packedText(value: unknown, d: Dictionary): string {
  switch (typeof value) {
    case 'string':
      return packedString(value, d);
    case 'number':
      if (!Number.isFinite(value)) throw MISS;
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw MISS;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    let out = '[';
    let previous = '';
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      if (element === undefined) throw MISS;
      const packed = packedText(element, d);
      out += i === 0 ? packed : packed === previous && packed.length > REPEAT_TEXT.length ? `,${REPEAT_TEXT}` : `,${packed}`;
      previous = packed;
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) throw MISS;
  const object = value as Record<string, unknown>;
  // Both forms are written as the members come (no lists per object): an object of two or more
  // members whose keys all have ids is written as its shape, any other as an object.
  let plain = '';
  let shaped = '';
  let previous = '';
  let count = 0;
  let named = true;
  let node: ShapeNode | undefined = shapeRoot;
  for (const key of Object.keys(object)) {
    const member = object[key];
    // An undefined member is no member (as a write packs it).
    if (member === undefined) continue;
    const name = packedKey(key, d);
    const packed = packedText(member, d);
    if (named && (name.charCodeAt(1) !== MARK_CODE || name.charCodeAt(2) === LITERAL_CODE)) named = false;
    if (named) {
      node = childOf(node!, key);
      shaped += count > 0 && packed === previous && packed.length > REPEAT_TEXT.length ? `,${REPEAT_TEXT}` : `,${packed}`;
      previous = packed;
    }
    plain += `${count ? ',' : ''}${name}:${packed}`;
    count++;
  }
  if (!named || count < 2) return `{${plain}}`;
  node!.text ??= `{${JSON.stringify(Object.keys(object).filter((key) => object[key] !== undefined))}`;
  let shape = d.shapes.get(node!.text);
  if (shape === undefined) {
    const id = d.find(node!.text);
    if (id === undefined) throw MISS;
    shape = JSON.stringify(`${MARK}{${id.toString(36)}`);
    d.shapes.set(node!.text, shape);
  }
  return `[${shape}${shaped}]`;
}

/** A stored row of an asked aspect (raw: columns by position). */
type MatchRow = [
  urnIndex: number,
  nameId: number,
  version: number,
  createdTime: number | null,
  createdActor: number | null,
  modifiedTime: number,
  modifiedActor: number,
  value: string,
  systemMetadata: string | null,
];

/**
 * One statement reads the asked aspects of the asked entities (their packed text, stamps and system
 * metadata, nothing else of the entity); each asked value is packed as a write packs it and compared with
 * the stored text. Values are packed without the row's stamps: a value holding an object
 * `{ time, actor }` equal to the row's own stamp was stored as a reference to it, differs as text, and is
 * left to the domain.
 */
export function matchAspects(h: SqliteHandle, queries: readonly AspectMatchQuery[]): Array<StoredAspect | undefined> {
  const out = new Array<StoredAspect | undefined>(queries.length).fill(undefined);
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
      `SELECT u.key, a.name_id, a.version, a.created_time, a.created_actor, a.modified_time, a.modified_actor, a.value, a.system_metadata
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
      let packed: string;
      try {
        packed = packedText(query.value, d);
      } catch (error) {
        if (error === MISS) continue;
        throw error;
      }
      if (packed === row[7]) out[i] = storedAspect(query, row, d, unpacked);
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
  return a[3] === b[3] && a[4] === b[4] && a[5] === b[5] && a[6] === b[6];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/** The stored aspect of a row that holds the asked value. */
function storedAspect(query: AspectMatchQuery, row: MatchRow, d: Dictionary, unpacked: Unpacked): StoredAspect {
  const [, , version, createdTime, createdActor, modifiedTime, modifiedActor, , systemMetadata] = row;
  const ctx = rowContext(
    { created_time: createdTime, created_actor: createdActor, modified_time: modifiedTime, modified_actor: modifiedActor },
    d,
  );
  const aspect: StoredAspect = { name: query.aspect, value: query.value, version, created: ctx.created!, lastModified: ctx.modified! };
  if (systemMetadata !== null) {
    let seen = unpacked.get(systemMetadata);
    if (!seen) unpacked.set(systemMetadata, (seen = []));
    let entry = seen.find((e) => sameStamps(e.stamps, row));
    if (!entry) seen.push((entry = { stamps: row, value: deepFreeze(unpack(systemMetadata, ctx, d)) }));
    aspect.systemMetadata = entry.value;
  }
  return aspect;
}
