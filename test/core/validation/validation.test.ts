import { describe, expect, it } from 'vitest';
import { BUILT_IN_ASPECTS } from '../../../src/core/entities/registry';
import { checkSchema, compileSchema, compiledSchemaCount, lazySchemaCheck, MAX_COMPILED_SCHEMAS } from '../../../src/core/validation';

describe('the validation module', () => {
  it('compiles a schema once per content: fresh equal literals do not grow the cache', () => {
    const before = compiledSchemaCount();
    for (let i = 0; i < 10_000; i++) {
      expect(checkSchema({ type: 'array', items: { type: 'string', minLength: 3 } }, ['abc'])).toEqual([]);
    }
    expect(compiledSchemaCount()).toBe(before + 1);
  });

  it('compiles the schema of every built-in aspect (a catalog compiles each on its first check only)', () => {
    expect(BUILT_IN_ASPECTS.length).toBeGreaterThan(20);
    for (const aspect of BUILT_IN_ASPECTS) expect(() => compileSchema(aspect.schema), aspect.name).not.toThrow();
  });

  it('compiles a lazy check on its first use, once, with the answers of an eager one', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], description: 'lazy-check' };
    const before = compiledSchemaCount();
    const lazy = lazySchemaCheck(schema);
    expect(compiledSchemaCount()).toBe(before);
    expect(lazy({ n: 'x' }, '/in')).toEqual([{ path: '/in/n', message: 'must be integer' }]);
    expect(compiledSchemaCount()).toBe(before + 1);
    expect(lazy({ n: 1 })).toEqual([]);
    expect(lazy({})).toEqual(compileSchema(schema)({}));
    expect(compiledSchemaCount()).toBe(before + 1);
  });

  it('reports every violation with its path and prefix', () => {
    const check = compileSchema({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'string' } },
      required: ['c'],
      additionalProperties: false,
    });
    const found = check({ a: 'x', b: 1, d: true }, '/input');
    expect(found).toEqual(
      expect.arrayContaining([
        { path: '/input/a', message: 'must be number' },
        { path: '/input/b', message: 'must be string' },
        { path: '/input/c', message: 'is required' },
        { path: '/input/d', message: 'is not an allowed field' },
      ]),
    );
  });

  it('is a bounded LRU: past the limit the least recently used schema is dropped, and still works when asked again', () => {
    const first = { type: 'string', maxLength: 1, description: 'lru-first' };
    const check = compileSchema(first);
    for (let i = 0; i < MAX_COMPILED_SCHEMAS + 10; i++) checkSchema({ type: 'number', multipleOf: 1, description: `lru-${i}` }, 1);
    expect(compiledSchemaCount()).toBe(MAX_COMPILED_SCHEMAS);
    // The evicted schema is compiled again on use, with the same answers.
    expect(check('ab')).toEqual([{ path: '/', message: 'must NOT have more than 1 characters' }]);
    expect(check('a')).toEqual([]);
    expect(compiledSchemaCount()).toBe(MAX_COMPILED_SCHEMAS);
  });
});
