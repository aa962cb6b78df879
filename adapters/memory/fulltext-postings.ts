/**
 * The postings of the full-text index (fulltext.ts): terms by id, documents in numbered slots, and
 * per-document term lists so that a document can be replaced or removed in place.
 */
import type { AnalysedField } from './fulltext-analysis';

/**
 * The postings of one term: one number per (document, field) holding it, `key × FREQUENCY_SPACE +
 * frequency` where key is slot × number of fields + field, unordered. One array per term: at 100k
 * documents most terms (URN parts, names) belong to one or two documents, and an object per term and
 * field with two growable arrays each took more heap than the documents themselves; a pair of numbers
 * per posting took twice the room of one.
 * lunr's document frequency (`lunr.idf`) counts (document, field) pairs, not documents: it is the
 * number of postings here (a term present in two fields of one document counts twice).
 */
export type TermPostings = number[];

/** Room for a frequency in a posting; a term repeated more often in one field counts this often less one. */
export const FREQUENCY_SPACE = 2 ** 21;
/** Room for a position in a document's term list (postings of one term, at most fields × documents). */
const POSITION_SPACE = 2 ** 27;

/**
 * The distinct terms of one document, per field, each with where its posting sits in that term's
 * postings (so the document can be removed): `term id × POSITION_SPACE + position`, exact size.
 */
type DocumentTerms = number[];

/** The index's state, shared by writes (this file) and scoring (fulltext-query.ts). */
export interface Postings {
  readonly fieldCount: number;
  // Terms by id: a document's list holds numbers, not strings beside positions.
  readonly termIds: Map<string, number>;
  readonly postingsOf: (TermPostings | undefined)[];
  readonly termOf: (string | undefined)[];
  readonly freeTermIds: number[];
  // Documents live in numbered slots (reused after removal) so that scoring, which touches every
  // posting of every query term, indexes arrays instead of hashing string ids.
  readonly slotById: Map<string, number>;
  readonly idBySlot: (string | undefined)[];
  readonly freeSlots: number[];
  /** [field][slot]: number of terms left by the pipeline (lunr's field length). */
  readonly fieldLengths: number[][];
  /** [slot]: the document's distinct terms per field and their positions, so its postings can be removed. */
  readonly termsBySlot: (DocumentTerms | undefined)[];
  // Sums of field lengths, so average field lengths stay exact under removal (integers, no drift).
  readonly totalLengths: number[];
}

export function createPostings(fieldCount: number): Postings {
  return {
    fieldCount,
    termIds: new Map(),
    postingsOf: [],
    termOf: [],
    freeTermIds: [],
    slotById: new Map(),
    idBySlot: [],
    freeSlots: [],
    fieldLengths: Array.from({ length: fieldCount }, () => []),
    termsBySlot: [],
    totalLengths: Array.from({ length: fieldCount }, () => 0),
  };
}

/** Stores the analysed fields of one document (`distinct`: the number of their distinct terms), replacing any earlier version. */
export function upsertDocument(postings: Postings, id: string, analysed: readonly AnalysedField[], distinct: number): void {
  const { fieldCount, termIds, postingsOf, termOf, freeTermIds, slotById, idBySlot, freeSlots, fieldLengths, termsBySlot, totalLengths } =
    postings;
  const existing = slotById.get(id);
  // A document whose terms did not change (a write of other aspects) stays as it is.
  if (existing !== undefined && holds(postings, existing, analysed, distinct)) return;
  removeDocument(postings, id);
  // Like lunr, a document with only empty fields still counts in N and in the average lengths.
  const slot = freeSlots.pop() ?? idBySlot.length;
  slotById.set(id, slot);
  idBySlot[slot] = id;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    const { length } = analysed[fieldIndex]!;
    fieldLengths[fieldIndex]![slot] = length;
    totalLengths[fieldIndex]! += length;
  }
  // Filled with a fraction first: the entries are not small integers, and an array made for
  // doubles from the start is not converted while it fills.
  const document: DocumentTerms = new Array<number>(distinct).fill(0.5);
  let next = 0;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    const { terms, frequencies, known } = analysed[fieldIndex]!;
    const key = slot * fieldCount + fieldIndex;
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const posting = key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1);
      // A remembered id still names this term unless the term left the vocabulary meanwhile.
      const tokenTerm = known?.[i];
      let id = tokenTerm !== undefined && tokenTerm.id >= 0 && termOf[tokenTerm.id] === term ? tokenTerm.id : termIds.get(term);
      let position = 0;
      if (id === undefined) {
        id = freeTermIds.pop() ?? postingsOf.length;
        termIds.set(term, id);
        termOf[id] = term;
        postingsOf[id] = [posting];
      } else {
        const termPostings = postingsOf[id]!;
        position = termPostings.length;
        termPostings.push(posting);
      }
      if (tokenTerm !== undefined) tokenTerm.id = id;
      document[next++] = id * POSITION_SPACE + position;
    }
  }
  termsBySlot[slot] = document;
}

