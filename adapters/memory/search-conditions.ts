import type { SearchCondition } from '../../src/adapter/types';
import type { FieldIndex } from './field-index';
import type { SlotTable } from './slot-table';
import type { IndexedValue, RangeBound } from './value-order';

/** What the condition compiler reads of the engine's state. */
export interface SearchState {
  readonly table: SlotTable;
  /** Field index by key (see `fieldKeyOf`). */
  readonly fields: Map<string, FieldIndex>;
}

/** A condition ready to run: a test for one slot and, when it can drive a group, its candidates. */
export interface CompiledCondition {
  test(slot: number): boolean;
  /** An upper bound of the slots `candidates` visits (set together with `candidates`). */
  estimate?: number;
  /** Visits every slot that may match (a slot may come more than once); only for positive conditions. */
  candidates?(visit: (slot: number) => void): void;
}

type ValueTest = (value: IndexedValue) => boolean;

const RANGE_OPERATORS = new Set(['GREATER_THAN', 'GREATER_THAN_OR_EQUAL_TO', 'LESS_THAN', 'LESS_THAN_OR_EQUAL_TO']);

/** Whether one value satisfies the operator for any of the wanted values (typed: a number never equals a string). */
function valueTest(operator: SearchCondition['operator'], wanted: readonly IndexedValue[]): ValueTest {
  switch (operator) {
    case 'EXISTS':
      return () => true;
    case 'EQUAL':
    case 'IN': {
      if (wanted.length === 1) {
        const only = wanted[0];
        return (value) => value === only;
      }
      const set = new Set(wanted);
      return (value) => set.has(value);
    }
    case 'IEQUAL': {
      const set = new Set(wanted.map((w) => (typeof w === 'string' ? w.toLowerCase() : w)));
      return (value) => set.has(typeof value === 'string' ? value.toLowerCase() : value);
    }
    case 'CONTAIN':
    case 'START_WITH':
    case 'END_WITH': {
      const strings = wanted.filter((w): w is string => typeof w === 'string');
      if (operator === 'CONTAIN') return (value) => typeof value === 'string' && strings.some((w) => value.includes(w));
      if (operator === 'START_WITH') return (value) => typeof value === 'string' && strings.some((w) => value.startsWith(w));
      return (value) => typeof value === 'string' && strings.some((w) => value.endsWith(w));
    }
    case 'GREATER_THAN':
      return (value) => wanted.some((w) => (order(value, w) ?? 0) > 0);
    case 'GREATER_THAN_OR_EQUAL_TO':
      return (value) => wanted.some((w) => (order(value, w) ?? -1) >= 0);
    case 'LESS_THAN':
      return (value) => wanted.some((w) => (order(value, w) ?? 0) < 0);
    case 'LESS_THAN_OR_EQUAL_TO':
      return (value) => wanted.some((w) => (order(value, w) ?? 1) <= 0);
  }
}

/** Sign of value − wanted for values of one type (numbers numerically, strings by code units); undefined across types. */
function order(value: IndexedValue, wanted: IndexedValue): number | undefined {
  if (typeof value === 'number') return typeof wanted === 'number' ? value - wanted : undefined;
  if (typeof wanted !== 'string') return undefined;
  return value < wanted ? -1 : value > wanted ? 1 : 0;
}

