import type { FilterOperator, SearchScope } from '../../src/adapter/types';
import { knownTypeKeys } from './search-store';
import type { SqliteHandle } from './statements';

/**
 * SQL text and its positional parameters, built together so that their order always agrees
 * (better-sqlite3 binds `?` by position). The text depends only on the shape of a request
 * (operators, how many values, which parts are present), never on the values, so every statement
 * is prepared once and cached by its text.
 */
export interface Fragment {
  readonly text: string;
  readonly params: readonly unknown[];
}

export function fragment(text: string, ...params: unknown[]): Fragment {
  return { text, params };
}

/** Joins fragments with a separator; `empty` when there are none. */
export function join(parts: readonly Fragment[], separator: string, empty = ''): Fragment {
  if (parts.length === 0) return fragment(empty);
  if (parts.length === 1) return parts[0]!;
  let text = parts[0]!.text;
  const params = [...parts[0]!.params];
  for (let i = 1; i < parts.length; i++) {
    text += separator + parts[i]!.text;
    for (const p of parts[i]!.params) params.push(p);
  }
  return { text, params };
}

/** Tagged template: `${fragment}` is spliced in, with its parameters, in place. */
export function sql(strings: TemplateStringsArray, ...parts: Fragment[]): Fragment {
  let text = strings[0]!;
  const params: unknown[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    text += part.text + strings[i + 1]!;
    for (let k = 0; k < part.params.length; k++) params.push(part.params[k]);
  }
  return { text, params };
}

const TRUE = fragment('1');
const FALSE = fragment('0');

const json = (values: readonly unknown[]): string => JSON.stringify(values);

/** Equality with any of the values: `= ?` for one, a JSON list for more (one SQL text whatever the count). */
function anyOf(column: string, values: readonly unknown[]): Fragment {
  if (values.length === 0) return FALSE;
  if (values.length === 1) return fragment(`${column} = ?`, values[0]);
  return fragment(`${column} IN (SELECT value FROM json_each(?))`, json(values));
}

/**
 * The value test of an operator on a column holding numbers (REAL) and strings (TEXT); SQLite orders
 * every number before every string, which the range bounds use (`< ''` means "is a number").
 * Typed like the contract: a number never equals a string; string operators never match a number.
 */
export function valuePredicate(column: string, operator: FilterOperator, values: ReadonlyArray<string | number>): Fragment {
  const numbers = values.filter((v): v is number => typeof v === 'number').map((v) => (v === 0 ? 0 : v));
  const strings = values.filter((v): v is string => typeof v === 'string');
  switch (operator) {
    case 'EXISTS':
      return TRUE;
    case 'EQUAL':
    case 'IN':
      return anyOf(column, [...new Set([...numbers, ...strings])]);
    case 'IEQUAL':
      return anyOf(`mc_lower(${column})`, [...new Set([...numbers, ...strings.map((s) => s.toLowerCase())])]);
    case 'CONTAIN':
    case 'START_WITH':
    case 'END_WITH': {
      if (strings.length === 0) return FALSE;
      const tests = strings.map((s) =>
        operator === 'CONTAIN'
          ? fragment(`instr(${column}, ?) > 0`, s)
          : operator === 'START_WITH'
            ? fragment(`substr(${column}, 1, length(?)) = ?`, s, s)
            : fragment(`(? = '' OR substr(${column}, -length(?)) = ?)`, s, s, s),
      );
      return sql`(typeof(${fragment(column)}) = 'text' AND (${join(tests, ' OR ')}))`;
    }
    case 'GREATER_THAN':
    case 'GREATER_THAN_OR_EQUAL_TO':
    case 'LESS_THAN':
    case 'LESS_THAN_OR_EQUAL_TO': {
      const greater = operator === 'GREATER_THAN' || operator === 'GREATER_THAN_OR_EQUAL_TO';
      const op = { GREATER_THAN: '>', GREATER_THAN_OR_EQUAL_TO: '>=', LESS_THAN: '<', LESS_THAN_OR_EQUAL_TO: '<=' }[operator];
      const parts: Fragment[] = [];
      // Any of several bounds is the loosest one.
      if (numbers.length) {
        const bound = greater ? Math.min(...numbers) : Math.max(...numbers);
        parts.push(greater ? fragment(`(${column} ${op} ? AND ${column} < '')`, bound) : fragment(`${column} ${op} ?`, bound));
      }
      if (strings.length) {
        const bound = strings.reduce((a, b) => ((greater ? b < a : b > a) ? b : a));
        parts.push(greater ? fragment(`${column} ${op} ?`, bound) : fragment(`(${column} ${op} ? AND ${column} >= '')`, bound));
      }
      if (parts.length === 0) return FALSE;
      return parts.length === 1 ? parts[0]! : sql`(${join(parts, ' OR ')})`;
    }
  }
}

