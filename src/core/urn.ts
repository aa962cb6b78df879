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
 * Returns a description of what is wrong with the text as a URN, or undefined when it is valid. Reads
 * the text in place (positions, not slices): it runs on every URN of every write.
 */
export function urnProblem(text: unknown): string | undefined {
  if (typeof text !== 'string') return `expected a URN string, got ${typeof text}`;
  if (text.length === 0) return 'URN is empty';
  if (text.length > 2048) return 'URN is longer than 2048 characters';
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

function splitTuple(key: string): string[] {
  const inner = key.slice(1, -1);
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(inner.slice(start));
  return parts;
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

/** The parts of a URN that was checked already (no validation: `parseUrn` checks). */
export function parseCheckedUrn(urn: string): ParsedUrn {
  const rest = urn.slice(4);
  const nsEnd = rest.indexOf(':');
  const namespace = rest.slice(0, nsEnd);
  const afterNs = rest.slice(nsEnd + 1);
  const typeEnd = afterNs.indexOf(':');
  const entityType = afterNs.slice(0, typeEnd);
  const key = afterNs.slice(typeEnd + 1);
  return { urn, namespace, entityType, key, parts: key.startsWith('(') ? splitTuple(key) : [key] };
}

/** Builds `urn:li:<entityType>:<key>`; tuple keys are given as an array of parts. */
export function formatUrn(entityType: string, key: string | readonly string[], namespace = 'li'): string {
  const keyText = typeof key === 'string' ? key : `(${key.join(',')})`;
  const urn = `urn:${namespace}:${entityType}:${keyText}`;
  parseUrn(urn);
  return urn;
}

/** The entity type of a valid URN (no validation: call on URNs that were already parsed). */
export function entityTypeOf(urn: string): string {
  const afterNs = urn.slice(urn.indexOf(':', 4) + 1);
  return afterNs.slice(0, afterNs.indexOf(':'));
}

/** The key part of a URN (after `urn:li:<type>:`). */
export function urnKey(urn: string): string {
  const afterNs = urn.slice(urn.indexOf(':', 4) + 1);
  return afterNs.slice(afterNs.indexOf(':') + 1);
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
