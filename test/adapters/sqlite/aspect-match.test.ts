import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from '../../../adapters/sqlite/index';
import type { AspectMatchQuery, JsonObject, JsonValue } from '../../../src/adapter/types';
import { sameJson } from '../../../src/core/entities/json-equal';

/**
 * `matchAspects` compares asked values with the packed rows without building them: an answer is only
 * ever given for the value stored (never for another one), and a value stored as it is asked, in the
 * same key order, is answered with the row's version, stamps and system metadata.
 */

const directories: string[] = [];
afterAll(() => {
  for (const d of directories) rmSync(d, { recursive: true, force: true });
});

const stamp = { time: 1_700_000_000_000, actor: 'urn:li:corpuser:alice' };
const created = { time: 1_600_000_000_000, actor: 'urn:li:corpuser:bob' };
const urnOf = (i: number) => `urn:li:dataset:(urn:li:dataPlatform:hive,match.t${i},PROD)`;

/** Documents the packing rules treat specially: shapes, repeats, interned URNs, the mark itself, keys without ids. */
const documents: JsonObject[] = [
  { name: 'orders', description: 'all the orders' },
  {
    properties: [
      { propertyUrn: 'urn:li:structuredProperty:io.tier', values: [{ string: 'gold' }] },
      { propertyUrn: 'urn:li:structuredProperty:io.score', values: [{ double: 1.5 }, { double: 1.5 }] },
    ],
  },
  { removed: false },
  { '\x7f': '\x7f', "\x7f'": "\x7f'x", '\x7f1': ['\x7f*', '\x7f!'], 'with space': 'urn:li:corpuser:x', '': null, '12': true, ab: -2e-7 },
  JSON.parse('{"__proto__": {"polluted": true}, "customProperties": {"__proto__": "x"}}') as JsonObject,
  { long: `urn:li:dataset:${'x'.repeat(400)}`, key: 'urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)' },
  { list: ['\x7f{1', 'a'], mixed: { 'not an identifier': 1, name: 2 } },
  {
    same: [{ a: 1 }, { a: 1 }, 'long text', 'long text', null, null, 1, 1, '\x7f=', '\x7f=', [], []],
    nested: [[['x', 'x']], [['x', 'x']]],
  },
  {
    shapes: [
      { alpha: 1, beta: 2 },
      { alpha: 1, beta: 2 },
      { beta: 2, alpha: 1 },
    ],
    deep: { alpha: { beta: { gamma: [true, false] } } },
  },
  // Strings JSON writes escaped (quotes, backslashes, control characters, surrogates, the mark with them).
  { text: 'a "quoted" \\ back\nslash\t', emoji: 'ok 😀', lone: '\ud800x', marked: '\x7f"q', urn: 'urn:li:corpuser:"odd"' },
  { tab: 'a\tb', pair: '😀', control: '\x7f\u0001' },
  // A string whose characters are, unescaped, the text of two strings (asked at the other's entity).
  { split: ['x', 'y'] },
  { split: ['x","y'] },
  // A member repeated three times (shaped and in a list), and numbers that are prefixes of one another.
  { alpha: 'long text', beta: 'long text', gamma: 'long text', list: [12, 1, 12, 12, 12], count: 12 },
  { count: 1, list: [1, 12] },
  {},
];

/** Small changes of a document: a leaf changed, a member added or removed, an element dropped. */
function variants(value: JsonValue): JsonValue[] {
  if (value === null || typeof value !== 'object') {
    return [typeof value === 'string' ? `${value}!` : typeof value === 'number' ? value + 1 : typeof value === 'boolean' ? !value : 0, 'x'];
  }
  if (Array.isArray(value)) {
    const out: JsonValue[] = [[...value, null]];
    if (value.length) out.push(value.slice(1));
    value.forEach((element, i) => {
      for (const changed of variants(element)) out.push(value.map((e, j) => (j === i ? changed : e)));
    });
    return out;
  }
  const out: JsonValue[] = [{ ...value, added: 1 }];
  for (const key of Object.keys(value)) {
    const { [key]: _dropped, ...rest } = value;
    out.push(rest);
    for (const changed of variants(value[key]!)) out.push({ ...value, [key]: changed });
  }
  return out;
}

