/**
 * A seeded random catalog of search documents and seeded random search requests, for comparing an
 * adapter with the reference evaluation (search-reference.ts). The same seed gives the same catalog.
 */
import {
  FILTER_OPERATORS,
  type AggregateRequest,
  type FilterOperator,
  type SearchCondition,
  type SearchDocument,
  type SearchDocumentProperty,
  type SearchField,
  type SearchRequest,
  type SearchScope,
} from '../adapter/types';
import { seededRandom } from './random';

export type Random = () => number;

export { seededRandom };

const pick = <T>(random: Random, values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
const chance = (random: Random, p: number): boolean => random() < p;
const between = (random: Random, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

function pickSome<T>(random: Random, values: readonly T[], low: number, high: number): T[] {
  const count = between(random, low, high);
  return Array.from({ length: count }, () => pick(random, values));
}

/** The properties of the random catalog, each with the definition key queries use and a stale one. */
const RANDOM_PROPERTIES = {
  tier: { urn: 'urn:li:structuredProperty:io.conformance.tier', key: 'tier:2', staleKey: 'tier:1', valueKind: 'string' },
  score: { urn: 'urn:li:structuredProperty:io.conformance.score', key: 'score:1', staleKey: 'score:0', valueKind: 'number' },
  reviewed: { urn: 'urn:li:structuredProperty:io.conformance.reviewed', key: 'reviewed:1', staleKey: 'reviewed:0', valueKind: 'string' },
  tags: { urn: 'urn:li:structuredProperty:io.conformance.tags', key: 'tags:1', staleKey: 'tags:0', valueKind: 'string' },
  sizes: { urn: 'urn:li:structuredProperty:io.conformance.sizes', key: 'sizes:1', staleKey: 'sizes:0', valueKind: 'number' },
  costCenter: { urn: 'urn:li:structuredProperty:io.conformance.costCenter', key: 'cc:1', staleKey: 'cc:0', valueKind: 'string' },
} as const;

type PropertyName = keyof typeof RANDOM_PROPERTIES;

const ENTITY_TYPES = ['dataset', 'dataFlow', 'chart'] as const;
const PLATFORMS = ['hive', 'kafka', 'snowflake', 'Postgres'];
const TIERS = ['bronze', 'silver', 'gold', 'platinum', 'Gold'];
const TIER_WEIGHTS = [0.45, 0.25, 0.15, 0.1, 0.05];
const TAGS = ['pii', 'PII', 'finance', 'core', 'deprecated', 'raw', 'curated', 'gold-standard'];
const COST_CENTERS = ['cc-1', 'cc-2', 'cc-10', 'cc-20', 'CC-1'];
/** Inflections, stop words, diacritics and case, so that analysis differences would show. */
export const RANDOM_WORDS = [
  'customer',
  'customers',
  'order',
  'orders',
  'ordering',
  'revenue',
  'daily',
  'monthly',
  'sales',
  'event',
  'events',
  'pipeline',
  'pipelines',
  'table',
  'tables',
  'running',
  'runs',
  'sky',
  'skies',
  'quality',
  'analysis',
  'analyses',
  'café',
  'Cafe',
  'ÉTÉ',
  'summer',
  'the',
  'of',
  'and',
  'with',
  'data',
  'hourly',
  'agreed',
  'relational',
  'x2',
  '42',
];

function weighted<T>(random: Random, values: readonly T[], weights: readonly number[]): T {
  let r = random();
  for (let i = 0; i < values.length; i++) {
    r -= weights[i]!;
    if (r <= 0) return values[i]!;
  }
  return values[values.length - 1]!;
}

function randomScore(random: Random): number {
  const r = random();
  if (r < 0.1) return 0;
  if (r < 0.2) return -between(random, 1, 20);
  if (r < 0.6) return between(random, 1, 100);
  return between(random, 0, 400) / 4; // quarters: 12.25, 50.5, ...
}

function randomDate(random: Random): string {
  return `202${between(random, 3, 5)}-${String(between(random, 1, 12)).padStart(2, '0')}-${String(between(random, 1, 28)).padStart(2, '0')}`;
}

function words(random: Random, low: number, high: number, separator: string): string {
  return pickSome(random, RANDOM_WORDS, low, high).join(separator);
}

function urnFor(random: Random, entityType: string, i: number, name: string): { urn: string; key: string } {
  const id = `${name.replace(/[^A-Za-z0-9_]/g, '_') || 'x'}_${i}`;
  let key: string;
  if (entityType === 'dataset')
    key = `(urn:li:dataPlatform:${pick(random, PLATFORMS)},db.${chance(random, 0.2) ? id.toUpperCase() : id},${pick(random, ['PROD', 'DEV'])})`;
  else if (entityType === 'dataFlow') key = `(airflow,flow_${id},PROD)`;
  else key = `(looker,${id})`;
  return { urn: `urn:li:${entityType}:${key}`, key };
}

/** One random document. `i` keeps URNs unique. */
export function randomDocument(random: Random, i: number): SearchDocument {
  const entityType = weighted(random, ENTITY_TYPES, [0.7, 0.15, 0.15]);
  const name = words(random, 1, 3, chance(random, 0.5) ? '_' : ' ');
  const { urn, key } = urnFor(random, entityType, i, name);
  const fields: Record<string, string[]> = {};
  if (entityType !== 'dataFlow') fields.name = [name];
  if (entityType === 'dataset') {
    const platform = /dataPlatform:([^,]+)/.exec(key)?.[1] ?? 'hive';
    fields.platform = [`urn:li:dataPlatform:${platform}`];
    fields.origin = [key.endsWith('PROD)') ? 'PROD' : 'DEV'];
  }
  const properties: SearchDocumentProperty[] = [];
  const add = (property: PropertyName, values: Array<string | number>): void => {
    const spec = RANDOM_PROPERTIES[property];
    properties.push({ propertyUrn: spec.urn, definitionKey: chance(random, 0.08) ? spec.staleKey : spec.key, values });
  };
  if (chance(random, 0.9)) add('tier', [weighted(random, TIERS, TIER_WEIGHTS)]);
  if (chance(random, 0.85)) add('score', [randomScore(random)]);
  if (chance(random, 0.8)) add('reviewed', [randomDate(random)]);
  if (chance(random, 0.7)) add('tags', [...new Set(pickSome(random, TAGS, 1, 3))]);
  if (chance(random, 0.5)) add('sizes', [...new Set(Array.from({ length: between(random, 1, 3) }, () => randomScore(random)))]);
  if (chance(random, 0.3)) add('costCenter', [pick(random, COST_CENTERS)]);
  return {
    urn,
    entityType,
    removed: chance(random, 0.15),
    text: {
      urnKey: key,
      ...(chance(random, 0.9) ? { name } : {}),
      ...(chance(random, 0.8) ? { description: words(random, 0, 12, ' ') } : {}),
    },
    fields,
    properties,
  };
}

export function randomCatalog(seed: number, count: number): SearchDocument[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => randomDocument(random, i));
}

// --- requests ---------------------------------------------------------------------------------------

const STANDARD_FIELDS = ['platform', 'name', 'origin', 'unknownField'];

function propertyField(random: Random, name: PropertyName): SearchField {
  const spec = RANDOM_PROPERTIES[name];
  return {
    kind: 'property',
    propertyUrn: spec.urn,
    definitionKey: chance(random, 0.1) ? spec.staleKey : spec.key,
    valueKind: spec.valueKind,
  };
}

function randomField(random: Random): SearchField {
  const r = random();
  if (r < 0.08) return { kind: 'entityType' };
  if (r < 0.15) return { kind: 'urn' };
  if (r < 0.35) return { kind: 'field', name: pick(random, STANDARD_FIELDS) };
  return propertyField(random, pick(random, Object.keys(RANDOM_PROPERTIES) as PropertyName[]));
}

/** Values seen in the catalog for the field, plus a few that are not there. */
function valuePool(documents: readonly SearchDocument[], field: SearchField): Array<string | number> {
  const pool = new Set<string | number>();
  for (const d of documents) {
    if (field.kind === 'entityType') pool.add(d.entityType);
    else if (field.kind === 'urn') pool.add(d.urn);
    else if (field.kind === 'field') for (const v of d.fields[field.name] ?? []) pool.add(v);
    else for (const p of d.properties) if (p.propertyUrn === field.propertyUrn) for (const v of p.values) pool.add(v);
  }
  if (field.kind === 'property' && field.valueKind === 'number') [-1000, 0, 0.5, 37.25, 1e6].forEach((v) => pool.add(v));
  else ['', 'zzz', 'a', 'urn:li:dataset:(', 'Gold', '2024-06', 'cc-'].forEach((v) => pool.add(v));
  return [...pool];
}

/** A value derived from a pool value, so that substring and prefix tests hit sometimes. */
function variant(random: Random, value: string | number, operator: FilterOperator): string | number {
  if (typeof value === 'number') return chance(random, 0.3) ? value + pick(random, [-0.5, 0.25, 1]) : value;
  if (operator === 'CONTAIN' && value.length > 2) {
    const from = between(random, 0, value.length - 2);
    return value.slice(from, from + between(random, 1, 4));
  }
  if (operator === 'START_WITH') return value.slice(0, between(random, 0, value.length));
  if (operator === 'END_WITH') return value.slice(between(random, 0, value.length));
  if (operator === 'IEQUAL') return chance(random, 0.5) ? value.toUpperCase() : value;
  return value;
}

export function randomCondition(random: Random, documents: readonly SearchDocument[]): SearchCondition {
  const field = randomField(random);
  const operator = pick(random, FILTER_OPERATORS);
  const pool = valuePool(documents, field);
  const values =
    operator === 'EXISTS'
      ? []
      : Array.from({ length: between(random, chance(random, 0.03) ? 0 : 1, 3) }, () => variant(random, pick(random, pool), operator));
  return { field, operator, values, negated: chance(random, 0.25) };
}

const TEXT_QUERIES = [
  'customer',
  'customers',
  'order*',
  'the',
  'the orders',
  'cafe',
  'CAFÉ',
  'ete',
  'sky',
  'skies',
  'analysis',
  'relational agreed',
  'cust*',
  'db',
  'hive',
  'prod',
  'x2',
  '42',
  'tables pipeline',
  'sale*',
  'run*',
  'monthly-revenue',
  'data.quality',
  'nothingmatches',
  '*',
  '   ',
  'urn:li:dataset',
  'airflow flow*',
  'gold',
];

export function randomScope(random: Random, documents: readonly SearchDocument[]): SearchScope {
  const groups = chance(random, 0.15) ? 0 : between(random, 1, 3);
  const filter = Array.from({ length: groups }, () =>
    Array.from({ length: between(random, chance(random, 0.05) ? 0 : 1, 3) }, () => randomCondition(random, documents)),
  );
  const entityTypes = chance(random, 0.6) ? [] : [...new Set(pickSome(random, [...ENTITY_TYPES, 'corpuser'], 1, 2))];
  const text = chance(random, 0.7) ? undefined : pick(random, TEXT_QUERIES);
  return { entityTypes, filter, includeRemoved: chance(random, 0.3), ...(text !== undefined ? { text } : {}) };
}

export function randomSearchRequest(random: Random, documents: readonly SearchDocument[]): SearchRequest {
  const scope = randomScope(random, documents);
  const order = chance(random, 0.5) ? 'urn' : 'relevance';
  const urns = documents.map((d) => d.urn);
  const request: SearchRequest = { ...scope, order, limit: pick(random, [1, 3, 10, 25, 1000]) };
  if (order === 'urn' && chance(random, 0.4))
    request.afterUrn = chance(random, 0.8) ? pick(random, urns) : 'urn:li:dataset:(urn:li:dataPlatform:hive,db.m';
  if (chance(random, 0.3)) request.offset = between(random, 0, 30);
  return request;
}

export function randomAggregateRequest(random: Random, documents: readonly SearchDocument[]): AggregateRequest {
  const scope = randomScope(random, documents);
  const facets = Array.from({ length: between(random, 1, 3) }, () => randomField(random));
  return { ...scope, facets, maxValues: pick(random, [1, 2, 5, 20, 100]) };
}
