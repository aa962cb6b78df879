/**
 * Lists of object keys → the dictionary text of their shape (`{["a","b"]`, packing.ts), without writing
 * that text out per object: a tree of keys walked one key at a time, whose node keeps its text once it
 * was asked for. Packing walks it as it packs an object's members; aspect-match.ts as it reads a value
 * against a packed text. Bounded: past MAX_SHAPE_NODES nodes the tree starts over (a node already reached
 * stays usable). A node holds no list of its keys: an object of n keys would make n nodes holding n²/2.
 */

/** What starts the dictionary text of a shape: no key or interned string does. */
export const SHAPE = '{';

export interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  text?: string;
}

const MAX_SHAPE_NODES = 10_000;
/** The node of no key: where every walk starts. */
export const shapeRoot: ShapeNode = { next: new Map() };
let shapeNodes = 0;

/** The node of one more key (made on first use). */
export function childOf(node: ShapeNode, key: string): ShapeNode {
  let child = node.next.get(key);
  if (!child) {
    if (++shapeNodes > MAX_SHAPE_NODES) {
      shapeRoot.next.clear();
      shapeNodes = 0;
    }
    child = { next: new Map() };
    node.next.set(key, child);
  }
  return child;
}

/** The dictionary text of the shape whose keys lead from the root to `node`; `keys` lists them when it is not known yet. */
export function shapeText(node: ShapeNode, keys: () => readonly string[]): string {
  return (node.text ??= SHAPE + JSON.stringify(keys()));
}
