import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/**
 * The lines of `metacatalog ingest`: each a JSON object, either a whole entity `{ urn, aspects }` or one
 * change proposal `{ entityUrn, changeType, aspectName, aspect, ... }`. A line becomes one or more
 * proposals; chunks of lines are what is written together.
 */

/** One line read: its number and the proposals it stands for, or why it cannot be taken. */
type IngestLine = { line: number; proposals: unknown[]; urns: string[]; entity: boolean } | { line: number; problem: string };

/** Lines of a chunk, with where each line's proposals start in the chunk's proposal list. */
export interface IngestChunk {
  lines: IngestLine[];
  proposals: unknown[];
  /** `owner[i]` is the line number of proposal i. */
  owner: number[];
  /** `aspectOf[i]`: for a proposal made from an entity line, the aspect it writes (to name `/aspects/<name>` in messages). */
  aspectOf: Array<string | undefined>;
  bytes: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** Reads one line's JSON into proposals (a whole entity becomes one UPSERT per aspect). */
function readIngestLine(text: string, line: number): IngestLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line, problem: `invalid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!isObject(value)) return { line, problem: 'must be a JSON object: { urn, aspects } or a change proposal' };
  if ('entityUrn' in value) {
    return { line, proposals: [value], urns: typeof value.entityUrn === 'string' ? [value.entityUrn] : [], entity: false };
  }
  if (typeof value.urn === 'string' && isObject(value.aspects)) {
    const extra = Object.keys(value).filter((k) => k !== 'urn' && k !== 'aspects');
    if (extra.length)
      return { line, problem: `unknown member ${extra.map((k) => JSON.stringify(k)).join(', ')}: an entity line is { urn, aspects }` };
    const names = Object.keys(value.aspects);
    if (names.length === 0) return { line, problem: 'aspects names no aspect' };
    const urn = value.urn;
    const proposals = names.map((aspectName) => ({
      entityUrn: urn,
      changeType: 'UPSERT',
      aspectName,
      aspect: { json: (value.aspects as Record<string, unknown>)[aspectName] },
    }));
    return { line, proposals, urns: [urn], entity: true };
  }
  return { line, problem: 'is neither { urn, aspects } nor a change proposal { entityUrn, changeType, aspectName, aspect }' };
}

/** The non-blank lines of a file (or standard input for `-`), numbered from 1. */
export async function* numberedLines(
  source: string,
  stdin: Readable = process.stdin,
): AsyncGenerator<{ line: number; text: string; bytes: number }> {
  const input = source === '-' ? stdin : createReadStream(source);
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const text of reader) {
    line++;
    if (text.trim() === '') continue;
    yield { line, text, bytes: Buffer.byteLength(text) + 1 };
  }
}

/** Groups lines into chunks of at most `maxLines` lines and about `maxBytes` bytes (a longer line is a chunk of its own). */
export async function* chunksOf(
  lines: AsyncIterable<{ line: number; text: string; bytes: number }>,
  maxLines: number,
  maxBytes: number,
): AsyncGenerator<IngestChunk> {
  let chunk: IngestChunk = { lines: [], proposals: [], owner: [], aspectOf: [], bytes: 0 };
  for await (const { line, text, bytes } of lines) {
    if (chunk.lines.length > 0 && (chunk.lines.length >= maxLines || chunk.bytes + bytes > maxBytes)) {
      yield chunk;
      chunk = { lines: [], proposals: [], owner: [], aspectOf: [], bytes: 0 };
    }
    const read = readIngestLine(text, line);
    chunk.lines.push(read);
    chunk.bytes += bytes;
    if ('proposals' in read) {
      for (const proposal of read.proposals) {
        chunk.proposals.push(proposal);
        chunk.owner.push(line);
        chunk.aspectOf.push(read.entity ? (proposal as { aspectName: string }).aspectName : undefined);
      }
    }
  }
  if (chunk.lines.length > 0) yield chunk;
}

/**
 * The line a violation names (its path `/<i>/...` or `/proposals/<i>/...` is a proposal of the chunk),
 * and the path within the line: an entity line's `/aspect/value` is its `/aspects/<name>`, its
 * `/entityUrn` its own `/urn`.
 */
export function placeOfViolation(path: string, chunk: Pick<IngestChunk, 'owner' | 'aspectOf'>): { line: number; path: string } | undefined {
  const match = /^(?:\/proposals)?\/(\d+)(\/.*)?$/.exec(path);
  if (!match) return undefined;
  const index = Number(match[1]);
  const line = chunk.owner[index];
  if (line === undefined) return undefined;
  const rest = match[2] ?? '';
  const aspect = chunk.aspectOf[index];
  if (aspect === undefined) return { line, path: rest };
  return { line, path: rest.replace(/^\/aspect\/value/, `/aspects/${aspect}`).replace(/^\/entityUrn(?=\/|$)/, '/urn') };
}
