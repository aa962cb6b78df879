import { CatalogError, type Violation } from '../errors';
import { isWellFormedText } from './validation';

/**
 * URNs have the shape `urn:li:<entityType>:<key>`. The key is either a plain string or a tuple
 * `(<part>,<part>,...)` whose parts may themselves be URNs with tuples, e.g.
 * `urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)`.
 */
export interface ParsedUrn {
  urn: string;
  namespace: string;
  entityType: string;
  /** The key as written (for a tuple key, including the parentheses). */
  key: string;
  /** The tuple parts for a tuple key, else a single-element array with the key. */
  parts: string[];
}

/** URNs already found well-formed by `knownUrnProblem`; started over past WELL_FORMED_LIMIT. */
const wellFormed = new Set<string>();
const WELL_FORMED_LIMIT = 10_000;

/**
 * `urnProblem` for URNs a catalog checks on every request (the actor, a filtered property): a
 * well-formed one is remembered, so the next check is one set lookup.
 */
export function knownUrnProblem(text: unknown): string | undefined {
  if (typeof text === 'string' && wellFormed.has(text)) return undefined;
  const problem = urnProblem(text);
  if (problem === undefined) {
    if (wellFormed.size >= WELL_FORMED_LIMIT) wellFormed.clear();
    wellFormed.add(text as string);
  }
  return problem;
}

/** A valid entity type followed by its `:`, matched where the type starts (sticky). */
const ENTITY_TYPE_AT = /[A-Za-z][A-Za-z0-9_]*:/y;
/** Searches from `lastIndex` (global): white space, parentheses. */
const WHITE_SPACE_FROM = /\s/g;
const PARENTHESIS_FROM = /[()]/g;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f]/;

/** Whether the pattern (global or sticky) matches in `text` from `from` on. */
function matchesFrom(pattern: RegExp, text: string, from: number): boolean {
  pattern.lastIndex = from;
  const found = pattern.test(text);
  pattern.lastIndex = 0;
  return found;
}

/**
 * Returns a description of what is wrong with the text as a URN, or undefined when it is valid. It runs
 * on every URN of every write: a URN of printable ASCII is read once, in place (`isPlainValidUrn`);
 * only one it does not accept is read again by the rules below, which say what is wrong.
 */
export function urnProblem(text: unknown): string | undefined {
  if (typeof text === 'string' && text.length <= MAX_URN_LENGTH && isPlainValidUrn(text)) return undefined;
  return urnProblemOf(text);
}

const MAX_URN_LENGTH = 2048;

/** Printable ASCII only (a compiled pattern reads a long text faster than a loop of `charCodeAt`). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * True only for a valid URN of printable ASCII (what nearly every URN is), read in one pass without
 * slicing; false for every other text, valid or not, which `urnProblemOf` then reads (it accepts
 * everything this accepts: the same rules, with nested URNs read in place).
 */
function isPlainValidUrn(text: string): boolean {
  return PRINTABLE_ASCII.test(text) && isPlainUrnAt(text, 0, text.length);
}

/** `isPlainValidUrn` of `text[start, end)`, whose characters are printable ASCII already. */
function isPlainUrnAt(text: string, start: number, end: number): boolean {
  if (end - start < 4 || !text.startsWith('urn:', start)) return false;
  const nsColon = text.indexOf(':', start + 4);
  if (nsColon <= start + 4 || nsColon >= end) return false;
  // The entity type: a letter, then letters, digits and `_`, up to its colon.
  let i = nsColon + 1;
  if (i >= end || !isLetter(text.charCodeAt(i))) return false;
  for (i++; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) break; // :
    if (!isLetter(c) && !(c >= 48 && c <= 57) && c !== 95) return false;
  }
  const keyStart = i + 1;
  if (keyStart >= end) return false;
  if (text.charCodeAt(keyStart) !== 40) {
    // A plain key: no white space, no parentheses.
    for (let j = keyStart; j < end; j++) {
      const c = text.charCodeAt(j);
      if (c === 32 || c === 40 || c === 41) return false;
    }
    return true;
  }
  // A tuple key: closed at the end, balanced, no empty part, every part that is a URN valid.
  if (text.charCodeAt(end - 1) !== 41) return false;
  let depth = 0;
  let partStart = keyStart + 1;
  for (let j = keyStart; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c === 40) depth++;
    else if (c === 41) {
      depth--;
      if (depth < 0 || (depth === 0 && j !== end - 1)) return false;
    } else if (c === 44 && depth === 1) {
      if (!isPlainPart(text, partStart, j)) return false;
      partStart = j + 1;
    }
  }
  return depth === 0 && isPlainPart(text, partStart, end - 1);
}

