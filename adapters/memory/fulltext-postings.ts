import { RangePool } from './range-pool';

/**
 * The postings of the full-text index (fulltext.ts): terms by id, documents in numbered slots, and
 * per-document term lists so that a document can be replaced or removed in place.
 */

/**
 * The postings of one term: one number per (document, field) holding it, `key × FREQUENCY_SPACE +
 * frequency` where key is slot × number of fields + field, unordered. Every term's postings are a list
 * of one pool (range-pool.ts), not an array each: at 100k documents most terms (URN parts, names)
 * belong to one or two documents, and an array per term was an object per document for the garbage
 * collector (a new number in every URN). Read as a view of the pool.
 * lunr's document frequency (`lunr.idf`) counts (document, field) pairs, not documents: it is the
 * number of postings here (a term present in two fields of one document counts twice).
 */
export type TermPostings = Float64Array;

/** Room for a frequency in a posting; a term repeated more often in one field counts this often less one. */
export const FREQUENCY_SPACE = 2 ** 21;
/** Room for a position in a document's term list (postings of one term, at most fields × documents). */
const POSITION_SPACE = 2 ** 27;

/**
 * The distinct terms of one document, per field, each with where its posting sits in that term's
 * postings (so the document can be removed): `term id × POSITION_SPACE + position`, a list of a pool
 * (range-pool.ts) per slot: no array per document.
 */

/**
 * One document analysed (fulltext.ts) into arrays the index reuses from one document to the next:
 * per field, its length (terms kept by the pipeline) and its distinct terms, by id, in the order of
 * their first occurrence, each with its frequency; the fields one after the other.
 */
export interface AnalysedDocument {
  /** [field]: number of terms left by the pipeline (lunr's field length). */
  readonly lengths: number[];
  /** [field]: where the field's terms start in `terms`; [fieldCount]: the number of distinct (field, term) pairs. */
  readonly starts: Int32Array;
  terms: Int32Array;
  frequencies: Int32Array;
}

/** The index's state, shared by writes (this file) and scoring (fulltext-query.ts). */
export interface Postings {
  readonly fieldCount: number;
  // Terms by id: a document's list holds numbers, not strings beside positions.
  readonly termIds: Map<string, number>;
  /** [term id]: the term's settled postings (those of terms out of the vocabulary let go). */
  readonly postingsOf: RangePool;
  readonly termOf: (string | undefined)[];
  /** [term id]: moves each time the id leaves the vocabulary, so that an id remembered elsewhere is known stale. */
  readonly generations: number[];
  readonly freeTermIds: number[];
  // Documents live in numbered slots (reused after removal) so that scoring, which touches every
  // posting of every query term, indexes arrays instead of hashing string ids.
  // The slots are the caller's (fulltext.ts: its own, or the memory search's slot table's).
  readonly idBySlot: (string | undefined)[];
  /** Documents held (lunr's N). */
  documentCount: number;
  /** [field][slot]: number of terms left by the pipeline (lunr's field length). */
  readonly fieldLengths: number[][];
  /** [slot]: the document's distinct terms per field and their positions, so its postings can be removed. */
  readonly termsBySlot: RangePool;
  // Sums of field lengths, so average field lengths stay exact under removal (integers, no drift).
  readonly totalLengths: number[];
  /**
   * [term id]: the number of postings of the term, those waiting in `pending` included: where the
   * next posting of the term goes. Read instead of the term's postings, which a write does not touch.
   */
  termLengths: Int32Array;
  /**
   * Postings written since the index was last read, in write order: (term id, posting) pairs that
   * `settle` appends to their terms' postings, grouped by term. A bulk load touches each term's
   * postings once per settle instead of once per document (every document reached some twenty-five
   * arrays scattered over the heap, a cache miss each). Bounded: settled when full.
   */
  pending: { terms: Int32Array; postings: Float64Array; count: number };
  /** Terms released from the vocabulary so far (only grows): while it stands still, no term id went stale. */
  releases: number;
}

/** Postings kept waiting at most (12 MB): a write past it settles them. */
const PENDING_LIMIT = 1 << 20;

export function createPostings(fieldCount: number): Postings {
  return {
    fieldCount,
    termIds: new Map(),
    postingsOf: new RangePool(),
    termOf: [],
    generations: [],
    freeTermIds: [],
    idBySlot: [],
    documentCount: 0,
    fieldLengths: Array.from({ length: fieldCount }, () => []),
    termsBySlot: new RangePool(),
    totalLengths: Array.from({ length: fieldCount }, () => 0),
    termLengths: new Int32Array(1024),
    pending: { terms: new Int32Array(1024), postings: new Float64Array(1024), count: 0 },
    releases: 0,
  };
}

