/**
 * The request and answer as the router sees them, independent of the server: the node:http listener
 * and the fetch handler each adapt their own objects to these (the listener without building a
 * `Request`, which costs more than routing).
 */
export interface IncomingExchange {
  method: string;
  /** The path as received, still percent-encoded, without the query. */
  rawPath: string;
  /** The query string without `?` (possibly empty). */
  rawQuery: string;
  /** A header by lower-case name; several values joined with `, `. */
  header(name: string): string | undefined;
  /** Whether the request carries a body (a non-zero Content-Length, or a chunked one). */
  hasBody(): boolean;
  /** The whole body; rejects with PAYLOAD_TOO_LARGE beyond `limit` bytes, with ClientGoneError when the client went away. */
  readBody(limit: number): Promise<Uint8Array>;
  /** True once the client has gone away (closed the connection or aborted the request). */
  isGone(): boolean;
  remoteAddress?: string;
  /**
   * How long the host already kept the request before handing it over, in ms (the node listener's hold of a
   * request sent right after a refusal on its connection): admission control counts it in the wait it allows.
   */
  waitedMs?: number;
}

export interface OutgoingAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** A streamed answer (server-sent events): sent chunk by chunk after `body`; `cancel` when the client leaves. */
  stream?: AnswerStream;
}

/** Chunks of a streamed answer; the server calls `cancel()` when the client disconnects (the chunks then end). */
export interface AnswerStream {
  chunks: AsyncIterable<string>;
  cancel(): void;
}

/** The client closed the connection or aborted the request before the body was read. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client went away before the request was complete');
    this.name = 'ClientGoneError';
  }
}
