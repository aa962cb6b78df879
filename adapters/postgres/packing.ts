import {
  createDeflateRaw,
  createInflateRaw,
  deflateRawSync,
  inflateRawSync,
  constants as zlibConstants,
  type DeflateRaw as Deflate,
  type InflateRaw as Inflate,
} from 'node:zlib';

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
 * One DEFLATE engine and one INFLATE engine kept for the process and reset between documents.
 * `deflateRawSync` and `inflateRawSync` build a new stream object and a new zlib state for each call and
 * close them after: about 10 to 40 µs a call, where compressing or expanding a document of a few hundred
 * bytes takes 1 to 2 µs, so packing the aspects of a bulk write was most of the writer's own CPU time, and
 * unpacking was a fifth of an entity read's. Node has no documented synchronous call on a kept engine:
 * these drive the engine's native handle the way the one-call functions do (`writeSync` with Z_FINISH into
 * an output buffer, its `_writeState` read after: bytes of output room and of input left), and `reset()`
 * (documented; it sets the preset dictionary again) between documents. Each is checked once against the
 * one-call function (the same bytes for a probe document); should the handle look different in some Node
 * version, fail the check, or report an error, that direction falls back to the one-call function for good.
 */
interface NativeZlib {
  writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, output: Buffer, outOffset: number, outLength: number): void;
}

/** Documents up to this many bytes go through a kept engine (its output buffer grows at most to about this size). */
const MAX_REUSED_INPUT = 256 * 1024;
/** A kept inflate engine's output buffer is kept up to this size (a larger document gets a buffer of its own). */
const MAX_KEPT_OUTPUT = 1024 * 1024;

/** The document each kept engine is checked with once, against the one-call function. */
const PROBE = Buffer.concat([DICTIONARY_V1.subarray(0, 200), Buffer.from('{"name":"probe","description":"a document"}')]);

/** A zlib stream whose native handle is driven synchronously; `write` answers undefined once it cannot be used. */
class KeptEngine {
  private engine: Deflate | Inflate | undefined;
  private handle: NativeZlib | undefined;
  private state: Uint32Array | undefined;

  constructor(create: () => Deflate | Inflate) {
    try {
      const engine = create();
      const inner = engine as unknown as { _handle?: Partial<NativeZlib>; _writeState?: unknown };
      if (typeof inner._handle?.writeSync !== 'function' || !(inner._writeState instanceof Uint32Array) || inner._writeState.length < 2) {
        engine.close();
        return;
      }
      // A failure inside the engine is reported through its stream (which it destroys): the engine is then given up.
      engine.on('error', () => this.disable());
      this.engine = engine;
      this.handle = inner._handle as NativeZlib;
      this.state = inner._writeState;
    } catch {
      this.disable();
    }
  }

  get usable(): boolean {
    return this.engine !== undefined;
  }

  disable(): void {
    const engine = this.engine;
    this.engine = this.handle = this.state = undefined;
    try {
      engine?.close();
    } catch {
      // Closing a failed engine: nothing more to release.
    }
  }

  /**
   * Feeds `input` from `inOffset` with Z_FINISH, writing into `output` from `outOffset`: the bytes of output
   * room and of input left after, or undefined when the engine failed (it is then given up).
   */
  write(input: Buffer, inOffset: number, output: Buffer, outOffset: number): { availOut: number; availIn: number } | undefined {
    const { engine, handle, state } = this;
    if (!engine || !handle || !state) return undefined;
    try {
      handle.writeSync(zlibConstants.Z_FINISH, input, inOffset, input.length - inOffset, output, outOffset, output.length - outOffset);
      // A corrupt document makes the engine report an error and destroy its stream at once.
      if (engine.destroyed) {
        this.disable();
        return undefined;
      }
      return { availOut: state[0]!, availIn: state[1]! };
    } catch {
      this.disable();
      return undefined;
    }
  }

  /** Ready for the next document; false when the engine failed. */
  reset(): boolean {
    try {
      this.engine?.reset();
      return this.usable;
    } catch {
      this.disable();
      return false;
    }
  }
}

