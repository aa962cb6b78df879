import type { FacetFilterInput } from '../index';
import type { EntityScope } from './backend';
import { UsageError } from './io';

/** The options that choose entities the way search does: `--query`, `--type` and `--filter` (repeatable). */
export const SCOPE_OPTIONS = {
  query: { type: 'string', short: 'q' },
  type: { type: 'string', multiple: true },
  filter: { type: 'string', multiple: true },
} as const;

export const SCOPE_HELP = `  -q, --query <text>   full text over names, descriptions and URN keys ("*": everything)
  --type <type>        an entity type (dataset or DATASET); repeatable: any of them
  --filter <F=V>       a search filter: FIELD=VALUE, or FIELD!=VALUE for its negation; FIELD as search
                       takes it (platform, structuredProperties.<qualified name>, ...). Repeatable:
                       different fields must all match; the same field repeated matches any of its values`;

/**
 * The search scope of `--query`, `--type` and `--filter`; `chosen` is false when neither a query nor a
 * filter was given (the command then decides what "everything" means).
 */
export function scopeOf(values: { query?: string; type?: string[]; filter?: string[] }): { scope: EntityScope; chosen: boolean } {
  const conditions = new Map<string, FacetFilterInput & { values: string[] }>();
  for (const text of values.filter ?? []) {
    const match = /^([^=!]+?)\s*(!?=)(.*)$/s.exec(text);
    if (!match || match[1]!.trim() === '') throw new UsageError(`--filter takes FIELD=VALUE or FIELD!=VALUE, got "${text}"`);
    const field = match[1]!.trim();
    const negated = match[2] === '!=';
    const key = `${negated ? '!' : ''}${field}`;
    const condition = conditions.get(key) ?? { field, values: [], condition: 'EQUAL' as const, ...(negated ? { negated: true } : {}) };
    condition.values.push(match[3]!);
    conditions.set(key, condition);
  }
  const and = [...conditions.values()];
  const query = values.query?.trim();
  const types = values.type
    ?.flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return {
    scope: {
      query: query || '*',
      ...(types?.length ? { types: types as EntityScope['types'] } : {}),
      ...(and.length ? { orFilters: [{ and }] } : {}),
    },
    chosen: (query !== undefined && query !== '') || and.length > 0,
  };
}