/**
 * For a count straight from search_values: a test that keeps one row per entity (by the flags a row
 * does not have, `flags_off`: see the schema), or undefined when
 * the operator can match several values of one entity (the count then needs DISTINCT).
 */
export function oneRowPerEntity(alias: string, operator: FilterOperator, values: ReadonlyArray<string | number>): Fragment | undefined {
  const types = new Set(values.map((v) => typeof v));
  switch (operator) {
    case 'EXISTS':
      return fragment(`(${alias}.flags_off & 4) = 0`);
    case 'EQUAL':
    case 'IN':
      // (entity, key, value) is unique: one wanted value matches at most one row of an entity.
      return new Set(values).size <= 1 ? TRUE : undefined;
    case 'GREATER_THAN':
    case 'GREATER_THAN_OR_EQUAL_TO':
      // "Some value above the bound" is "the largest value above the bound".
      return types.size === 1 ? fragment(`(${alias}.flags_off & 2) = 0`) : undefined;
    case 'LESS_THAN':
    case 'LESS_THAN_OR_EQUAL_TO':
      return types.size === 1 ? fragment(`(${alias}.flags_off & 1) = 0`) : undefined;
    default:
      return undefined;
  }
}

/** The entity type when the list names exactly one (possibly repeated); undefined otherwise. */
export function oneType(types: readonly string[]): string | undefined {
  const first = types[0];
  if (first === undefined) return undefined;
  for (let i = 1; i < types.length; i++) if (types[i] !== first) return undefined;
  return first;
}

/**
 * The scope on the entities row (alias d): removed, entity types. `removed` is NULL for an entity
 * without a search document, which no scope includes.
 */
export function docScope(scope: SearchScope): Fragment {
  const parts: Fragment[] = [fragment(scope.includeRemoved ? 'd.removed IN (0, 1)' : 'd.removed = 0')];
  if (scope.entityTypes.length) parts.push(typeTest('d.entity_type', scope.entityTypes));
  return join(parts, ' AND ', '1');
}

/**
 * The scope on search_values (any alias): `removed IN (0, 1)` keeps the index usable when removed ones
 * count. `typeImplied`: every row under the key has a type of the scope (its statistics say so), so the
 * type test, the last column of the index and read on every row, is left out.
 */
export function valueScope(h: SqliteHandle, alias: string, scope: SearchScope, typeImplied = false): Fragment {
  const parts: Fragment[] = [fragment(scope.includeRemoved ? `${alias}.removed IN (0, 1)` : `${alias}.removed = 0`)];
  if (scope.entityTypes.length && !typeImplied) {
    // The rows hold type keys (search-store.ts typeKey), not names.
    const keys = knownTypeKeys(h, scope.entityTypes);
    parts.push(keys.length === 0 ? fragment('0') : typeTest(`${alias}.entity_type`, keys));
  }
  return join(parts, ' AND ');
}

function typeTest(column: string, types: readonly string[]): Fragment {
  const only = oneType(types);
  return only !== undefined
    ? fragment(`${column} = ?`, only)
    : fragment(`${column} IN (SELECT value FROM json_each(?))`, json([...new Set(types)]));
}