/** A kept DEFLATE engine; `deflate` answers undefined when the caller must use `deflateRawSync`. */
class ReusedDeflate {
  private readonly kept = new KeptEngine(() => createDeflateRaw(DEFLATE_OPTIONS));
  private output = Buffer.allocUnsafe(16 * 1024);

  constructor() {
    if (this.kept.usable && !this.deflate(PROBE)?.equals(deflateRawSync(PROBE, DEFLATE_OPTIONS))) this.kept.disable();
  }

  /** The raw DEFLATE of `input`, or undefined when the kept engine cannot give it (then the caller falls back). */
  deflate(input: Buffer): Buffer | undefined {
    // Large documents take the one-call path: its setup is small beside their compression, and the kept output buffer stays small.
    if (!this.kept.usable || input.length > MAX_REUSED_INPUT) return undefined;
    // Stored blocks at worst: 5 bytes per 16 KB block, plus the end of the stream.
    const bound = input.length + 5 * Math.ceil((input.length + 1) / 16_383) + 16;
    if (this.output.length < bound) this.output = Buffer.allocUnsafe(bound);
    const after = this.kept.write(input, 0, this.output, 0);
    if (!this.kept.reset() || !after) return undefined;
    // All input consumed and room left over: the stream is finished (Z_STREAM_END).
    if (after.availIn !== 0 || after.availOut === 0) return undefined;
    return this.output.subarray(0, this.output.length - after.availOut);
  }
}

/**
 * A kept INFLATE engine; `inflate` answers undefined when the caller must use `inflateRawSync` (which then
 * reports a corrupt document as it always has). A document that breaks the engine gets a new one made for the
 * next document; an engine that fails its first check is given up for the process.
 */
class ReusedInflate {
  private kept = new KeptEngine(() => createInflateRaw(INFLATE_OPTIONS));
  private output = Buffer.allocUnsafe(16 * 1024);
  private readonly checked: boolean;

  constructor() {
    this.checked = this.kept.usable && this.inflate(deflateRawSync(PROBE, DEFLATE_OPTIONS)) === PROBE.toString('utf8');
    if (!this.checked) this.kept.disable();
  }

  inflate(input: Buffer): string | undefined {
    if (!this.kept.usable) {
      if (!this.checked) return undefined;
      this.kept = new KeptEngine(() => createInflateRaw(INFLATE_OPTIONS));
    }
    let output = this.output;
    let produced = 0;
    let consumed = 0;
    for (;;) {
      const after = this.kept.write(input, consumed, output, produced);
      if (!after) return undefined;
      produced = output.length - after.availOut;
      consumed = input.length - after.availIn;
      // Room left over: the stream ended (or the document is cut short: the fallback reports it).
      if (after.availOut !== 0) break;
      const larger = Buffer.allocUnsafe(output.length * 2);
      output.copy(larger, 0, 0, produced);
      output = larger;
    }
    if (!this.kept.reset() || consumed !== input.length) return undefined;
    if (output.length <= MAX_KEPT_OUTPUT) this.output = output;
    return output.toString('utf8', 0, produced);
  }
}

let deflater: ReusedDeflate | undefined;
let inflater: ReusedInflate | undefined;

/** The packed form of a JSON text. */
export function pack(json: string): Buffer {
  const input = Buffer.from(json, 'utf8');
  const body = (deflater ??= new ReusedDeflate()).deflate(input) ?? deflateRawSync(input, DEFLATE_OPTIONS);
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = FORMAT_DEFLATE_V1;
  body.copy(out, 1);
  return out;
}

/** The JSON text of a packed document. */
export function unpack(packed: Buffer): string {
  if (packed[0] !== FORMAT_DEFLATE_V1) throw new Error(`internal: packed document of unknown format ${packed[0]}`);
  const body = packed.subarray(1);
  return (inflater ??= new ReusedInflate()).inflate(body) ?? inflateRawSync(body, INFLATE_OPTIONS).toString('utf8');
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