function isPlainPart(text: string, start: number, end: number): boolean {
  return end > start && (!text.startsWith('urn:', start) || isPlainUrnAt(text, start, end));
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** What is wrong with the text as a URN (the rules, each with its message); undefined when it is valid. */
function urnProblemOf(text: unknown): string | undefined {
  if (typeof text !== 'string') return `expected a URN string, got ${typeof text}`;
  if (text.length === 0) return 'URN is empty';
  if (text.length > MAX_URN_LENGTH) return `URN is longer than ${MAX_URN_LENGTH} characters`;
  if (!isWellFormedText(text))
    return `"${text.replace(/[\uD800-\uDFFF]/g, '\uFFFD')}" is not well-formed Unicode (it holds a lone surrogate)`;
  if (!text.startsWith('urn:')) return `"${text}" is not a URN: it must start with "urn:"`;
  const nsColon = text.indexOf(':', 4);
  if (nsColon <= 4) return `"${text}" is not a URN: it needs a namespace, an entity type and a key (urn:li:<type>:<key>)`;
  const typeStart = nsColon + 1;
  const typeColon = text.indexOf(':', typeStart);
  if (typeColon <= typeStart) return `"${text}" is not a URN: it needs an entity type and a key (urn:li:<type>:<key>)`;
  if (!matchesFrom(ENTITY_TYPE_AT, text, typeStart)) return `"${text}" has an invalid entity type "${text.slice(typeStart, typeColon)}"`;
  const keyStart = typeColon + 1;
  if (keyStart === text.length) return `"${text}" has an empty key`;
  const tuple = text.charCodeAt(keyStart) === 40; // (
  if (!tuple && matchesFrom(WHITE_SPACE_FROM, text, keyStart)) return `"${text}" has white space in its key`;
  if (CONTROL_CHARACTER.test(text)) return `"${text}" contains a control character`;
  if (tuple) {
    if (!text.endsWith(')')) return `"${text}" has an unclosed tuple key`;
    let depth = 0;
    for (let i = keyStart; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 40) depth++;
      else if (c === 41) {
        depth--;
        if (depth < 0 || (depth === 0 && i !== text.length - 1)) return `"${text}" has unbalanced parentheses in its key`;
      }
    }
    if (depth !== 0) return `"${text}" has unbalanced parentheses in its key`;
    // The parts of the tuple (between the outer parentheses, split at top-level commas): none empty, nested URNs valid.
    const innerStart = keyStart + 1;
    const innerEnd = text.length - 1;
    if (tupleParts(text, innerStart, innerEnd, (start, end) => end === start)) return `"${text}" has an empty part in its tuple key`;
    let nested: string | undefined;
    tupleParts(text, innerStart, innerEnd, (start, end) => {
      if (!text.startsWith('urn:', start)) return false;
      nested = urnProblem(text.slice(start, end));
      return nested !== undefined;
    });
    if (nested) return `"${text}" has an invalid URN in its key: ${nested}`;
  } else if (matchesFrom(PARENTHESIS_FROM, text, keyStart)) {
    return `"${text}" has parentheses in a key that is not a tuple`;
  }
  return undefined;
}

/** Calls `visit` with the bounds of each top-level part of `text[start, end)`, in order, until it returns true; returns whether it did. */
function tupleParts(text: string, start: number, end: number, visit: (start: number, end: number) => boolean): boolean {
  let depth = 0;
  let from = start;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41) depth--;
    else if (c === 44 && depth === 0) {
      if (visit(from, i)) return true;
      from = i + 1;
    }
  }
  return visit(from, end);
}

export function isUrn(text: unknown): text is string {
  return urnProblem(text) === undefined;
}

/** Parses a URN; malformed input is INVALID_INPUT naming the offending text. */
export function parseUrn(text: unknown, where = 'urn'): ParsedUrn {
  const problem = urnProblem(text);
  if (problem !== undefined) {
    throw new CatalogError('INVALID_INPUT', `${where}: ${problem}`, { details: [{ path: where, message: problem }] });
  }
  return parseCheckedUrn(text as string);
}

/**
 * The parts of a URN that was checked already (no validation: `parseUrn` checks). `entityType`: the
 * URN's entity type, when the caller knows it already.
 */
