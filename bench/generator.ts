import { seededRandom } from '../src/testing/random';

/**
 * A seeded generator of catalogs, shared by every benchmark: the same seed gives the same catalog.
 * Each dataset has a name, a 20-word description and five structured-property-like values:
 * a skewed 5-value enum, a string from 1,000 values, a number, a date, and a string present on 30%.
 */
export interface GeneratedDataset {
  urn: string;
  name: string;
  description: string;
  platform: string;
  tier: string;
  owner: string;
  score: number;
  reviewed: string;
  /** Present on about 30% of datasets. */
  costCenter?: string;
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'pa', 'qu', 'de', 'fo', 'gi', 'ha', 'jo', 'be', 'cy', 'wu', 'xi'];
const PLATFORMS = ['hive', 'snowflake', 'bigquery', 'postgres', 'kafka', 's3'];
/** Skewed: the first tier is the most common. */
const TIERS = ['bronze', 'silver', 'gold', 'platinum', 'diamond'];
const TIER_WEIGHTS = [0.5, 0.25, 0.13, 0.08, 0.04];

function makeVocabulary(random: () => number, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Zipf-like pick: low indices are much more frequent. */
function zipf(random: () => number, size: number): number {
  return Math.min(size - 1, Math.floor(size ** random()) - 1);
}

function pickWeighted<T>(random: () => number, values: readonly T[], weights: readonly number[]): T {
  let r = random();
  for (let i = 0; i < values.length; i++) {
    r -= weights[i]!;
    if (r <= 0) return values[i]!;
  }
  return values[values.length - 1]!;
}

export function* generateDatasets(options: { count: number; seed?: number }): Generator<GeneratedDataset> {
  const random = seededRandom(options.seed ?? 42);
  const vocabulary = makeVocabulary(random, 5_000);
  const owners = Array.from({ length: 1_000 }, (_, i) => `team-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < options.count; i++) {
    const platform = PLATFORMS[i % PLATFORMS.length]!;
    const nameWords = 2 + Math.floor(random() * 3);
    const name = Array.from({ length: nameWords }, () => vocabulary[zipf(random, vocabulary.length)]).join('_');
    const description = Array.from({ length: 20 }, () => vocabulary[zipf(random, vocabulary.length)]).join(' ');
    const day = 1 + Math.floor(random() * 28);
    const month = 1 + Math.floor(random() * 12);
    const dataset: GeneratedDataset = {
      urn: `urn:li:dataset:(urn:li:dataPlatform:${platform},db${i % 97}.${name}_${i},PROD)`,
      name,
      description,
      platform: `urn:li:dataPlatform:${platform}`,
      tier: pickWeighted(random, TIERS, TIER_WEIGHTS),
      owner: owners[Math.floor(random() * owners.length)]!,
      score: Math.round(random() * 10_000) / 100,
      reviewed: `2025-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    };
    if (random() < 0.3) dataset.costCenter = `cc-${Math.floor(random() * 50)}`;
    yield dataset;
  }
}
