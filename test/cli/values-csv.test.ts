import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { PropertyRecord } from '../../src/cli/backend';
import { decodeCell, encodeCell, encodeValue, typedValue } from '../../src/cli/values-cell';
import { decodeRows, headerLine, inFileTerms, readHeader, readRecords, rowLines } from '../../src/cli/values-csv';

const property = (qualifiedName: string, type = 'string', removed = false): PropertyRecord => ({
  urn: `urn:li:structuredProperty:${qualifiedName}`,
  removed,
  definition: {
    qualifiedName,
    valueType: `urn:li:dataType:datahub.${type}`,
    cardinality: 'MULTIPLE',
    entityTypes: ['urn:li:entityType:datahub.dataset'],
  } as PropertyRecord['definition'],
});

describe('a cell of the values CSV', () => {
  it('gives back exactly the values it was made of, whatever they hold', () => {
    const samples: Array<Array<string | number>> = [
      ['gold'],
      ['a|b', 'c\\d', '\\|', '|'],
      ['<remove>'],
      ['<empty>'],
      ['', 'x'],
      [''],
      ['<b>bold</b>', 'ends with <'],
      ['comma, "quote"', 'line\nbreak', 'cr\r\nlf'],
      [1.5, 0, -3, 1e21, 2e-7],
      ['  spaced  '],
    ];
    for (const values of samples) {
      const cell = encodeCell(values);
      const decoded = decodeCell(cell);
      expect(decoded, cell).toEqual({ kind: 'values', values: values.map(String) });
    }
    expect(encodeValue('')).toBe('<empty>');
    expect(encodeValue('<remove>')).toBe('\\<remove>');
    expect(encodeCell(['a|b', 'c'])).toBe('a\\|b|c');
  });

  it('reads empty as unchanged, <remove> as a removal, and refuses what it cannot read', () => {
    expect(decodeCell('')).toEqual({ kind: 'unchanged' });
    expect(decodeCell('<remove>')).toEqual({ kind: 'remove' });
    expect(decodeCell('\\<remove>')).toEqual({ kind: 'values', values: ['<remove>'] });
    expect(decodeCell('a||b')).toMatchObject({ kind: 'error', message: expect.stringContaining('empty value') });
    expect(decodeCell('a|')).toMatchObject({ kind: 'error' });
    expect(decodeCell('C:\\temp')).toMatchObject({ kind: 'error', message: expect.stringContaining('backslash') });
    expect(decodeCell('a|<remove>')).toMatchObject({ kind: 'error', message: expect.stringContaining('stand alone') });
  });

  it("types a number property's values as numbers, leaving text the catalog will refuse", () => {
    expect(typedValue('1.5', true)).toEqual({ double: 1.5 });
    expect(typedValue(' 42 ', true)).toEqual({ double: 42 });
    expect(typedValue('1e+21', true)).toEqual({ double: 1e21 });
    expect(typedValue('abc', true)).toEqual({ string: 'abc' });
    expect(typedValue('0x10', true)).toEqual({ string: '0x10' });
    expect(typedValue('1.5', false)).toEqual({ string: '1.5' });
  });
});

describe('the values CSV file', () => {
  const tier = property('io.tier');
  const days = property('retention.days', 'number');
  const gone = property('old.flag', 'string', true);

  it('writes RFC 4180 quoting that csv-parse reads back', () => {
    const text =
      headerLine([days, tier]) +
      rowLines(
        [
          {
            urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)',
            properties: [{ propertyUrn: tier.urn, values: ['x, "y"', 'l1\nl2'] }],
          },
          { urn: 'urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)', properties: [{ propertyUrn: days.urn, values: [90] }] },
        ],
        [days, tier],
      );
    expect(parse(text)).toEqual([
      ['urn', 'retention.days', 'io.tier'],
      ['urn:li:dataset:(urn:li:dataPlatform:hive,a,PROD)', '', 'x, "y"|l1\nl2'],
      ['urn:li:dataset:(urn:li:dataPlatform:hive,b,PROD)', '90', ''],
    ]);
  });

  it('numbers each record by the line it starts on (quoted line breaks, CRLF, blank lines, a byte-order mark)', () => {
    for (const eol of ['\n', '\r\n']) {
      const text = `\ufeffurn,a${eol}x,"l1${eol}l2"${eol}${eol}y,2${eol}z,3`;
      expect(readRecords(text)).toEqual([
        { line: 1, cells: ['urn', 'a'] },
        { line: 2, cells: ['x', `l1${eol}l2`] },
        { line: 5, cells: ['y', '2'] },
        { line: 6, cells: ['z', '3'] },
      ]);
    }
  });

  it('refuses a header with an unknown, soft-deleted or repeated column, or no urn, naming each', () => {
    const { problems } = readHeader(['io.tier', 'nope', 'old.flag', tier.urn], [tier, days, gone]);
    expect(problems.map((p) => p.where)).toEqual([
      'line 1',
      'line 1, column 2 ("nope")',
      'line 1, column 3 ("old.flag")',
      `line 1, column 4 ("${tier.urn}")`,
    ]);
    expect(problems[1]!.message).toContain('"nope" is not a structured property');
    expect(problems[2]!.message).toContain('soft-deleted');
  });

  it("decodes rows into edits and says the catalog's violations as line and column", () => {
    const records = readRecords('urn,io.tier,retention.days\nu1,a|b,<remove>\nu2,,abc\nu1,,\nu3,x\\y,\n');
    const header = readHeader(records[0]!.cells, [tier, days]);
    const file = decodeRows(records.slice(1), header.urnIndex, header.columns);
    expect(file.edits).toEqual([
      { urn: 'u1', set: [{ propertyUrn: tier.urn, values: [{ string: 'a' }, { string: 'b' }] }], remove: [days.urn] },
      { urn: 'u2', set: [{ propertyUrn: days.urn, values: [{ string: 'abc' }] }] },
      { urn: 'u3' },
    ]);
    expect(file.problems).toEqual([
      { where: 'line 4, column "urn"', message: 'u1 is on line 2 already' },
      { where: 'line 5, column "io.tier"', message: expect.stringContaining('backslash') },
    ]);
    expect(inFileTerms({ path: '/1/set/0/values/0', message: 'should be a number' }, file)).toEqual({
      where: 'line 3, column "retention.days"',
      message: 'should be a number',
    });
    expect(inFileTerms({ path: '/0/set/0/values/1', message: 'm' }, file).where).toBe('line 2, column "io.tier", value 2');
    expect(inFileTerms({ path: '/0/remove/0', message: 'm' }, file).where).toBe('line 2, column "retention.days"');
    expect(inFileTerms({ path: '/2/urn', message: 'm' }, file).where).toBe('line 5, column "urn"');
  });
});
