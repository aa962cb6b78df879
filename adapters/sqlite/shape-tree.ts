/**
 * Lists of object keys → the dictionary text of their shape (`{["a","b"]`, packing.ts), without writing
 * that text out per object: a tree of keys walked one key at a time, whose node makes its text once.
 * Packing walks it as it packs an object's members; aspect-match.ts as it reads a value against a
 * packed text. Bounded: past MAX_SHAPE_NODES nodes the tree starts over (a node already reached stays
 * usable: it holds its own keys).
 */

/** What starts the dictionary text of a shape: no key or interned string does. */
export const SHAPE = '{';

export interface ShapeNode {
  readonly next: Map<string, ShapeNode>;
  /** The keys from the root to this node. */
  readonly keys: readonly string[];
  text?: string;
}

const MAX_SHAPE_NODES = 10_000;
/** The node of no key: where every walk starts. */
export const shapeRoot: ShapeNode = { next: new Map(), keys: [] };
let shapeNodes = 0;

/** The node of one more key (made on first use). */
export function childOf(node: ShapeNode, key: string): ShapeNode {
  let child = node.next.get(key);
  if (!child) {
    if (++shapeNodes > MAX_SHAPE_NODES) {
      shapeRoot.next.clear();
      shapeNodes = 0;
    }
    child = { next: new Map(), keys: [...node.keys, key] };
    node.next.set(key, child);
  }
  return child;
}

/** The dictionary text of the shape whose keys lead from the root to `node`. */
export function shapeText(node: ShapeNode): string {
  return (node.text ??= SHAPE + JSON.stringify(node.keys));
}
