/** What the search benchmark's workloads share: the properties, the cases, loading, timing. */
import type { Catalog, FacetFilterInput } from '../src';
import type { GeneratedDataset } from './generator';
import { time } from './harness';

export const ADMIN = 'urn:li:corpuser:admin';
export const NAMES = ['tier', 'owner', 'score', 'reviewed', 'costCenter'] as const;
export type PropertyName = (typeof NAMES)[number];
export const VALUE_TYPES: Record<PropertyName, 'string' | 'number' | 'date'> = {
  tier: 'string',
  owner: 'string',
  score: 'number',
  reviewed: 'date',
  costCenter: 'string',
};
export const propertyUrn = (name: PropertyName): string => `urn:li:structuredProperty:bench.${name}`;
export const field = (name: PropertyName): string => `structuredProperties.bench.${name}`;

/** One benchmarked question: its filters (as a client sends them) and how many times to ask it. */
export interface FilterCase {
  label: string;
  kind: 'filter' | 'and';
  filters: FacetFilterInput[];
}

export const CASES: readonly FilterCase[] = [
  { label: 'EQUAL tier=bronze (50%)', kind: 'filter', filters: [{ field: field('tier'), values: ['bronze'] }] },
  { label: 'EQUAL owner=team-0042 (0.1%)', kind: 'filter', filters: [{ field: field('owner'), values: ['team-0042'] }] },
  { label: 'GREATER_THAN score>90 (10%)', kind: 'filter', filters: [{ field: field('score'), values: ['90'], condition: 'GREATER_THAN' }] },
  { label: 'EXISTS costCenter (30%)', kind: 'filter', filters: [{ field: field('costCenter'), condition: 'EXISTS' }] },
  {
    label: 'AND tier=gold, score>50',
    kind: 'and',
    filters: [
      { field: field('tier'), values: ['gold'] },
      { field: field('score'), values: ['50'], condition: 'GREATER_THAN' },
    ],
  },
  {
    label: 'AND tier=bronze, costCenter EXISTS, reviewed>=2025-07-01',
    kind: 'and',
    filters: [
      { field: field('tier'), values: ['bronze'] },
      { field: field('costCenter'), condition: 'EXISTS' },
      { field: field('reviewed'), values: ['2025-07-01'], condition: 'GREATER_THAN_OR_EQUAL_TO' },
    ],
  },
  {
    label: 'AND owner=team-0042, score>50',
    kind: 'and',
    filters: [
      { field: field('owner'), values: ['team-0042'] },
      { field: field('score'), values: ['50'], condition: 'GREATER_THAN' },
    ],
  },
];

export const FACETS: readonly PropertyName[] = ['tier', 'owner'];

export function assignments(d: GeneratedDataset) {
  const s = (string: string) => [{ string }];
  return [
    { propertyUrn: propertyUrn('tier'), values: s(d.tier) },
    { propertyUrn: propertyUrn('owner'), values: s(d.owner) },
    { propertyUrn: propertyUrn('score'), values: [{ double: d.score }] },
    { propertyUrn: propertyUrn('reviewed'), values: s(d.reviewed) },
    ...(d.costCenter ? [{ propertyUrn: propertyUrn('costCenter'), values: s(d.costCenter) }] : []),
  ];
}

/** Creates the properties and writes the datasets through the public API; returns the definition keys. */
export async function load(
  catalog: Catalog,
  datasets: readonly GeneratedDataset[],
): Promise<{ ms: number; keys: Record<PropertyName, string> }> {
  const keys = {} as Record<PropertyName, string>;
  for (const name of NAMES) {
    const view = await catalog.properties.create(ADMIN, {
      qualifiedName: `bench.${name}`,
      displayName: name,
      valueType: VALUE_TYPES[name],
      entityTypes: ['dataset'],
    });
    keys[name] = view.definitionKey;
  }
  const { ms } = await time(async () => {
    await catalog.entities.upsertMany(
      ADMIN,
      datasets.map((d) => ({ urn: d.urn, aspects: { datasetProperties: { name: d.name, description: d.description } } })),
    );
    await catalog.properties.upsertValuesMany(
      ADMIN,
      datasets.map((d) => ({ urn: d.urn, properties: assignments(d) })),
    );
  });
  return { ms, keys };
}

export { interleaved } from './harness';

export function sameResult(label: string, library: unknown, baseline: unknown): void {
  const a = JSON.stringify(library);
  const b = JSON.stringify(baseline);
  if (a !== b)
    throw new Error(`${label}: the library and the baseline disagree:\n  library  ${a.slice(0, 400)}\n  baseline ${b.slice(0, 400)}`);
}

export const scrollInput = (filters: FacetFilterInput[]) => ({
  types: ['DATASET' as const],
  query: '*',
  count: 20,
  orFilters: [{ and: filters }],
});
