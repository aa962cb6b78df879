/**
 * Benchmark of the in-memory adapter's incremental full-text index against lunr's rebuild cost.
 *
 * Node 20 cannot run TypeScript directly, so until this is wired into `npm run bench`, run it with:
 *   npx esbuild bench/fulltext-bench.ts --bundle --platform=node --format=esm \
 *     --outfile=/tmp/ft-bench.mjs && node /tmp/ft-bench.mjs [--docs=100000]
 * lunr is bundled in: with --external:lunr, a bundle written outside the repository cannot resolve it.
 */
import { pathToFileURL } from 'node:url';
import lunr from 'lunr';
import { createFullTextIndex, type FullTextFieldConfig } from '../adapters/memory/fulltext';
import { seededRandom } from '../src/testing/random';

export interface LatencyFigures {
  medianMs: number;
  maxMs: number;
  /** Median number of matching documents, to show how much scoring work the queries did. */
  medianMatches: number;
}

export interface FullTextBenchFigures {
  docs: number;
  buildMs: number;
  heapUsedMb: number;
  writeToVisible: LatencyFigures;
  oneTermQuery: LatencyFigures;
  twoTermQuery: LatencyFigures;
  prefixQuery: LatencyFigures;
  prefixExpansion: LatencyFigures;
  lunrBuildDocs: number;
  lunrBuildMs: number;
}

interface BenchDoc {
  id: string;
  name: string;
  description: string;
  urnKey: string;
}

const FIELDS: readonly FullTextFieldConfig[] = [{ name: 'name', boost: 10 }, { name: 'description' }, { name: 'urnKey' }];
const VOCABULARY_SIZE = 5_000;
const SAMPLES = 50;
const LUNR_DOCS = 10_000;
const PLATFORMS = ['hive', 'kafka', 'postgres', 'snowflake', 'bigquery', 's3'];
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ser',
  'ton',
  'ar',
  'vel',
  'dru',
  'pin',
  'ost',
  'ra',
  'ne',
  'qui',
  'bal',
  'tor',
  'em',
  'sa',
  'lu',
  'fen',
  'gor',
  'hi',
  'ja',
  'cu',
  'stom',
  'ble',
  'dat',
  'ord',
  'ix',
  'um',
  'per',
];

export function runFullTextBench(options: { docs?: number } = {}): FullTextBenchFigures {
  const docCount = options.docs ?? 100_000;
  if (!Number.isInteger(docCount) || docCount <= 0) throw new RangeError(`docs must be a positive integer, got ${docCount}`);
  const random = seededRandom(20240601);
  const vocabulary = makeVocabulary(random);
  const pickWord = zipfSampler(vocabulary, random);
  const docs = Array.from({ length: docCount }, (_, i) => makeDoc(i, pickWord, random));

  const index = createFullTextIndex(FIELDS);
  const buildStart = performance.now();
  for (const doc of docs) index.upsert(doc.id, fieldsOf(doc));
  const buildMs = performance.now() - buildStart;
  const heapUsedMb = process.memoryUsage().heapUsed / 2 ** 20;

  // Inputs are generated up front so that only index work is timed.
  const newDocs = samples((sample) => {
    const doc = makeDoc(docCount + sample, pickWord, random);
    return { doc, unique: `zq${sample}uniqueword`, fields: { ...fieldsOf(doc), description: `${doc.description} zq${sample}uniqueword` } };
  });
  const writeToVisible = measure(newDocs, ({ doc, unique, fields }) => {
    index.upsert(doc.id, fields);
    const hits = index.search(unique);
    if (hits?.has(doc.id) !== true) throw new Error(`written document ${doc.id} is not searchable`);
    return hits.size;
  });
  const query = (text: string): number => index.search(text)?.size ?? 0;
  const oneTermQuery = measure(
    samples(() => pickWord()),
    query,
  );
  const twoTermQuery = measure(
    samples(() => `${pickWord()} ${pickWord()}`),
    query,
  );
  // Three letters of a frequent word: a typeahead-style prefix that expands to many terms.
  const prefixQuery = measure(
    samples(() => `${pickWord().slice(0, 3)}*`),
    query,
  );
  // A prefix no term has: isolates the cost of expanding a prefix against the vocabulary.
  const prefixExpansion = measure(
    samples((sample) => `qq${sample}x*`),
    query,
  );

  const lunrDocs = docs.slice(0, Math.min(LUNR_DOCS, docCount));
  const lunrStart = performance.now();
  lunr(function () {
    this.ref('id');
    for (const field of FIELDS) this.field(field.name, { boost: field.boost ?? 1 });
    for (const doc of lunrDocs) this.add(doc);
  });
  const lunrBuildMs = performance.now() - lunrStart;

  return {
    docs: docCount,
    buildMs,
    heapUsedMb,
    writeToVisible,
    oneTermQuery,
    twoTermQuery,
    prefixQuery,
    prefixExpansion,
    lunrBuildDocs: lunrDocs.length,
    lunrBuildMs,
  };
}