export function compileCondition(state: SearchState, condition: SearchCondition): CompiledCondition {
  const { field, operator, negated } = condition;
  const matches = valueTest(operator, condition.values);
  const { table } = state;
  if (field.kind === 'entityType' || field.kind === 'urn') {
    const read =
      field.kind === 'entityType' ? (slot: number) => table.typeNames[table.typeId[slot]!]! : (slot: number) => table.urns[slot]!;
    const test = (slot: number): boolean => matches(read(slot)) !== negated;
    if (negated) return { test };
    return { test, ...(field.kind === 'entityType' ? typeCandidates(state, matches) : urnCandidates(state, condition)) };
  }

  const index = state.fields.get(
    field.kind === 'field' ? `f\u0000${field.name}` : `p\u0000${field.propertyUrn}\u0000${field.definitionKey}`,
  );
  const exists = operator === 'EXISTS';
  const test =
    index === undefined
      ? () => negated
      : exists
        ? (slot: number): boolean => index.hasValues(slot) !== negated
        : (slot: number): boolean => index.someValue(slot, matches) !== negated;
  if (negated) return { test };
  if (!index) return { test, estimate: 0, candidates: () => undefined };
  if (exists) {
    return {
      test,
      estimate: index.size,
      candidates: (visit) => index.forEachSlot(visit),
    };
  }
  if (RANGE_OPERATORS.has(operator)) return { test, ...rangeCandidates(index, operator, condition.values) };
  // Equality: the wanted values themselves; other string tests: the distinct values that pass.
  const values = operator === 'EQUAL' || operator === 'IN' ? [...new Set(condition.values)] : [...index.values()].filter(matches);
  let estimate = 0;
  for (const value of values) estimate += index.countOf(value);
  return {
    test,
    estimate,
    candidates: (visit) => {
      for (const value of values) index.forEachSlotWith(value, visit);
    },
  };
}

/** Any-of over range bounds is the loosest bound: the smallest for "greater", the largest for "less". */
function rangeCandidates(
  index: FieldIndex,
  operator: SearchCondition['operator'],
  wanted: readonly IndexedValue[],
): Required<Omit<CompiledCondition, 'test'>> {
  const greater = operator === 'GREATER_THAN' || operator === 'GREATER_THAN_OR_EQUAL_TO';
  const inclusive = operator === 'GREATER_THAN_OR_EQUAL_TO' || operator === 'LESS_THAN_OR_EQUAL_TO';
  const numbers = wanted.filter((w): w is number => typeof w === 'number');
  const strings = wanted.filter((w): w is string => typeof w === 'string');
  const bounds: RangeBound[] = [];
  if (numbers.length) bounds.push({ value: greater ? Math.min(...numbers) : Math.max(...numbers), inclusive });
  if (strings.length) bounds.push({ value: strings.reduce((a, b) => ((greater ? b < a : b > a) ? b : a)), inclusive });
  // The value ids in range, read once: their documents are counted for the estimate and visited as candidates.
  const ids: number[] = [];
  for (const bound of bounds)
    for (const id of greater ? index.idsInRange(bound, undefined) : index.idsInRange(undefined, bound)) ids.push(id);
  return {
    estimate: index.countOfIds(ids),
    candidates: (visit) => {
      for (const id of ids) index.forEachSlotOf(id, visit);
    },
  };
}

function typeCandidates(state: SearchState, matches: ValueTest): Required<Omit<CompiledCondition, 'test'>> {
  const { table } = state;
  const sets = table.typeNames.filter(matches).map((name) => table.typeSlots[table.knownTypeId(name)!]!);
  let estimate = 0;
  for (const set of sets) estimate += set.size;
  return {
    estimate,
    candidates: (visit) => {
      for (const set of sets) for (const slot of set) visit(slot);
    },
  };
}

/** URN equality and prefixes drive from the URN maps; other URN tests only check candidates. */
function urnCandidates(state: SearchState, condition: SearchCondition): Omit<CompiledCondition, 'test'> {
  const strings = condition.values.filter((v): v is string => typeof v === 'string');
  let slots: number[];
  if (condition.operator === 'EQUAL' || condition.operator === 'IN') {
    slots = strings.map((urn) => state.table.slotOf.get(urn)).filter((slot): slot is number => slot !== undefined);
  } else if (condition.operator === 'START_WITH') {
    slots = [];
    for (const prefix of new Set(strings)) {
      const exact = state.table.slotOf.get(prefix);
      if (exact !== undefined) slots.push(exact);
      for (const urn of state.table.allUrns.valuesAfter(prefix)) {
        if (!urn.startsWith(prefix)) break;
        slots.push(state.table.slotOf.get(urn)!);
      }
    }
  } else {
    return {};
  }
  return {
    estimate: slots.length,
    candidates: (visit) => {
      for (const slot of slots) visit(slot);
    },
  };
}