/**
 * Appends the postings written since the last read to their terms' postings (in write order per
 * term, the positions the documents recorded). Every reader of `postingsOf`, and every change of a
 * stored document, calls this first.
 */
export function settle(postings: Postings): void {
  const { pending, postingsOf } = postings;
  const { count, terms, postings: values } = pending;
  if (count === 0) return;
  pending.count = 0;
  const termCount = postings.termOf.length;
  if (count * 4 < termCount) {
    // Few: in write order, term by term as they come.
    for (let i = 0; i < count; i++) postingsOf.push(terms[i]!, values[i]!);
    return;
  }
  // Many: grouped by term (a counting sort, stable), so each term's postings are reached once; the
  // postings are moved in one sequential pass, not read back in term order from all over `pending`.
  const ends = new Int32Array(termCount);
  for (let i = 0; i < count; i++) ends[terms[i]!]! += 1;
  for (let term = 1; term < termCount; term++) ends[term]! += ends[term - 1]!;
  const sorted = new Float64Array(count);
  // Filled from the back, so that each term's postings keep their write order.
  for (let i = count - 1; i >= 0; i--) sorted[--ends[terms[i]!]!] = values[i]!;
  for (let term = 0; term < termCount; term++) {
    const from = ends[term]!;
    const to = term + 1 < termCount ? ends[term + 1]! : count;
    if (from === to) continue;
    // Room for them all at once, then copied: a growing list moves once per settle, not per posting.
    const length = postingsOf.lengthOf(term);
    postingsOf.reserve(term, length + to - from);
    postingsOf.values.set(sorted.subarray(from, to), postingsOf.start[term]! + length);
    postingsOf.truncate(term, length + to - from);
  }
}

/** Queues one posting of a term; returns its position in the term's postings. */
function addPosting(postings: Postings, termId: number, posting: number): number {
  const { pending } = postings;
  if (pending.count === pending.terms.length) {
    if (pending.count >= PENDING_LIMIT) settle(postings);
    else {
      const terms = new Int32Array(pending.count * 2);
      terms.set(pending.terms);
      pending.terms = terms;
      const values = new Float64Array(pending.count * 2);
      values.set(pending.postings);
      pending.postings = values;
    }
  }
  pending.terms[pending.count] = termId;
  pending.postings[pending.count] = posting;
  pending.count += 1;
  return postings.termLengths[termId]!++;
}

/**
 * The id of a term, added to the vocabulary (with no postings yet) when new. A term added for a
 * document gets its posting from `upsertDocument` right after; nothing else adds terms.
 */
export function termIdOf(postings: Postings, term: string): number {
  let id = postings.termIds.get(term);
  if (id === undefined) {
    id = postings.freeTermIds.pop() ?? postings.termOf.length;
    postings.termIds.set(term, id);
    postings.termOf[id] = term;
    postings.generations[id] ??= 0;
    if (id >= postings.termLengths.length) {
      const lengths = new Int32Array(Math.max(id + 1, postings.termLengths.length * 2));
      lengths.set(postings.termLengths);
      postings.termLengths = lengths;
    }
    postings.termLengths[id] = 0;
  }
  return id;
}

/** Stores an analysed document `id` in `slot`, replacing the one there (the same document's earlier version). */
export function upsertDocument(postings: Postings, slot: number, id: string, document: AnalysedDocument): void {
  const { fieldCount, idBySlot, fieldLengths, termsBySlot, totalLengths } = postings;
  const { lengths, starts, terms, frequencies } = document;
  const distinct = starts[fieldCount]!;
  const existing = idBySlot[slot] !== undefined;
  if (existing) settle(postings);
  // A document whose terms did not change (a write of other aspects) stays as it is.
  if (existing && holds(postings, slot, document)) {
    idBySlot[slot] = id;
    return;
  }
  // Terms the old version alone held leave the vocabulary only after the new version is in: the
  // analysis resolved the new version's terms to ids already.
  const emptied: number[] = [];
  if (existing) detach(postings, slot, emptied);
  // Like lunr, a document with only empty fields still counts in N and in the average lengths.
  idBySlot[slot] = id;
  postings.documentCount += 1;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    const length = lengths[fieldIndex]!;
    fieldLengths[fieldIndex]![slot] = length;
    totalLengths[fieldIndex]! += length;
  }
  // The slot's list was let go when its last document left (detach): a list of its own size now.
  termsBySlot.reserve(slot, distinct);
  termsBySlot.truncate(slot, distinct);
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    const key = slot * fieldCount + fieldIndex;
    for (let i = starts[fieldIndex]!; i < starts[fieldIndex + 1]!; i++) {
      const termId = terms[i]!;
      const position = addPosting(postings, termId, key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1));
      termsBySlot.set(slot, i, termId * POSITION_SPACE + position);
    }
  }
  releaseEmpty(postings, emptied);
}