export function formatFullTextBench(figures: FullTextBenchFigures): string {
  const rebuild = figures.lunrBuildMs;
  const rows: [string, number, string][] = [
    [`incremental build, ${figures.docs} docs`, figures.buildMs, '<= 10000'],
    ['write -> visible, median', figures.writeToVisible.medianMs, '<= 100'],
    ['write -> visible, max', figures.writeToVisible.maxMs, '<= 100'],
    [`1-term query, median (${figures.oneTermQuery.medianMatches} hits)`, figures.oneTermQuery.medianMs, ''],
    ['1-term query, max', figures.oneTermQuery.maxMs, ''],
    [`2-term query, median (${figures.twoTermQuery.medianMatches} hits)`, figures.twoTermQuery.medianMs, ''],
    ['2-term query, max', figures.twoTermQuery.maxMs, ''],
    [`prefix query, median (${figures.prefixQuery.medianMatches} hits)`, figures.prefixQuery.medianMs, '<< 50'],
    ['prefix query, max', figures.prefixQuery.maxMs, '<< 50'],
    ['prefix expansion only (no-hit prefix), median', figures.prefixExpansion.medianMs, ''],
    [`lunr() build, ${figures.lunrBuildDocs} docs (reference)`, rebuild, ''],
  ];
  const lines = [
    `| measure | ms | goal | ratio to lunr() ${figures.lunrBuildDocs}-doc build |`,
    '|---|---:|---:|---:|',
    ...rows.map(([label, ms, goal]) => `| ${label} | ${ms.toFixed(3)} | ${goal} | ${(ms / rebuild).toPrecision(3)} |`),
  ];
  return `${lines.join('\n')}\nheap used after build: ${figures.heapUsedMb.toFixed(0)} MB`;
}

function fieldsOf(doc: BenchDoc): Record<string, string> {
  return { name: doc.name, description: doc.description, urnKey: doc.urnKey };
}

function makeDoc(i: number, pickWord: () => string, random: () => number): BenchDoc {
  const nameLength = 2 + Math.floor(random() * 3);
  const platform = PLATFORMS[Math.floor(random() * PLATFORMS.length)] ?? 'hive';
  return {
    id: `doc-${i}`,
    name: Array.from({ length: nameLength }, pickWord).join(' '),
    description: Array.from({ length: 20 }, pickWord).join(' '),
    urnKey: `urn:li:dataset:(urn:li:dataPlatform:${platform},${pickWord()}.table_${i},PROD)`,
  };
}

function makeVocabulary(random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < VOCABULARY_SIZE) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let s = 0; s < syllables; s += 1) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)] ?? '';
    words.add(word);
  }
  return [...words];
}

/** Draws words with probability proportional to 1 / rank (Zipf, s = 1), like natural text. */
function zipfSampler(words: readonly string[], random: () => number): () => string {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= words.length; rank += 1) {
    total += 1 / rank;
    cumulative.push(total);
  }
  return () => {
    const target = random() * total;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] ?? total) < target) low = middle + 1;
      else high = middle;
    }
    return words[low] ?? '';
  };
}

function samples<T>(make: (sample: number) => T): T[] {
  return Array.from({ length: SAMPLES }, (_, sample) => make(sample));
}

/** Times `run` once per input; `run` returns the number of matches. */
function measure<T>(inputs: readonly T[], run: (input: T) => number): LatencyFigures {
  const times: number[] = [];
  const matches: number[] = [];
  for (const input of inputs) {
    const start = performance.now();
    matches.push(run(input));
    times.push(performance.now() - start);
  }
  return { medianMs: median(times), maxMs: Math.max(...times), medianMatches: median(matches) };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const entryPoint = process.argv[1];
if (entryPoint !== undefined && import.meta.url === pathToFileURL(entryPoint).href) {
  const docsArgument = process.argv.find((argument) => argument.startsWith('--docs='));
  const docs = docsArgument === undefined ? undefined : Number(docsArgument.slice('--docs='.length));
  console.log(formatFullTextBench(runFullTextBench({ docs })));
}
