import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Violation } from '../../errors';

/**
 * The one place input is checked against JSON schemas. One ajv instance serves the whole process;
 * a schema is compiled once per distinct content (its JSON text), so catalogs created one after the
 * other (a host's test suite opens one per test) share compiled validators, and a schema handed over
 * as a fresh object literal on every call costs a lookup, never a new compilation or retained memory.
 * Every check also refuses what no input may hold: strings that are not well-formed Unicode and numbers
 * that are not finite. The cache is a bounded LRU: past `MAX_COMPILED_SCHEMAS` distinct schemas, the least recently used one
 * is dropped from it and from ajv's own cache.
 *
 * A host's schema (`compileSchema`) is checked against the JSON Schema meta-schema before it is compiled. The library's
 * own schemas are not: compiling the meta-schema's validator costs about 40 ms of CPU, paid once by every process that
 * checks any input (a CLI command, each server worker), and those schemas are checked against it by
 * test/core/validation/validation.test.ts instead.
 */

export type JsonSchema = Readonly<Record<string, unknown>>;

/** Checks one value; returns every violation found, each path prefixed with `prefix`. */
export type SchemaCheck = (value: unknown, prefix?: string) => Violation[];

export const MAX_COMPILED_SCHEMAS = 1000;

interface Compiled {
  readonly key: string;
  readonly schema: JsonSchema;
  readonly validate: ValidateFunction;
  /** When it was last used (the value of `uses` then): the entry used longest ago is dropped first. */
  used: number;
  /** Dropped from the cache (a schema object that still points at it compiles again). */
  evicted: boolean;
  /** Checked against the meta-schema (a host's schema, or one of the library's that a host handed over too). */
  metaChecked: boolean;
}

/**
 * One ajv instance for the process, made (and the package loaded, about 40 ms) on the first compile: a
 * process that checks no input, such as most command-line commands, never loads it.
 */
let ajvInstance: Ajv | undefined;
function ajv(): Ajv {
  if (ajvInstance === undefined) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    // The meta-schema check is asked for where it is needed (`compiled`), not on every compile.
    ajvInstance = new AjvClass({ allErrors: true, strict: false, validateSchema: false });
  }
  return ajvInstance;
}
/** Content key → compiled validator. */
const byContent = new Map<string, Compiled>();
/** Schema object → its content key, so a module-level schema is stringified once (weak: no retention). */
const keyOfObject = new WeakMap<object, string>();
/** Schema object → its compiled validator, while it is cached: one lookup per check (weak: no retention). */
const entryOfObject = new WeakMap<object, Compiled>();
/** Uses so far, counting: each use stamps its entry, instead of moving it in the map on every check. */
let uses = 0;

function contentKey(schema: JsonSchema): string {
  let key = keyOfObject.get(schema);
  if (key === undefined) {
    key = JSON.stringify(schema);
    keyOfObject.set(schema, key);
  }
  return key;
}

/**
 * The compiled check of `schema`. With `metaCheck` (a host's schema), a schema that is not valid JSON Schema throws
 * ajv's "schema is invalid: …" error first.
 */
function compiled(schema: JsonSchema, metaCheck = false): Compiled {
  const known = entryOfObject.get(schema);
  if (known !== undefined && !known.evicted && (known.metaChecked || !metaCheck)) {
    known.used = ++uses;
    return known;
  }
  const key = contentKey(schema);
  const found = byContent.get(key);
  if (found) {
    if (metaCheck && !found.metaChecked) {
      ajv().validateSchema(schema, true);
      found.metaChecked = true;
    }
    found.used = ++uses;
    entryOfObject.set(schema, found);
    return found;
  }
  if (metaCheck) ajv().validateSchema(schema, true);
  const entry: Compiled = { key, schema, validate: ajv().compile(schema), used: ++uses, evicted: false, metaChecked: metaCheck };
  byContent.set(key, entry);
  entryOfObject.set(schema, entry);
  if (byContent.size > MAX_COMPILED_SCHEMAS) {
    // The least recently used one goes (a scan, on compiling a new schema only).
    let oldest: Compiled | undefined;
    for (const candidate of byContent.values()) if (!oldest || candidate.used < oldest.used) oldest = candidate;
    if (oldest) {
      byContent.delete(oldest.key);
      oldest.evicted = true;
      ajv().removeSchema(oldest.schema);
    }
  }
  return entry;
}

/**
 * Compiles `schema` (or finds it compiled) and returns its check. Throws ajv's error for an invalid
 * schema: callers that accept schemas from hosts turn it into INVALID_INPUT.
 */
export function compileSchema(schema: JsonSchema): SchemaCheck {
  return checkOf(schema, true);
}

function checkOf(schema: JsonSchema, metaCheck: boolean): SchemaCheck {
  const { key } = compiled(schema, metaCheck);
  return (value, prefix = '') => {
    const entry = byContent.get(key) ?? compiled(schema);
    return withValueProblems(entry.validate(value) ? [] : violationsFromAjv(entry.validate.errors, prefix), value, prefix);
  };
}

