import { jsonValueProblems } from '../core/validation';
import { CatalogError } from '../errors';

/**
 * Reading request bodies: media types, UTF-8, and JSON errors that name where the text went wrong
 * (line, column and character position), so a client can fix its body without guessing.
 */

/** The media type of a Content-Type header, lower case, without parameters. */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type === '' ? undefined : type;
}

/** UNSUPPORTED_MEDIA_TYPE unless the Content-Type is one of `accepted` (a `charset`, if given, must be UTF-8). */
export function checkContentType(contentType: string | undefined, accepted: readonly string[]): void {
  const type = mediaTypeOf(contentType);
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (type !== undefined && accepted.includes(type) && (charset === undefined || charset === 'utf-8' || charset === 'utf8')) return;
  const given = contentType === undefined ? 'no Content-Type' : `Content-Type "${contentType.slice(0, 100)}"`;
  const message = `this route takes ${accepted.map((a) => `"${a}"`).join(' or ')} (UTF-8) bodies; the request has ${given}`;
  throw new CatalogError('UNSUPPORTED_MEDIA_TYPE', message, { details: [{ path: 'Content-Type', message }] });
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Decodes UTF-8 and parses JSON; INVALID_INPUT naming the line, column and position of the first error. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    const message = 'the body is not valid UTF-8';
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    const { position, expected } = locateJsonError(text);
    const { line, column } = lineAndColumn(text, position);
    const found = position >= text.length ? 'the end of the body' : `${JSON.stringify(text[position])}`;
    const message = `malformed JSON at line ${line}, column ${column} (position ${position}): expected ${expected}, found ${found}`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
  }
  if (nestedDeeperThan(value, MAX_NESTING)) {
    const message = `the body nests arrays and objects more than ${MAX_NESTING} levels deep`;
    throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
  }
  // What JSON.parse lets through but no input may hold: lone surrogates (`"\ud800"`) and 1e309 (Infinity).
  const problems = jsonValueProblems(value);
  if (problems.length)
    throw new CatalogError('INVALID_INPUT', `the body holds ${problems.length === 1 ? 'a value' : 'values'} no input may hold`, {
      details: problems,
    });
  return value;
}

/** No input of the catalog nests this deep; deeper bodies would only cost stack in the validators. */
const MAX_NESTING = 64;

/** Iterative, so a hostile body cannot overflow the stack here. */
function nestedDeeperThan(root: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

class JsonScanError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

/**
 * Finds the first error of a text that JSON.parse refused (V8 names a position for some errors only).
 * A plain recursive-descent scan of RFC 8259; depth is bounded by the body size limit.
 */
function locateJsonError(text: string): { position: number; expected: string } {
  let i = 0;
  const fail = (expected: string): never => {
    throw new JsonScanError(i, expected);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail(`"${word}"`);
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('a closing quote');
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 32) fail('an escaped control character');
      if (c === 92) {
        i++;
        const e = text[i];
        if (e === 'u') {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail('four hex digits');
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else i++;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text[i] ?? '')) fail('a digit');
    while (/[0-9]/.test(text[i] ?? '')) i++;
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') fail('":"');
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail('"," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail('a JSON value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('the end of the body');
  } catch (error) {
    if (error instanceof JsonScanError) return { position: error.position, expected: error.expected };
    // Nesting deeper than the stack: the text is refused anyway, say where the scan gave up.
    if (error instanceof RangeError) return { position: i, expected: `at most ${MAX_NESTING} levels of nesting` };
    throw error;
  }
  // JSON.parse refused something this scan accepts (should not happen): report the start.
  return { position: 0, expected: 'a JSON value' };
}
