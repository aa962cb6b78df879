import { describe, expect, it } from 'vitest';
import type { Violation } from '../../../src/errors';
import {
  checkFacetFilters,
  matchesRecord,
  matchesRecordCondition,
  normalizeFacetFilter,
  resolveRecordConditions,
  type RecordCondition,
} from '../../../src/core/search/filters';

const fields = { name: 'string', owner: 'string', expiresAt: 'number' } as const;
const record = { name: 'ci-Weekly', owner: 'urn:li:corpuser:alice', expiresAt: 100 };

function condition(partial: Partial<RecordCondition> & Pick<RecordCondition, 'field' | 'operator'>): RecordCondition {
  return { values: [], negated: false, ...partial };
}

describe('FacetFilterInput', () => {
  it('defaults to EQUAL, not negated; values win over value', () => {
    expect(normalizeFacetFilter({ field: 'name', value: 'a' })).toEqual({
      field: 'name',
      operator: 'EQUAL',
      values: ['a'],
      negated: false,
    });
    expect(normalizeFacetFilter({ field: 'name', value: 'a', values: ['b', 'c'], condition: 'IN', negated: true })).toEqual({
      field: 'name',
      operator: 'IN',
      values: ['b', 'c'],
      negated: true,
    });
    expect(normalizeFacetFilter({ field: 'name', value: 'a', values: [], condition: null, negated: null })).toEqual({
      field: 'name',
      operator: 'EQUAL',
      values: ['a'],
      negated: false,
    });
  });

  it('checks a list, naming every problem with its path', () => {
    const violations: Violation[] = [];
    expect(
      checkFacetFilters(
        [
          { field: 'name', condition: 'EXISTS' },
          { field: 'owner', values: ['x'] },
        ],
        '/filters',
        violations,
      ),
    ).toHaveLength(2);
    expect(violations).toEqual([]);
    checkFacetFilters([{ field: 'name' }, { field: 'name', value: 'x', condition: 'SOUNDS_LIKE' }, { value: 'x' }], '/filters', violations);
    expect(violations.map((v) => v.path).sort()).toEqual(['/filters/1/condition', '/filters/2/field']);
    const missing: Violation[] = [];
    checkFacetFilters([{ field: 'name', condition: 'EQUAL' }], '/filters', missing);
    expect(missing.map((v) => v.path)).toEqual(['/filters/0']);
    expect(checkFacetFilters(undefined, '/filters', missing)).toEqual([]);
  });

  it('types values for number fields and refuses unknown fields and text operators on numbers', () => {
    const violations: Violation[] = [];
    const resolved = resolveRecordConditions(
      [
        { field: 'expiresAt', operator: 'LESS_THAN', values: ['150', '1e2'], negated: false },
        { field: 'nope', operator: 'EQUAL', values: ['x'], negated: false },
        { field: 'expiresAt', operator: 'GREATER_THAN', values: ['soon', ' '], negated: false },
        { field: 'expiresAt', operator: 'CONTAIN', values: ['1'], negated: false },
      ],
      fields,
      '/filters',
      violations,
    );
    expect(resolved[0]?.values).toEqual([150, 100]);
    expect(violations.map((v) => v.path)).toEqual([
      '/filters/1/field',
      '/filters/2/values/0',
      '/filters/2/values/1',
      '/filters/3/condition',
    ]);
  });
});

describe('evaluating conditions over records', () => {
  it('applies every operator with "any of" values', () => {
    const yes: RecordCondition[] = [
      condition({ field: 'name', operator: 'EQUAL', values: ['x', 'ci-Weekly'] }),
      condition({ field: 'name', operator: 'IN', values: ['ci-Weekly'] }),
      condition({ field: 'name', operator: 'IEQUAL', values: ['CI-WEEKLY'] }),
      condition({ field: 'name', operator: 'CONTAIN', values: ['Week'] }),
      condition({ field: 'name', operator: 'START_WITH', values: ['ci-'] }),
      condition({ field: 'name', operator: 'END_WITH', values: ['ly'] }),
      condition({ field: 'name', operator: 'EXISTS' }),
      condition({ field: 'expiresAt', operator: 'GREATER_THAN', values: [99] }),
      condition({ field: 'expiresAt', operator: 'GREATER_THAN_OR_EQUAL_TO', values: [100] }),
      condition({ field: 'expiresAt', operator: 'LESS_THAN', values: [101] }),
      condition({ field: 'expiresAt', operator: 'LESS_THAN_OR_EQUAL_TO', values: [100] }),
      condition({ field: 'expiresAt', operator: 'LESS_THAN', values: [20, 1000] }),
    ];
    const no: RecordCondition[] = [
      condition({ field: 'name', operator: 'EQUAL', values: ['ci-weekly'] }),
      condition({ field: 'name', operator: 'CONTAIN', values: ['week'] }),
      condition({ field: 'expiresAt', operator: 'GREATER_THAN', values: [100] }),
      condition({ field: 'expiresAt', operator: 'LESS_THAN', values: [100] }),
      condition({ field: 'expiresAt', operator: 'EQUAL', values: ['100'] }),
    ];
    expect(yes.map((c) => matchesRecordCondition(record, c))).toEqual(yes.map(() => true));
    expect(no.map((c) => matchesRecordCondition(record, c))).toEqual(no.map(() => false));
    expect(no.map((c) => matchesRecordCondition(record, { ...c, negated: true }))).toEqual(no.map(() => true));
  });

  it('matches a missing field only with negated conditions, and ANDs a list', () => {
    const sparse = { name: 'x', expiresAt: null, owner: '' };
    expect(matchesRecordCondition(sparse, condition({ field: 'expiresAt', operator: 'LESS_THAN', values: [1e15] }))).toBe(false);
    expect(matchesRecordCondition(sparse, condition({ field: 'expiresAt', operator: 'EXISTS' }))).toBe(false);
    expect(matchesRecordCondition(sparse, condition({ field: 'owner', operator: 'EXISTS', negated: true }))).toBe(true);
    expect(matchesRecordCondition(sparse, condition({ field: 'expiresAt', operator: 'EQUAL', values: [1], negated: true }))).toBe(true);
    const both = [
      condition({ field: 'name', operator: 'START_WITH', values: ['ci'] }),
      condition({ field: 'expiresAt', operator: 'LESS_THAN', values: [50] }),
    ];
    expect(matchesRecord(record, both)).toBe(false);
    expect(matchesRecord(record, both.slice(0, 1))).toBe(true);
    expect(matchesRecord(record, [])).toBe(true);
  });
});
