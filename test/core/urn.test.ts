import { describe, expect, it } from 'vitest';
import { CatalogError } from '../../src/errors';
import {
  decodeUrnFromPath,
  encodeUrnForPath,
  entityTypeOf,
  formatUrn,
  isUrn,
  knownUrnProblem,
  parseUrn,
  urnKey,
  urnProblem,
} from '../../src/core/urn';

const DATASET = 'urn:li:dataset:(urn:li:dataPlatform:hive,db.table,PROD)';

describe('URNs', () => {
  it('parses a simple URN', () => {
    expect(parseUrn('urn:li:corpuser:datahub')).toEqual({
      urn: 'urn:li:corpuser:datahub',
      namespace: 'li',
      entityType: 'corpuser',
      key: 'datahub',
      parts: ['datahub'],
    });
  });

  it('parses a tuple key with a nested URN', () => {
    const parsed = parseUrn(DATASET);
    expect(parsed.entityType).toBe('dataset');
    expect(parsed.key).toBe('(urn:li:dataPlatform:hive,db.table,PROD)');
    expect(parsed.parts).toEqual(['urn:li:dataPlatform:hive', 'db.table', 'PROD']);
  });

  it('splits tuple parts only at the top level', () => {
    const urn = 'urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD),user_id)';
    expect(parseUrn(urn).parts).toEqual(['urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)', 'user_id']);
  });

  it('keeps dots and colons of a structured property key', () => {
    expect(parseUrn('urn:li:structuredProperty:io.acryl.privacy.retentionTime').key).toBe('io.acryl.privacy.retentionTime');
    expect(parseUrn('urn:li:dataType:datahub.string').key).toBe('datahub.string');
  });

  it.each([
    ['', 'empty'],
    ['dataset:foo', 'must start with "urn:"'],
    ['urn:li', 'namespace'],
    ['urn:li:dataset', 'entity type and a key'],
    ['urn:li:dataset:', 'empty key'],
    ['urn:li:1bad:key', 'invalid entity type'],
    ['urn:li:dataset:(a,b', 'unclosed'],
    ['urn:li:dataset:(a,b))', 'unbalanced'],
    ['urn:li:dataset:(a,,b)', 'empty part'],
    ['urn:li:dataset:(urn:li:x,b)', 'invalid URN in its key'],
    ['urn:li:corpuser:ana smith', 'white space'],
    ['urn:li:dataset:a(b)', 'parentheses'],
  ])('refuses %j as INVALID_INPUT naming the offending text (%s)', (text, why) => {
    let error: unknown;
    try {
      parseUrn(text, 'assetUrn');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as CatalogError).code).toBe('INVALID_INPUT');
    expect((error as CatalogError).message).toContain(why);
    expect((error as CatalogError).message).toContain('assetUrn');
    if (text) expect((error as CatalogError).message).toContain(text);
    expect(isUrn(text)).toBe(false);
  });

  it('refuses non-strings', () => {
    expect(() => parseUrn(42)).toThrow(CatalogError);
    expect(isUrn(undefined)).toBe(false);
  });

  it('formats simple and tuple keys, and validates what it formats', () => {
    expect(formatUrn('corpuser', 'ana')).toBe('urn:li:corpuser:ana');
    expect(formatUrn('dataset', ['urn:li:dataPlatform:hive', 'db.t', 'PROD'])).toBe('urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)');
    expect(() => formatUrn('dataset', 'a b')).toThrow(CatalogError);
  });

  it('reads the entity type and key of a valid URN', () => {
    expect(entityTypeOf(DATASET)).toBe('dataset');
    expect(urnKey(DATASET)).toBe('(urn:li:dataPlatform:hive,db.table,PROD)');
  });

  it('percent-encodes for one path segment and decodes once', () => {
    const encoded = encodeUrnForPath(DATASET);
    expect(encoded).not.toMatch(/[:(),/]/);
    expect(decodeUrnFromPath(encoded)).toBe(DATASET);
    // Decoding once: an encoded percent stays encoded.
    expect(decodeUrnFromPath(encodeUrnForPath('urn:li:corpuser:a%2Fb'))).toBe('urn:li:corpuser:a%2Fb');
    expect(() => decodeUrnFromPath('urn%3Ali%3Z')).toThrow(CatalogError);
  });

  it('knownUrnProblem answers like urnProblem, on first and later calls, for good and bad URNs', () => {
    const cases: unknown[] = [
      DATASET,
      'urn:li:corpuser:datahub',
      'urn:li:corpuser:',
      'not-a-urn',
      '',
      42,
      undefined,
      'urn:li:corpuser:a b',
    ];
    for (let round = 0; round < 3; round++) {
      for (const text of cases) expect(knownUrnProblem(text)).toBe(urnProblem(text));
    }
    expect(knownUrnProblem('urn:li:corpuser:')).toMatch(/empty key/);
  });
});
