import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { ClientGoneError, type IncomingExchange } from './exchange';
import { createRequestHandler } from './handler';
import type { FetchHandler, HttpOptions } from './types';

function tooLarge(limit: number): CatalogError {
  return new CatalogError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes`);
}

async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        void reader.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof CatalogError) throw error;
    // The stream failed: the client aborted the request.
    throw new ClientGoneError();
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * The answer is in memory already, so its `text()`, `json()` and `arrayBuffer()` may be read more than
 * once (a caller that logs the text and then parses it does not get "Body has already been read").
 * `body` is the standard one-shot stream, for servers that pipe it.
 */
class BufferedResponse extends Response {
  readonly #text: string;

  constructor(text: string, init: ResponseInit) {
    super(text, init);
    this.#text = text;
  }

  override text(): Promise<string> {
    return Promise.resolve(this.#text);
  }

  override json(): Promise<unknown> {
    return Promise.resolve().then(() => JSON.parse(this.#text) as unknown);
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = new TextEncoder().encode(this.#text);
    return Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
}

/**
 * A handler on the standard `Request`/`Response` (Node's global fetch types, Deno, Bun, edge
 * runtimes, and servers that take a fetch handler). Every route is served at the root and under `/gms`.
 */
export function createFetchHandler(catalog: Catalog, options: HttpOptions = {}): FetchHandler {
  const handle = createRequestHandler(catalog, options);
  return async (request) => {
    const url = new URL(request.url);
    const exchange: IncomingExchange = {
      method: request.method,
      rawPath: url.pathname,
      rawQuery: url.search.slice(1),
      header: (name) => request.headers.get(name) ?? undefined,
      hasBody: () => request.body !== null && request.headers.get('content-length') !== '0',
      readBody: (limit) => readLimited(request, limit),
      isGone: () => request.signal.aborted,
    };
    const handled = await handle(exchange);
    const { answer } = handled;
    const headers = new Headers(answer.headers);
    if (handled.closeConnection) headers.set('connection', 'close');
    if (answer.stream && !handled.clientGone)
      return streamedResponse(answer.stream, answer.status, headers, request.signal, handled.logSent);
    const response = new BufferedResponse(answer.body, { status: handled.clientGone ? 499 : answer.status, headers });
    handled.logSent(handled.clientGone ? 499 : answer.status, handled.clientGone ? 0 : Buffer.byteLength(answer.body));
    return response;
  };
}

/** A streamed answer (server-sent events): ends when the chunks end, the reader cancels or the request aborts. */
function streamedResponse(
  stream: NonNullable<import('./exchange').OutgoingAnswer['stream']>,
  status: number,
  headers: Headers,
  signal: AbortSignal,
  logSent: (status: number, bytes: number) => void,
): Response {
  const encoder = new TextEncoder();
  const iterator = stream.chunks[Symbol.asyncIterator]();
  let bytes = 0;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    signal.removeEventListener('abort', finish);
    stream.cancel();
    logSent(status, bytes);
  };
  signal.addEventListener('abort', finish, { once: true });
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          finish();
          controller.close();
          return;
        }
        const chunk = encoder.encode(next.value);
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel() {
      finish();
    },
  });
  return new Response(body, { status, headers });
}
