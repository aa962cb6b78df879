/**
 * One cell of the property values CSV (docs/structured-properties.md, "Edit values as CSV"):
 *
 * - an empty cell leaves the property as it is;
 * - a cell holding exactly `<remove>` removes the property from the entity;
 * - otherwise the cell holds the values, separated by `|`. Inside a value `\|` is a `|`, `\\` a `\` and
 *   `\<` a `<`; any other backslash is refused. A value written `<empty>` is the empty text.
 *
 * Exports escape every `\` and `|`, and a `<` that starts a value, so that no value reads back as one of
 * the two words: a round trip gives back exactly the values that were exported.
 */

const REMOVE_CELL = '<remove>';
const EMPTY_VALUE = '<empty>';
const VALUE_SEPARATOR = '|';

export type CellEdit =
  { kind: 'unchanged' } | { kind: 'remove' } | { kind: 'values'; values: string[] } | { kind: 'error'; message: string };

/** A value as the CSV writes it (numbers as JavaScript writes them: `1.5`, `1e+21`). */
export function encodeValue(value: string | number): string {
  if (typeof value === 'number') return String(value);
  if (value === '') return EMPTY_VALUE;
  const escaped = value.replace(/[\\|]/g, (c) => `\\${c}`);
  return escaped.startsWith('<') ? `\\${escaped}` : escaped;
}

/** The values of one property in one cell. */
export function encodeCell(values: ReadonlyArray<string | number>): string {
  return values.map(encodeValue).join(VALUE_SEPARATOR);
}

/** What a cell asks for: nothing, a removal, or the values as texts (typed by the caller from the property's value type). */
export function decodeCell(cell: string): CellEdit {
  if (cell === '') return { kind: 'unchanged' };
  if (cell === REMOVE_CELL) return { kind: 'remove' };
  const values: string[] = [];
  let value = '';
  let raw = '';
  const close = (): string | undefined => {
    if (raw === '') return `an empty value between two ${VALUE_SEPARATOR} (write ${EMPTY_VALUE} for an empty text)`;
    if (raw === REMOVE_CELL) return `${REMOVE_CELL} must stand alone in its cell (write \\${REMOVE_CELL} for that text)`;
    values.push(raw === EMPTY_VALUE ? '' : value);
    value = '';
    raw = '';
    return undefined;
  };
  for (let i = 0; i < cell.length; i++) {
    const c = cell[i]!;
    if (c === '\\') {
      const next = cell[i + 1];
      if (next !== '\\' && next !== VALUE_SEPARATOR && next !== '<') {
        return {
          kind: 'error',
          message: `a backslash must be doubled (\\\\) or escape a ${VALUE_SEPARATOR} or a < (at character ${i + 1})`,
        };
      }
      value += next;
      raw += c + next;
      i++;
    } else if (c === VALUE_SEPARATOR) {
      const problem = close();
      if (problem) return { kind: 'error', message: problem };
    } else {
      value += c;
      raw += c;
    }
  }
  const problem = close();
  return problem ? { kind: 'error', message: problem } : { kind: 'values', values };
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A value of a number property: the number when the text is a decimal number, else the text itself,
 * which the catalog then refuses with its own words (naming the property and the value).
 */
export function typedValue(text: string, numeric: boolean): { string: string } | { double: number } {
  if (numeric && DECIMAL.test(text.trim())) {
    const n = Number(text.trim());
    if (Number.isFinite(n)) return { double: n };
  }
  return { string: text };
}
