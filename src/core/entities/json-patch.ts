import { applyPatch, type Operation } from 'rfc6902';
import type { JsonObject, JsonValue } from '../../adapter/types';
import { CatalogError, throwIfViolations, type Violation } from '../../errors';

/**
 * RFC 6902 JSON Patch on one aspect document, with the platform's `arrayPrimaryKeys`: a top-level
 * array field named there is addressed as a map keyed by the named members of its elements (joined
 * with `␟` when there are several), so that `/tags/urn:li:tag:pii` names the element whose `tag` is
 * that URN. Operations run in order on a copy; the first that fails stops the patch. A failed `test`
 * is CONFLICT (the stored state is not what the caller expected); every other failure INVALID_INPUT.
 */

/** One operation as a caller sends it (`value` for add, replace and test; `from` for move and copy). */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: JsonValue;
  from?: string;
}

/** Array field name → the members of an element that identify it. */
export type ArrayPrimaryKeys = Readonly<Record<string, readonly string[]>>;

const OPS: readonly string[] = ['add', 'remove', 'replace', 'move', 'copy', 'test'];
const KEY_SEPARATOR = '\u241f';

/** Every problem of the operations' shape, with paths `<prefix>/<i>/...`; none applied yet. */
export function jsonPatchViolations(operations: unknown, prefix = '/patch'): Violation[] {
  if (!Array.isArray(operations)) return [{ path: prefix || '/', message: 'must be a list of JSON Patch operations' }];
  const violations: Violation[] = [];
  operations.forEach((op: unknown, i) => {
    const where = `${prefix}/${i}`;
    if (!op || typeof op !== 'object' || Array.isArray(op)) {
      violations.push({ path: where, message: 'must be an operation { op, path, value? }' });
      return;
    }
    const o = op as Record<string, unknown>;
    if (typeof o.op !== 'string' || !OPS.includes(o.op)) {
      violations.push({ path: `${where}/op`, message: `must be one of ${OPS.join(', ')}` });
      return;
    }
    if (typeof o.path !== 'string' || (o.path !== '' && !o.path.startsWith('/')))
      violations.push({ path: `${where}/path`, message: 'must be a JSON pointer ("" or starting with /)' });
    if ((o.op === 'add' || o.op === 'replace' || o.op === 'test') && !('value' in o))
      violations.push({ path: `${where}/value`, message: `is required for ${o.op}` });
    if ((o.op === 'move' || o.op === 'copy') && (typeof o.from !== 'string' || (o.from !== '' && !o.from.startsWith('/')))) {
      violations.push({ path: `${where}/from`, message: `is required for ${o.op} and must be a JSON pointer` });
    }
  });
  return violations;
}

function keyOf(element: JsonValue, keys: readonly string[]): string | undefined {
  if (!element || typeof element !== 'object' || Array.isArray(element)) return undefined;
  const parts = keys.map((k) => (element as JsonObject)[k]);
  if (parts.some((p) => p === undefined || p === null || typeof p === 'object')) return undefined;
  return parts.map(String).join(KEY_SEPARATOR);
}

/** Keyed arrays → maps (elements without their keys are kept aside, in order, and put back first). */
function toKeyed(document: JsonObject, primaryKeys: ArrayPrimaryKeys): Map<string, JsonValue[]> {
  const unkeyed = new Map<string, JsonValue[]>();
  for (const [field, keys] of Object.entries(primaryKeys)) {
    const list = document[field];
    if (!Array.isArray(list)) {
      if (list === undefined) document[field] = {};
      continue;
    }
    const map: JsonObject = {};
    const rest: JsonValue[] = [];
    for (const element of list) {
      const key = keys.length
        ? keyOf(element, keys)
        : typeof element === 'string' || typeof element === 'number'
          ? String(element)
          : undefined;
      if (key === undefined) rest.push(element);
      else map[key] = element;
    }
    document[field] = map;
    unkeyed.set(field, rest);
  }
  return unkeyed;
}

function fromKeyed(document: JsonObject, primaryKeys: ArrayPrimaryKeys, unkeyed: Map<string, JsonValue[]>): void {
  for (const [field, keys] of Object.entries(primaryKeys)) {
    const map = document[field];
    if (!map || typeof map !== 'object' || Array.isArray(map)) continue;
    const elements = Object.entries(map).map(([key, element]) => {
      // An element added under its key alone gets the key's members (one key field: the whole key).
      if (keys.length === 1 && element && typeof element === 'object' && !Array.isArray(element) && !(keys[0]! in element)) {
        return { [keys[0]!]: key, ...element };
      }
      return element;
    });
    document[field] = [...(unkeyed.get(field) ?? []), ...elements];
  }
}

/**
 * Applies the operations to a copy of `current` (`{}` when the aspect is absent) and returns the patched
 * document. `describe` names the target in messages (e.g. `globalTags of urn:li:dataset:...`).
 */
export function applyJsonPatch(
  current: JsonObject | undefined,
  operations: readonly JsonPatchOperation[],
  options: { arrayPrimaryKeys?: ArrayPrimaryKeys; describe: string; prefix?: string },
): JsonObject {
  const prefix = options.prefix ?? '/patch';
  throwIfViolations(jsonPatchViolations(operations, prefix), `invalid patch of ${options.describe}`);
  const primaryKeys = options.arrayPrimaryKeys ?? {};
  const document = JSON.parse(JSON.stringify(current ?? {})) as JsonObject;
  const unkeyed = toKeyed(document, primaryKeys);
  const holder: { root: JsonValue } = { root: document };
  operations.forEach((operation, i) => {
    const rooted = {
      ...operation,
      path: `/root${operation.path}`,
      ...(operation.from !== undefined ? { from: `/root${operation.from}` } : {}),
    };
    const [failure] = applyPatch(holder, [rooted as Operation]);
    if (!failure) return;
    if (failure.name === 'TestError') {
      const { actual, expected } = failure as { actual?: unknown; expected?: unknown };
      const message = `test failed at ${operation.path}: found ${JSON.stringify(actual ?? null)}, expected ${JSON.stringify(expected ?? null)}`;
      throw new CatalogError('CONFLICT', `patch of ${options.describe} not applied: ${message}`, {
        details: [{ path: `${prefix}/${i}`, message }],
      });
    }
    const message =
      failure.name === 'MissingError'
        ? `${operation.path} does not exist`
        : `operation ${operation.op} on ${operation.path} cannot be applied`;
    throw new CatalogError('INVALID_INPUT', `patch of ${options.describe} not applied: ${message}`, {
      details: [{ path: `${prefix}/${i}`, message }],
    });
  });
  const root = holder.root;
  if (!root || typeof root !== 'object' || Array.isArray(root)) {
    const message = 'the patched aspect must be a JSON object';
    throw new CatalogError('INVALID_INPUT', `patch of ${options.describe} not applied: ${message}`, {
      details: [{ path: prefix, message }],
    });
  }
  fromKeyed(root, primaryKeys, unkeyed);
  return root;
}
