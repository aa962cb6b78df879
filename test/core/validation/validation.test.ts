import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ASPECTS } from '../../../src/core/entities/registry';
import { facetFilterSchema } from '../../../src/core/search/filters';
import { applyInputSchema } from '../../../src/core/stewardship/apply-input';
import { checkSchema, compileSchema, compiledSchemaCount, lazySchemaCheck, MAX_COMPILED_SCHEMAS } from '../../../src/core/validation';
import * as accessSchemas from '../../../src/core/validation/schemas/access';
import * as aspectSchemas from '../../../src/core/validation/schemas/aspects';
import * as searchSchemas from '../../../src/core/validation/schemas/search';
import * as propertySchemas from '../../../src/core/validation/schemas/structured-properties';
import * as timeseriesSchemas from '../../../src/core/validation/schemas/timeseries';

/**
 * Every schema the library ships, by name: at run time they are compiled without the meta-schema check that a
 * host's schema gets (src/core/validation/index.ts), so this file makes it. `listInputSchema` is a function of
 * the page size; STRUCTURED_PROPERTY_SETTINGS_FLAGS is a fragment (the properties of a schema), not a schema.
 */
function librarySchemas(): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  const modules = { accessSchemas, aspectSchemas, searchSchemas, propertySchemas, timeseriesSchemas };
  for (const [moduleName, exports] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(exports)) {
      if (name === 'STRUCTURED_PROPERTY_SETTINGS_FLAGS') continue;
      if (name === 'listInputSchema') found.push([`${moduleName}.${name}(100)`, accessSchemas.listInputSchema(100)]);
      else if (typeof value === 'object' && value !== null) found.push([`${moduleName}.${name}`, value]);
    }
  }
  found.push(['facetFilterSchema', facetFilterSchema], ['applyInputSchema', applyInputSchema]);
  for (const aspect of BUILT_IN_ASPECTS) found.push([`aspect ${aspect.name}`, aspect.schema]);
  return found;
}

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

  it('every schema the library ships is valid JSON Schema (the meta-schema check the run time leaves out)', () => {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: new (options: object) => Ajv };
    const metaChecker = new AjvClass({ allErrors: true, strict: false });
    const schemas = librarySchemas();
    expect(schemas.length).toBeGreaterThan(45);
    for (const [name, schema] of schemas) {
      const valid = metaChecker.validateSchema(schema as object);
      expect(valid ? 'valid' : metaChecker.errorsText(metaChecker.errors), name).toBe('valid');
    }
    // The check can fail: a schema with a misspelt type is refused.
    expect(metaChecker.validateSchema({ type: 'strnig' })).toBe(false);
  });

  it('refuses a host schema that is not JSON Schema, also one with the content of a schema compiled before', () => {
    expect(() => compileSchema({ type: 'object', required: 'name', description: 'host-bad' })).toThrow(/^schema is invalid: /);
    // Compiled first without the meta-schema check (as the library's own schemas are), then handed over by a host.
    const bad = { type: 'object', properties: { n: { type: 'string', maxLength: -1 } }, description: 'compiled-first' };
    expect(checkSchema(bad, { n: 'x' })).toEqual([{ path: '/n', message: 'must NOT have more than -1 characters' }]);
    expect(() => compileSchema({ ...bad })).toThrow(/^schema is invalid: data\/properties\/n\/maxLength must be >= 0/);
    expect(() => compileSchema(bad)).toThrow(/^schema is invalid: /);
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