/** Whether the slot holds exactly these terms, frequencies and field lengths. */
function holds(postings: Postings, slot: number, analysed: readonly AnalysedField[], distinct: number): boolean {
  const { fieldCount, termIds, postingsOf, fieldLengths, termsBySlot } = postings;
  const document = termsBySlot[slot] ?? [];
  if (document.length !== distinct) return false;
  let next = 0;
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) {
    const { length, terms, frequencies } = analysed[fieldIndex]!;
    if (fieldLengths[fieldIndex]![slot] !== length) return false;
    const key = slot * fieldCount + fieldIndex;
    for (let i = 0; i < terms.length; i++, next++) {
      const entry = document[next]!;
      const id = Math.floor(entry / POSITION_SPACE);
      if (termIds.get(terms[i]!) !== id) return false;
      const posting = key * FREQUENCY_SPACE + Math.min(frequencies[i]!, FREQUENCY_SPACE - 1);
      if (postingsOf[id]![entry - id * POSITION_SPACE] !== posting) return false;
    }
  }
  return true;
}

/** Removes the document; unknown ids are ignored. */
export function removeDocument(postings: Postings, id: string): void {
  const { fieldCount, termIds, postingsOf, termOf, freeTermIds, slotById, idBySlot, freeSlots, fieldLengths, termsBySlot, totalLengths } =
    postings;
  const slot = slotById.get(id);
  if (slot === undefined) return;
  slotById.delete(id);
  idBySlot[slot] = undefined;
  freeSlots.push(slot);
  for (let fieldIndex = 0; fieldIndex < fieldCount; fieldIndex++) totalLengths[fieldIndex]! -= fieldLengths[fieldIndex]![slot]!;
  const document = termsBySlot[slot];
  if (document === undefined) return;
  for (let i = 0; i < document.length; i++) {
    const termId = Math.floor(document[i]! / POSITION_SPACE);
    const position = document[i]! - termId * POSITION_SPACE;
    const termPostings = postingsOf[termId]!;
    // Swap-remove: the last posting takes this one's place, and its document learns where it went.
    const last = termPostings.length - 1;
    if (position !== last) {
      const moved = termPostings[last]!;
      termPostings[position] = moved;
      const movedKey = Math.floor(moved / FREQUENCY_SPACE);
      const other = termsBySlot[Math.floor(movedKey / fieldCount)]!;
      const was = termId * POSITION_SPACE + last;
      const at = other.indexOf(was);
      if (at >= 0) other[at] = termId * POSITION_SPACE + position;
    }
    termPostings.length = last;
    // A term no document holds any more must leave the vocabulary: lunr's query vector (and so
    // the score normalisation) only counts terms that exist in the index.
    if (last === 0) {
      termIds.delete(termOf[termId]!);
      termOf[termId] = undefined;
      postingsOf[termId] = undefined;
      freeTermIds.push(termId);
    }
  }
  // Only now: a posting moved within the same document (a term in two of its fields) updates it above.
  termsBySlot[slot] = undefined;
}

export function postingsFor(postings: Postings, term: string): TermPostings | undefined {
  const id = postings.termIds.get(term);
  return id === undefined ? undefined : postings.postingsOf[id];
}
