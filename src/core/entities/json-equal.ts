/**
 * Whether two JSON values are equal: the same members with equal values, whatever order an object's
 * keys come in (a store may give them back in another order); arrays in order. What an unchanged aspect
 * is compared with on the write path: faster than `util.isDeepStrictEqual`, which also checks
 * prototypes, symbols and property descriptors JSON cannot hold.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const arrayA = Array.isArray(a);
  if (arrayA !== Array.isArray(b)) return false;
  if (arrayA) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    const value = x[key];
    // An undefined member is no member (JSON drops it).
    if (value === undefined) continue;
    if (!Object.hasOwn(y, key) || !sameJson(value, y[key])) return false;
    count++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) count--;
  return count === 0;
}