/**
 * The check of one of the library's own schemas, compiled on its first use rather than when its module
 * loads: a process that never checks that kind of input (a CLI command, a server's worker that reads)
 * never pays for compiling it. Only for schemas that ship with the library and are known to compile
 * (test/core/validation/validation.test.ts compiles every one); a host's schema goes through `compileSchema`,
 * which reports a bad schema at once.
 */
export function lazySchemaCheck(schema: JsonSchema): SchemaCheck {
  let check: SchemaCheck | undefined;
  return (value, prefix) => (check ??= checkOf(schema, false))(value, prefix);
}

/** The schema's violations, then what no input may hold (`jsonValueProblems`), each place once. */
function withValueProblems(violations: Violation[], value: unknown, prefix: string): Violation[] {
  const problems = jsonValueProblems(value, prefix);
  if (problems.length === 0) return violations;
  const seen = new Set(violations.map((v) => v.path));
  return [...violations, ...problems.filter((p) => !seen.has(p.path))];
}

/** Validates against a schema compiled once per content; returns every violation with its path. */
export function checkSchema(schema: JsonSchema, value: unknown, prefix = ''): Violation[] {
  const { validate } = compiled(schema);
  return withValueProblems(validate(value) ? [] : violationsFromAjv(validate.errors, prefix), value, prefix);
}

/**
 * Whether the value passes `checkSchema` (no violation), found without a path: a caller makes the
 * prefix of the violations only when this is false.
 */
export function passesSchema(schema: JsonSchema, value: unknown): boolean {
  const { validate } = compiled(schema);
  return validate(value) === true && !mayHoldProblems(value, 0);
}

/**
 * The schema's violations only, for a part of a value whose `jsonValueProblems` were found empty already
 * (the elements of a list checked one by one after the list as a whole).
 */
export function checkSchemaOnly(schema: JsonSchema, value: unknown, prefix = ''): readonly Violation[] {
  const { validate } = compiled(schema);
  return validate(value) ? NO_VIOLATIONS : violationsFromAjv(validate.errors, prefix);
}

const NO_VIOLATIONS: readonly Violation[] = Object.freeze([]);

/** How many distinct schemas are compiled now (for tests and diagnostics). */
export function compiledSchemaCount(): number {
  return byContent.size;
}

/** Turns one ajv error into a violation with a JSON path the user can act on. */
function violationFromAjv(error: ErrorObject, prefix = ''): Violation {
  const params = error.params as Record<string, unknown>;
  let path = `${prefix}${error.instancePath}`;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    path = `${path}/${String(params.missingProperty)}`;
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    path = `${path}/${String(params.additionalProperty)}`;
    message = 'is not an allowed field';
  } else if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    message = `must be one of ${JSON.stringify(params.allowedValues)}`;
  }
  return { path: path || '/', message };
}

/** Collapses ajv's error list: `oneOf` branches produce noise, keep the most specific ones. */
function violationsFromAjv(errors: readonly ErrorObject[] | null | undefined, prefix = ''): Violation[] {
  const seen = new Set<string>();
  const out: Violation[] = [];
  for (const e of errors ?? []) {
    const v = violationFromAjv(e, prefix);
    const key = `${v.path}\u0000${v.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(v);
    }
  }
  return out;
}

declare global {
  interface String {
    /** ES2024, in Node since 20: false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/** False for a string with a lone surrogate (not well-formed Unicode: it cannot be stored as UTF-8). */
export function isWellFormedText(text: string): boolean {
  return text.isWellFormed();
}

/** At most this many problems of one value are listed (the walk stops there). */
const MAX_JSON_PROBLEMS = 100;

/** JSON Pointer escaping of one key. */
function pointerKey(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

/** Past this depth the quick look gives up and the iterative walk decides (no stack exhaustion). */
const QUICK_DEPTH = 64;

/**
 * Whether the value might hold what `jsonValueProblems` reports: false, without allocating a path,
 * for the clean values nearly every input is; true sends the value to the full walk (a value nested
 * deeper than QUICK_DEPTH is walked there).
 */
function mayHoldProblems(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return !value.isWellFormed();
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  if (depth >= QUICK_DEPTH) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (mayHoldProblems(value[i], depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!key.isWellFormed() || mayHoldProblems((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/**
 * What no input may hold, whatever its schema: strings (keys included) that are not well-formed Unicode,
 * and numbers that are not finite (JSON has neither; `1e309` parses to Infinity). Iterative, so a deeply
 * nested value cannot exhaust the stack; the paths are JSON Pointers under `prefix`.
 */
export function jsonValueProblems(root: unknown, prefix = ''): Violation[] {
  const out: Violation[] = [];
  if (!mayHoldProblems(root, 0)) return out;
  const stack: Array<[unknown, string]> = [[root, prefix]];
  while (stack.length && out.length < MAX_JSON_PROBLEMS) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (!isWellFormedText(value)) out.push({ path: path || '/', message: 'is not well-formed Unicode (it holds a lone surrogate)' });
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) out.push({ path: path || '/', message: `must be a finite number, not ${String(value)}` });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        if (!isWellFormedText(key))
          out.push({ path: `${path}/${pointerKey(key)}`, message: 'is a key that is not well-formed Unicode (it holds a lone surrogate)' });
        stack.push([child, `${path}/${pointerKey(key)}`]);
      }
    }
  }
  return out;
}