/** Whether the slot holds exactly these terms, frequencies and field lengths. */
function holds(postings: Postings, slot: number, document: AnalysedDocument): boolean {
  const { fieldCount, postingsOf, fieldLengths, termsBySlot } = postings;
  const { lengths, starts, terms, frequencies } = document;
  if (termsBySlot.lengthOf(slot) !== starts[fieldCount]) return false;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    if (fieldLengths[fieldIndex]![slot] !== lengths[fieldIndex]) return false;
    const key = slot * fieldCount + fieldIndex;
    for (let i = starts[fieldIndex]!; i < starts[fieldIndex + 1]!; i++) {
      const entry = termsBySlot.at(slot, i);
      const termId = Math.floor(entry / POSITION_SPACE);
      if (terms[i] !== termId) return false;
      const posting = key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1);
      if (postingsOf.at(termId, entry - termId * POSITION_SPACE) !== posting) return false;
    }
  }
  return true;
}

/** Removes the document in `slot`; an empty slot is ignored. */
export function removeDocument(postings: Postings, slot: number): void {
  if (postings.idBySlot[slot] === undefined) return;
  settle(postings);
  const emptied: number[] = [];
  detach(postings, slot, emptied);
  releaseEmpty(postings, emptied);
}

/**
 * Takes the document out of its slot and its postings (settled); terms left without postings go to
 * `emptied`.
 */
function detach(postings: Postings, slot: number, emptied: number[]): void {
  const { fieldCount, postingsOf, idBySlot, fieldLengths, termsBySlot, totalLengths, termLengths } = postings;
  idBySlot[slot] = undefined;
  postings.documentCount -= 1;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) totalLengths[fieldIndex]! -= fieldLengths[fieldIndex]![slot]!;
  const count = termsBySlot.lengthOf(slot);
  for (let i = 0; i < count; i++) {
    const entry = termsBySlot.at(slot, i);
    const termId = Math.floor(entry / POSITION_SPACE);
    const position = entry - termId * POSITION_SPACE;
    // Swap-remove: the last posting takes this one's place, and its document learns where it went.
    const last = postingsOf.lengthOf(termId) - 1;
    if (position !== last) {
      const moved = postingsOf.at(termId, last);
      postingsOf.set(termId, position, moved);
      const movedKey = Math.floor(moved / FREQUENCY_SPACE);
      const other = Math.floor(movedKey / fieldCount);
      const was = termId * POSITION_SPACE + last;
      const otherCount = termsBySlot.lengthOf(other);
      for (let at = 0; at < otherCount; at++) {
        if (termsBySlot.at(other, at) === was) {
          termsBySlot.set(other, at, termId * POSITION_SPACE + position);
          break;
        }
      }
    }
    postingsOf.truncate(termId, last);
    termLengths[termId] = last;
    if (last === 0) emptied.push(termId);
  }
  // Only now: a posting moved within the same document (a term in two of its fields) updates it above.
  termsBySlot.release(slot);
}

/**
 * A term no document holds any more must leave the vocabulary: lunr's query vector (and so the
 * score normalisation) only counts terms that exist in the index.
 */
function releaseEmpty(postings: Postings, emptied: readonly number[]): void {
  const { termIds, postingsOf, termOf, generations, freeTermIds, termLengths } = postings;
  for (const termId of emptied) {
    // Counted with the postings still waiting: the new version of a replaced document may hold the term.
    if (termLengths[termId]! > 0) continue;
    termIds.delete(termOf[termId]!);
    termOf[termId] = undefined;
    postingsOf.release(termId);
    generations[termId]! += 1;
    freeTermIds.push(termId);
    postings.releases += 1;
  }
}

/** The postings of a term (call `settle` first). */
export function postingsFor(postings: Postings, term: string): TermPostings | undefined {
  const id = postings.termIds.get(term);
  return id === undefined ? undefined : postings.postingsOf.view(id);
}
