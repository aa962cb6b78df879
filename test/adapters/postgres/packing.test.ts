import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { pack, Packer, unpack } from '../../../adapters/postgres/packing';

/** What format 1 was before the engine was kept: `deflateRawSync` of the text with the same options and dictionary. */
function packedOnce(json: string): Buffer {
  // The options and the dictionary (a copy of format 1's: part of the stored format, never changed) as packing.ts has them.
  return Buffer.concat([
    Buffer.from([1]),
    deflateRawSync(Buffer.from(json, 'utf8'), { level: 3, windowBits: 12, memLevel: 5, dictionary: DICTIONARY }),
  ]);
}
const DICTIONARY = Buffer.from(
  [
    '{"customProperties":{},"tags":[],"externalUrl":"https://","qualifiedName":"',
    '"entityTypes":["urn:li:entityType:datahub.dataset"],"valueType":"urn:li:dataType:datahub.string","cardinality":"SINGLE",',
    '"owners":[{"owner":"urn:li:corpuser:","type":"TECHNICAL_OWNER"}],"ownerTypes":{}',
    '{"propertyKeys":{"urn:li:structuredProperty:',
    '{"properties":[{"propertyUrn":"urn:li:structuredProperty:","values":[{"double":{"string":"',
    '"created":{"time":17,"actor":"urn:li:corpuser:"},"lastModified":{"time":17,"actor":"urn:li:corpuser:admin"}}',
    '{"name":"","description":"',
  ].join(''),
);

const documents = [
  '{"removed":false}',
  JSON.stringify({ name: 'orders', description: 'daily orders, one row per order line' }),
  JSON.stringify({
    properties: [
      { propertyUrn: 'urn:li:structuredProperty:bench.tier', values: [{ string: 'gold' }] },
      { propertyUrn: 'urn:li:structuredProperty:bench.score', values: [{ double: 12.5 }] },
    ],
  }),
  '""',
  JSON.stringify({ text: 'é漢字😀 \u0000 \\ "quoted"' }),
  // Larger than the engine's first output buffer (16 KB), and barely compressible.
  JSON.stringify({ noise: Array.from({ length: 6000 }, (_, i) => ((i * 2654435761) >>> 0).toString(36)) }),
  JSON.stringify({ repeated: 'abc'.repeat(100_000) }),
];

describe('packed documents (one DEFLATE and one INFLATE engine kept and reset between documents)', () => {
  it('packs each document to the same bytes as a fresh engine per document, in any order', () => {
    for (const round of [documents, [...documents].reverse(), documents]) {
      for (const json of round) expect(pack(json).equals(packedOnce(json))).toBe(true);
    }
  });

  it('reads back every document it packs, and what a fresh engine per document packed, in any order', () => {
    for (const round of [documents, [...documents].reverse(), documents]) {
      for (const json of round) {
        expect(unpack(pack(json))).toBe(json);
        expect(unpack(packedOnce(json))).toBe(json);
      }
    }
  });

  it('refuses a corrupt or cut-short document with zlib’s error, and reads the next one as before', () => {
    const good = pack(documents[1]!);
    const cut = good.subarray(0, good.length - 3);
    const corrupt = Buffer.from(good);
    corrupt[1] = 0xff;
    corrupt[2] = 0xff;
    for (const bad of [cut, corrupt, cut]) {
      expect(() => unpack(bad)).toThrow(/unexpected end of file|invalid/);
      for (const json of documents) expect(unpack(pack(json))).toBe(json);
    }
  });

  it('packs a commit’s repeated document once', () => {
    const packer = new Packer();
    const value = { name: 'orders' };
    expect(packer.json(value)).toBe(packer.json({ name: 'orders' }));
    expect(packer.json(null)).toBeNull();
    expect(unpack(packer.json(value)!)).toBe('{"name":"orders"}');
  });
});