export function parseCheckedUrn(urn: string, entityType?: string): ParsedUrn {
  const nsEnd = urn.indexOf(':', 4);
  const typeStart = nsEnd + 1;
  const typeEnd = urn.indexOf(':', typeStart);
  const key = urn.slice(typeEnd + 1);
  return {
    urn,
    // Nearly every URN is `urn:li:...`: its namespace costs no new string.
    namespace: nsEnd === 6 && urn.startsWith('li', 4) ? 'li' : urn.slice(4, nsEnd),
    entityType: entityType ?? entityTypeOf(urn),
    key,
    parts: urn.charCodeAt(typeEnd + 1) === 40 ? tupleOf(urn, typeEnd + 1) : [key],
  };
}

/** The top-level parts of the tuple key that starts at `start` and runs to the end of `urn`. */
function tupleOf(urn: string, start: number): string[] {
  const end = urn.length - 1;
  // No nested tuple (the usual key): the parts lie between its commas.
  if (urn.indexOf('(', start + 1) < 0) {
    let count = 1;
    for (let at = urn.indexOf(',', start + 1); at >= 0; at = urn.indexOf(',', at + 1)) count++;
    const parts = new Array<string>(count);
    let from = start + 1;
    for (let k = 0; k < count - 1; k++) {
      const comma = urn.indexOf(',', from);
      parts[k] = urn.slice(from, comma);
      from = comma + 1;
    }
    parts[count - 1] = urn.slice(from, end);
    return parts;
  }
  // Counted first, so that the list is made at its size.
  let count = 1;
  let depth = 0;
  for (let i = start + 1; i < end; i++) {
    const c = urn.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41) depth--;
    else if (c === 44 && depth === 0) count++;
  }
  const parts = new Array<string>(count);
  let k = 0;
  depth = 0;
  let from = start + 1;
  for (let i = from; i < end; i++) {
    const c = urn.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41) depth--;
    else if (c === 44 && depth === 0) {
      parts[k++] = urn.slice(from, i);
      from = i + 1;
    }
  }
  parts[k] = urn.slice(from, end);
  return parts;
}

/** Builds `urn:li:<entityType>:<key>`; tuple keys are given as an array of parts. */
export function formatUrn(entityType: string, key: string | readonly string[], namespace = 'li'): string {
  const keyText = typeof key === 'string' ? key : `(${key.join(',')})`;
  const urn = `urn:${namespace}:${entityType}:${keyText}`;
  parseUrn(urn);
  return urn;
}

/** The entity type `entityTypeOf` found last: the same type again is answered without a new string. */
let lastEntityType = '';

/** The entity type of a valid URN (no validation: call on URNs that were already parsed). */
export function entityTypeOf(urn: string): string {
  const start = urn.indexOf(':', 4) + 1;
  let end = urn.indexOf(':', start);
  if (end < 0) end = urn.length - 1;
  const last = lastEntityType;
  if (end - start === last.length && urn.startsWith(last, start)) return last;
  return (lastEntityType = urn.slice(start, end));
}

/** The key part of a URN (after `urn:li:<type>:`). */
export function urnKey(urn: string): string {
  const start = urn.indexOf(':', 4) + 1;
  const typeEnd = urn.indexOf(':', start);
  return urn.slice(typeEnd < 0 ? start : typeEnd + 1);
}

/** Percent-encodes a URN for use as one path segment (`:` `(` `,` `/` all encoded). */
export function encodeUrnForPath(urn: string): string {
  return encodeURIComponent(urn).replace(/[()!'*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Decodes one percent-encoded path segment, once. Malformed escapes are INVALID_INPUT. */
export function decodeUrnFromPath(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch (cause) {
    throw new CatalogError('INVALID_INPUT', `path segment "${segment}" has a malformed percent-escape`, {
      cause,
      details: [{ path: 'path', message: 'malformed percent-escape' }],
    });
  }
}

/** Collects a violation for a URN field instead of throwing (for validators that list every problem). */
export function checkUrn(value: unknown, path: string, violations: Violation[], entityType?: string): string | undefined {
  const problem = urnProblem(value);
  if (problem !== undefined) {
    violations.push({ path, message: problem });
    return undefined;
  }
  const urn = value as string;
  if (entityType !== undefined && entityTypeOf(urn) !== entityType) {
    violations.push({ path, message: `"${urn}" is not a ${entityType} URN` });
    return undefined;
  }
  return urn;
}