async function storeWith(values: readonly JsonObject[]) {
  const dir = mkdtempSync(join(tmpdir(), 'metacatalog-match-'));
  directories.push(dir);
  const adapter = createSqliteAdapter({ filename: join(dir, 'catalog.db') });
  await adapter.open();
  await adapter.commit({
    now: stamp.time,
    entities: values.map((value, i) => ({
      urn: urnOf(i),
      entityType: 'dataset',
      expectVersion: 0,
      put: [
        { name: 'doc', value, version: 3, created, lastModified: stamp, systemMetadata: { runId: `run-${i}`, stamp } },
        { name: 'other', value: { removed: false }, version: 1, created: stamp, lastModified: stamp },
      ],
    })),
  });
  return adapter;
}

describe('SQLite matchAspects', () => {
  it('answers each stored value as asked, with the stored system metadata', async () => {
    const adapter = await storeWith(documents);
    const queries: AspectMatchQuery[] = documents.map((value, i) => ({
      urn: urnOf(i),
      aspect: 'doc',
      value: JSON.parse(JSON.stringify(value)) as JsonObject,
    }));
    const answers = await adapter.matchAspects!(queries);
    answers.forEach((answer, i) => {
      expect(answer, `document ${i}`).toBeDefined();
      expect(sameJson(answer!.value, documents[i])).toBe(true);
      expect(answer!.systemMetadata).toEqual({ runId: `run-${i}`, stamp });
    });
    // The other aspect asked beside it, in the same call; an aspect without system metadata has none.
    const [status] = await adapter.matchAspects!([{ urn: urnOf(0), aspect: 'other', value: { removed: false } }]);
    expect(status).toEqual({ value: { removed: false } });
    await adapter.close();
  });

  it('never answers for another value: changed leaves, members, elements, other documents, other entities and aspects', async () => {
    const adapter = await storeWith(documents);
    const queries: AspectMatchQuery[] = [];
    documents.forEach((doc, i) => {
      for (const variant of variants(doc))
        if (variant && typeof variant === 'object' && !Array.isArray(variant))
          queries.push({ urn: urnOf(i), aspect: 'doc', value: variant });
      documents.forEach((other) => {
        if (!sameJson(doc, other)) queries.push({ urn: urnOf(i), aspect: 'doc', value: other });
      });
      queries.push({ urn: urnOf(i), aspect: 'unknown', value: doc }, { urn: urnOf(1000 + i), aspect: 'doc', value: doc });
      queries.push({ urn: urnOf(i), aspect: 'doc', value: { ...doc, extra: 'urn:li:corpuser:never-stored' } });
    });
    expect(queries.length).toBeGreaterThan(200);
    const answers = await adapter.matchAspects!(queries);
    const storedOf = (q: AspectMatchQuery) => documents[Number(/t(\d+),/.exec(q.urn)![1])];
    const different = queries.filter(
      (q) => !sameJson(q.value, storedOf(q)) || q.aspect !== 'doc' || !q.urn.includes('.t') || /t1\d\d\d,/.test(q.urn),
    );
    expect(different.length).toBeGreaterThan(200);
    // Only a query of the stored value itself (some variants are equal as JSON) may be answered.
    const wrong = queries.filter(
      (q, i) => answers[i] !== undefined && (q.aspect !== 'doc' || /t1\d\d\d,/.test(q.urn) || !sameJson(q.value, storedOf(q))),
    );
    expect(wrong).toEqual([]);
    await adapter.close();
  });

  it('answers undefined, never a wrong answer, for values it cannot compare as text', async () => {
    const adapter = await storeWith([{ b: 1, a: 2 }, { at: { time: stamp.time, actor: stamp.actor } }, { n: 1 }]);
    const answers = await adapter.matchAspects!([
      // Another key order: equal as JSON, not as text (the domain compares it in its unit of work).
      { urn: urnOf(0), aspect: 'doc', value: { a: 2, b: 1 } },
      // Not JSON: a non-finite number, an undefined element.
      { urn: urnOf(2), aspect: 'doc', value: { n: Number.NaN } },
      { urn: urnOf(2), aspect: 'doc', value: { n: [undefined] } as unknown as JsonObject },
      { urn: urnOf(0), aspect: 'doc', value: { b: 1, a: 2 } },
    ]);
    expect(answers.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(answers[3]?.value).toEqual({ b: 1, a: 2 });
    // A value holding the row's own stamp: answered with that value, or left to the domain.
    const [stamped] = await adapter.matchAspects!([{ urn: urnOf(1), aspect: 'doc', value: { at: { ...stamp } } }]);
    if (stamped) expect(stamped.value).toEqual({ at: stamp });
    expect(await adapter.matchAspects!([])).toEqual([]);
    await adapter.close();
  });
});
