import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Packed JSON documents: aspect values, system metadata and change-event payloads are stored as
 * `bytea`, a format byte then raw DEFLATE of the JSON text with a preset dictionary of the strings
 * such documents repeat. PostgreSQL compresses a value only when its row passes about 2 KB, and most
 * aspect rows are smaller, so the JSON would otherwise be stored as it is (about 3 to 4 times bigger).
 *
 * The dictionary of format 1 is part of the stored format: never change it; add a format instead.
 */
const FORMAT_DEFLATE_V1 = 1;

const DICTIONARY_V1 = Buffer.from(
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

/** Small windows: documents are mostly under 4 KB, and a small state is quick to set up per call. */
const DEFLATE_OPTIONS = { level: 3, windowBits: 12, memLevel: 5, dictionary: DICTIONARY_V1 } as const;
const INFLATE_OPTIONS = { windowBits: 15, dictionary: DICTIONARY_V1 } as const;

/** The packed form of a JSON text. */
export function pack(json: string): Buffer {
  const body = deflateRawSync(Buffer.from(json, 'utf8'), DEFLATE_OPTIONS);
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = FORMAT_DEFLATE_V1;
  body.copy(out, 1);
  return out;
}

/** The JSON text of a packed document. */
export function unpack(packed: Buffer): string {
  if (packed[0] !== FORMAT_DEFLATE_V1) throw new Error(`internal: packed document of unknown format ${packed[0]}`);
  return inflateRawSync(packed.subarray(1), INFLATE_OPTIONS).toString('utf8');
}

/**
 * Packs the documents of one commit, each distinct text once: an event's value is usually the aspect
 * value the same commit writes, and system metadata repeats from entity to entity. Made per commit
 * and dropped with it, so it holds at most what the commit itself holds.
 */
export class Packer {
  private readonly byObject = new Map<object, Buffer>();
  private readonly byText = new Map<string, Buffer>();

  json(value: unknown): Buffer | null {
    if (value === null || value === undefined) return null;
    // The same object (an event's value is the aspect's own) is not even serialized again.
    const object = typeof value === 'object' ? value : undefined;
    let packed = object && this.byObject.get(object);
    if (packed) return packed;
    const text = JSON.stringify(value);
    packed = this.byText.get(text);
    if (!packed) this.byText.set(text, (packed = pack(text)));
    if (object) this.byObject.set(object, packed);
    return packed;
  }
}

/** A stored document: the packed column when set, else the plain one (rows written before packing). */
export function storedJson(packed: Buffer | null, plain: string | null): string | null {
  return packed ? unpack(packed) : plain;
}
