import { createDeflateRaw, deflateRawSync, inflateRawSync, constants as zlibConstants, type DeflateRaw } from 'node:zlib';

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

/**
 * One DEFLATE engine kept for the process and reset between documents. `deflateRawSync` builds a new
 * stream object and a new zlib state for each call and closes them after: about 20 to 40 µs a call,
 * where compressing a document of a few hundred bytes takes about 2 µs, so packing the aspects of a
 * bulk write was most of the writer's own CPU time. Node has no documented synchronous call on a kept
 * engine: this one drives the engine's native handle the way `deflateRawSync` itself does (one
 * `writeSync` with Z_FINISH into an output buffer, its `_writeState` read after), and `reset()`
 * (documented; it sets the preset dictionary again) between documents. Checked once against
 * `deflateRawSync` (the same bytes for a probe document); should the handle look different in some
 * Node version, fail the check, or report an error, packing falls back to `deflateRawSync` for good.
 */
interface NativeDeflate {
  writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, output: Buffer, outOffset: number, outLength: number): void;
}

/** Documents up to this many bytes go through the kept engine (its output buffer grows at most to about this size). */
const MAX_REUSED_INPUT = 256 * 1024;

class ReusedDeflate {
  private engine: DeflateRaw | undefined;
  private handle: NativeDeflate | undefined;
  private state: Uint32Array | undefined;
  private output = Buffer.allocUnsafe(16 * 1024);

  constructor() {
    try {
      const engine = createDeflateRaw(DEFLATE_OPTIONS);
      const inner = engine as unknown as { _handle?: Partial<NativeDeflate>; _writeState?: unknown };
      if (typeof inner._handle?.writeSync !== 'function' || !(inner._writeState instanceof Uint32Array) || inner._writeState.length < 2) {
        engine.close();
        return;
      }
      // A failure inside the engine is reported through its stream: the kept engine is then given up.
      engine.on('error', () => this.disable());
      this.engine = engine;
      this.handle = inner._handle as NativeDeflate;
      this.state = inner._writeState;
      const probe = Buffer.from(
        DICTIONARY_V1.subarray(0, 200).toString('latin1') + '{"name":"probe","description":"a document"}',
        'latin1',
      );
      const mine = this.deflate(probe);
      if (!mine?.equals(deflateRawSync(probe, DEFLATE_OPTIONS))) this.disable();
    } catch {
      this.disable();
    }
  }

  private disable(): void {
    const engine = this.engine;
    this.engine = this.handle = this.state = undefined;
    try {
      engine?.close();
    } catch {
      // Closing a failed engine: nothing more to release.
    }
  }

  /** The raw DEFLATE of `input`, or undefined when the kept engine cannot give it (then the caller falls back). */
  deflate(input: Buffer): Buffer | undefined {
    const { engine, handle, state } = this;
    // Large documents take the one-call path: its setup is small beside their compression, and the kept output buffer stays small.
    if (!engine || !handle || !state || input.length > MAX_REUSED_INPUT) return undefined;
    // Stored blocks at worst: 5 bytes per 16 KB block, plus the end of the stream.
    const bound = input.length + 5 * Math.ceil((input.length + 1) / 16_383) + 16;
    if (this.output.length < bound) this.output = Buffer.allocUnsafe(bound);
    try {
      handle.writeSync(zlibConstants.Z_FINISH, input, 0, input.length, this.output, 0, this.output.length);
      const [availOut, availIn] = [state[0]!, state[1]!];
      engine.reset();
      // All input consumed and room left over: the stream is finished (Z_STREAM_END).
      if (availIn !== 0 || availOut === 0) return undefined;
      return this.output.subarray(0, this.output.length - availOut);
    } catch {
      this.disable();
      return undefined;
    }
  }
}

let reused: ReusedDeflate | undefined;

/** The packed form of a JSON text. */
export function pack(json: string): Buffer {
  const input = Buffer.from(json, 'utf8');
  const body = (reused ??= new ReusedDeflate()).deflate(input) ?? deflateRawSync(input, DEFLATE_OPTIONS);
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
