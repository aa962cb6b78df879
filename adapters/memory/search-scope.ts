/**
 * Which indexed documents a request's scope, filter and text match, and the first of them in URN order:
 * the evaluation the memory search (search.ts) and the property-value index (property-values.ts) share.
 */
import type { SearchCondition, SearchScope } from '../../src/adapter/types';
import { scopeKey } from './field-index';
import { compileCondition, type CompiledCondition } from './search-conditions';
import type { DocumentIndex } from './search-documents';
import { topK } from './top-k';

/** Which documents a request matches: every one in scope (no filter, no text), or a list of slots. */
export type Evaluation = { scopeOnly: true } | { scopeOnly: false; slots: number[]; scores: Map<string, number> | undefined };

/** The entity types a request covers (all known when it names none). */
export function typesOf(index: DocumentIndex, scope: SearchScope): string[] {
  return scope.entityTypes.length > 0
    ? [...new Set(scope.entityTypes)]
    : index.table.typeNames.filter((_, id) => index.table.typeSlots[id]!.size > 0);
}

/** The scope keys a request covers. */
export function scopeKeys(index: DocumentIndex, scope: SearchScope): string[] {
  const keys: string[] = [];
  for (const type of typesOf(index, scope)) {
    keys.push(scopeKey(type, false));
    if (scope.includeRemoved) keys.push(scopeKey(type, true));
  }
  return keys;
}

function inScopeTest(index: DocumentIndex, scope: SearchScope): (slot: number) => boolean {
  const { removed, typeId } = index.table;
  if (scope.entityTypes.length === 0) return scope.includeRemoved ? () => true : (slot) => removed[slot] === 0;
  const allowed = new Uint8Array(index.table.typeNames.length);
  for (const type of scope.entityTypes) {
    const id = index.table.knownTypeId(type);
    if (id !== undefined) allowed[id] = 1;
  }
  return scope.includeRemoved ? (slot) => allowed[typeId[slot]!] === 1 : (slot) => removed[slot] === 0 && allowed[typeId[slot]!] === 1;
}

export function evaluate(index: DocumentIndex, scope: SearchScope): Evaluation & { mark: number } {
  const scores = index.fullText.search(scope.text);
  const groups = scope.filter.length === 0 || scope.filter.some((group) => group.length === 0) ? [[]] : scope.filter;
  if (scores === undefined && groups.length === 1 && groups[0]!.length === 0) return { scopeOnly: true, mark: 0 };

  const inScope = inScopeTest(index, scope);
  const textCondition: CompiledCondition | undefined = scores && {
    test: (slot) => scores.has(index.table.urns[slot]!),
    estimate: scores.size,
    candidates: (visit) => {
      for (const urn of scores.keys()) visit(index.table.slotOf.get(urn)!);
    },
  };
  const mark = index.table.nextMark();
  const marks = index.table.marks;
  const slots: number[] = [];
  for (const group of groups as SearchCondition[][]) {
    const conditions = group.map((condition) => compileCondition(index.state, condition));
    if (textCondition) conditions.push(textCondition);
    let driver: CompiledCondition | undefined;
    for (const condition of conditions) {
      if (condition.candidates && (driver === undefined || condition.estimate! < driver.estimate!)) driver = condition;
    }
    const checks = conditions.filter((condition) => condition !== driver).map((condition) => condition.test);
    const visit = (slot: number): void => {
      if (marks[slot] === mark || !inScope(slot)) return;
      for (const check of checks) if (!check(slot)) return;
      marks[slot] = mark;
      slots.push(slot);
    };
    if (driver) driver.candidates!(visit);
    else forEachInScope(index, scope, visit);
  }
  return { scopeOnly: false, slots, scores, mark };
}

/** Every slot of the scope's entity types (removed ones too: the caller checks). */
function forEachInScope(index: DocumentIndex, scope: SearchScope, visit: (slot: number) => void): void {
  for (const type of typesOf(index, scope)) {
    const id = index.table.knownTypeId(type);
    if (id !== undefined) for (const slot of index.table.typeSlots[id]!) visit(slot);
  }
}

/**
 * The first `count` URNs in URN order after `afterUrn` that pass `accept` (all of the scope when
 * absent): walks the sorted URNs of the scope's types. With several types, each list gives its
 * first `count` and the heads are merged.
 */
export function walk(
  index: DocumentIndex,
  scope: SearchScope,
  afterUrn: string | undefined,
  count: number,
  accept: (slot: number) => boolean,
): string[] {
  if (count <= 0) return [];
  const types = [...new Set(scope.entityTypes)];
  const lists =
    types.length === 0 ? [index.table.allUrns] : types.map((type) => index.table.urnsByType.get(type)).filter((l) => l !== undefined);
  const out: string[] = [];
  for (const list of lists) {
    let taken = 0;
    for (const urn of list.valuesAfter(afterUrn)) {
      const slot = index.table.slotOf.get(urn)!;
      if ((!scope.includeRemoved && index.table.removed[slot] === 1) || !accept(slot)) continue;
      out.push(urn);
      if (++taken >= count) break;
    }
  }
  if (lists.length > 1) out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return out.slice(0, count);
}

export function scopeTotal(index: DocumentIndex, scope: SearchScope): number {
  let total = 0;
  for (const key of scopeKeys(index, scope)) total += index.scopeCounts.get(key) ?? 0;
  return total;
}

/**
 * The first `count` matches in URN order after `afterUrn`. Usually: one pass over the matches
 * comparing ranks (numbers in a typed array) against the worst of the best `count` so far. When
 * the matches are most of the scope, walking the URNs and taking the marked ones reaches `count`
 * after about count × scope size / matches steps, each a map lookup: cheaper only then.
 */
export function firstByUrn(
  index: DocumentIndex,
  scope: SearchScope,
  slots: readonly number[],
  mark: number,
  afterUrn: string | undefined,
  count: number,
): number[] {
  if (count <= 0 || slots.length === 0) return [];
  const steps = count * (index.table.slotOf.size / slots.length);
  if (steps * WALK_STEP_COST < slots.length) {
    const marks = index.table.marks;
    return walk(index, scope, afterUrn, count, (slot) => marks[slot] === mark).map((urn) => index.table.slotOf.get(urn)!);
  }
  const after = afterUrn === undefined ? Number.NEGATIVE_INFINITY : index.table.rankAtOrBefore(afterUrn);
  const { rank } = index.table;
  if (count <= SMALL_PAGE) return smallestRanks(rank, slots, after, count);
  const candidates = afterUrn === undefined ? slots : slots.filter((slot) => rank[slot]! > after);
  return topK(candidates, count, (a, b) => rank[a]! - rank[b]!);
}

/** Pages up to this size (offset included) are picked by `smallestRanks`, larger ones by a heap. */
const SMALL_PAGE = 100;

/** What one step of a URN walk costs against one rank comparison (a map lookup of a URN, about). */
const WALK_STEP_COST = 32;

/**
 * The `count` slots of smallest rank above `after`, in rank order: a sorted array of the best so far,
 * which most slots leave at one comparison with its last element.
 */
function smallestRanks(rank: Float64Array, slots: readonly number[], after: number, count: number): number[] {
  const best: number[] = [];
  const bestRanks: number[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const r = rank[slot]!;
    if (r >= worst || r <= after) continue;
    let at = best.length;
    if (at === count) {
      best.pop();
      bestRanks.pop();
      at--;
    }
    while (at > 0 && bestRanks[at - 1]! > r) at--;
    best.splice(at, 0, slot);
    bestRanks.splice(at, 0, r);
    if (best.length === count) worst = bestRanks[count - 1]!;
  }
  return best;
}
