/**
 * Query evaluation and ranking for the full-text index (fulltext.ts): expands query terms against the
 * vocabulary and scores the postings with lunr's BM25 formula.
 */
import type { QueryTerm } from './fulltext-analysis';
import { FREQUENCY_SPACE, postingsFor, type Postings } from './fulltext-postings';

// BM25 parameters: the defaults of lunr.Builder (`_k1`, `_b`).
const K1 = 1.2;
const B = 0.75;

/** The matching documents' ids with their scores (higher is better); `boosts` per field. */
export function scorePostings(
  postings: Postings,
  boosts: readonly number[],
  terms: readonly QueryTerm[],
  requireAll: boolean,
): Map<string, number> {
  const { fieldCount, termIds, idBySlot, fieldLengths, totalLengths, documentCount } = postings;
  // Each query term with the index terms it stands for: itself, or every term with the prefix.
  const expansions: string[][] = [];
  for (const term of terms) {
    const expansion: string[] = [];
    if ('exact' in term) {
      if (termIds.has(term.exact)) expansion.push(term.exact);
    } else {
      // A linear scan of the vocabulary: a few milliseconds for the ~105k terms of 100k catalog
      // documents, and writes need no sorted structure kept up to date (see bench/fulltext-bench.ts).
      for (const indexed of termIds.keys()) {
        if (indexed.startsWith(term.prefix)) expansion.push(indexed);
      }
    }
    expansions.push(expansion);
  }
  if (requireAll && expansions.some((expansion) => expansion.length === 0)) return new Map();

  // lunr's query vector: one unit per query term for every index term it expands to, summed
  // when several query terms land on the same index term.
  const queryWeights = new Map<string, number>();
  for (const expansion of expansions) for (const term of expansion) queryWeights.set(term, (queryWeights.get(term) ?? 0) + 1);

  // Scores accumulate per slot; `matched` also keeps documents whose (rounded) score is 0, which
  // lunr returns too. For requireAllTerms, `termHits` counts the distinct query terms a slot matched.
  const accumulated = new Float64Array(idBySlot.length);
  const matched = new Uint8Array(idBySlot.length);
  const matchedSlots: number[] = [];
  let squaredMagnitude = 0;
  for (const [term, queryWeight] of queryWeights) {
    squaredMagnitude += queryWeight * queryWeight;
    const termPostings = postingsFor(postings, term);
    if (termPostings === undefined) continue;
    const idf = inverseDocumentFrequency(termPostings.length, documentCount);
    for (let i = 0; i < termPostings.length; i++) {
      const posting = termPostings[i]!;
      const key = Math.floor(posting / FREQUENCY_SPACE);
      const frequency = posting - key * FREQUENCY_SPACE;
      const fieldIndex = key % fieldCount;
      const slot = (key - fieldIndex) / fieldCount;
      const averageLength = totalLengths[fieldIndex]! / documentCount;
      const weight = termWeight(idf, frequency, fieldLengths[fieldIndex]![slot]!, averageLength, boosts[fieldIndex]!);
      accumulated[slot]! += queryWeight * weight;
      if (matched[slot] === 0) {
        matched[slot] = 1;
        matchedSlots.push(slot);
      }
    }
  }

  let kept = matchedSlots;
  if (requireAll) {
    // A repeated query term counts twice in the query vector (as in lunr) but once as a requirement.
    const distinct = new Map<string, string[]>();
    terms.forEach((term: QueryTerm, index: number) =>
      distinct.set('exact' in term ? `=${term.exact}` : `*${term.prefix}`, expansions[index]!),
    );
    const termHits = new Uint16Array(idBySlot.length);
    const lastTerm = new Int32Array(idBySlot.length);
    let termNumber = 0;
    for (const expansion of distinct.values()) {
      termNumber += 1;
      for (const term of expansion) {
        const termPostings = postingsFor(postings, term) ?? [];
        for (let i = 0; i < termPostings.length; i++) {
          const slot = Math.floor(Math.floor(termPostings[i]! / FREQUENCY_SPACE) / fieldCount);
          if (lastTerm[slot] === termNumber) continue;
          lastTerm[slot] = termNumber;
          termHits[slot]! += 1;
        }
      }
    }
    kept = matchedSlots.filter((slot) => termHits[slot] === termNumber);
  }

  // lunr divides the dot product by the query vector's magnitude (`lunr.Vector#similarity`).
  const magnitude = Math.sqrt(squaredMagnitude);
  const scores = new Map<string, number>();
  for (const slot of kept) scores.set(idBySlot[slot]!, accumulated[slot]! / magnitude);
  return scores;
}

/** `lunr.idf`, where `fieldPairs` counts (document, field) pairs holding the term. */
function inverseDocumentFrequency(fieldPairs: number, documentCount: number): number {
  return Math.log(1 + Math.abs((documentCount - fieldPairs + 0.5) / (fieldPairs + 0.5)));
}

/** One term's BM25 weight in one field, written exactly as lunr.Builder#createFieldVectors computes it. */
function termWeight(idf: number, frequency: number, length: number, averageLength: number, boost: number): number {
  let score = (idf * ((K1 + 1) * frequency)) / (K1 * (1 - B + B * (length / averageLength)) + frequency);
  score *= boost;
  // lunr stores weights rounded to 3 decimals; doing the same keeps scores and ties identical to lunr's.
  return Math.round(score * 1000) / 1000;
}
