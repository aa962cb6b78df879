import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { ClientGoneError, type IncomingExchange } from './exchange';
import { createRequestHandler, type RequestHandler } from './handler';
import type { HttpOptions } from './types';

export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void;

function tooLarge(limit: number): CatalogError {
  return new CatalogError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes`);
}

function splitUrl(url: string): { rawPath: string; rawQuery: string } {
  if (!url.startsWith('/')) {
    // Absolute form (`GET http://host/path HTTP/1.1`), as proxies send it.
    try {
      const parsed = new URL(url);
      return { rawPath: parsed.pathname, rawQuery: parsed.search.slice(1) };
    } catch {
      return { rawPath: url, rawQuery: '' };
    }
  }
  const q = url.indexOf('?');
  return q < 0 ? { rawPath: url, rawQuery: '' } : { rawPath: url.slice(0, q), rawQuery: url.slice(q + 1) };
}

/** The exchange of a node:http request: the body is read from the stream with the size limit; a dropped connection is noticed. */
function exchangeOf(req: IncomingMessage, res: ServerResponse, waitedMs: number): IncomingExchange {
  let gone = false;
  const markGone = () => {
    gone = true;
  };
  req.once('close', () => {
    if (!req.complete) markGone();
  });
  res.once('close', () => {
    if (!res.writableFinished) markGone();
  });
  const { rawPath, rawQuery } = splitUrl(req.url ?? '/');
  return {
    method: req.method ?? 'GET',
    rawPath,
    rawQuery,
    ...(waitedMs > 0 ? { waitedMs } : {}),
    header: (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    hasBody: () => {
      const length = req.headers['content-length'];
      if (length !== undefined) return length !== '0';
      return req.headers['transfer-encoding'] !== undefined;
    },
    readBody: (limit) => {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > limit) {
        req.resume(); // discard what arrives; the connection is closed after the answer
        return Promise.reject(tooLarge(limit));
      }
      return new Promise<Uint8Array>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const cleanup = () => {
          req.off('data', onData);
          req.off('end', onEnd);
          req.off('error', onGone);
          req.off('close', onClose);
        };
        const onData = (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > limit) {
            cleanup();
            req.resume();
            reject(tooLarge(limit));
          } else chunks.push(chunk);
        };
        const onEnd = () => {
          cleanup();
          resolve(Buffer.concat(chunks, size));
        };
        const onGone = () => {
          cleanup();
          markGone();
          reject(new ClientGoneError());
        };
        const onClose = () => {
          if (!req.complete) onGone();
        };
        if (gone || req.destroyed) return onGone();
        req.on('data', onData);
        req.on('end', onEnd);
        req.on('error', onGone);
        req.on('close', onClose);
      });
    },
    isGone: () => gone || (req.destroyed && !req.complete),
    ...(req.socket.remoteAddress !== undefined ? { remoteAddress: req.socket.remoteAddress } : {}),
  };
}

/** Writes a streamed answer (server-sent events) until its chunks end or the client disconnects. */
function sendStream(
  res: Parameters<NodeListener>[1],
  status: number,
  headers: Record<string, string>,
  stream: NonNullable<import('./exchange').OutgoingAnswer['stream']>,
  logSent: (status: number, bytes: number) => void,
): void {
  let bytes = 0;
  res.once('close', () => {
    stream.cancel();
    logSent(status, bytes);
  });
  res.writeHead(status, headers);
  res.flushHeaders();
  void (async () => {
    try {
      for await (const chunk of stream.chunks) {
        if (res.destroyed) break;
        bytes += Buffer.byteLength(chunk);
        res.write(chunk);
      }
    } catch {
      // The stream failed: close the connection; the client resumes with Last-Event-ID.
    }
    if (!res.destroyed) res.end();
  })();
}

/** What a server that stops gracefully tells the listener: whether it is stopping, and which streams to end then. */
export interface ListenerLifecycle {
  closing(): boolean;
  /** Registers a stream's `cancel` to call at the stop; returns its removal. */
  openStream(cancel: () => void): () => void;
  /** The work of one request: a stop waits for it to settle even when its client has left. */
  hold(work: Promise<unknown>): void;
}

const NO_LIFECYCLE: ListenerLifecycle = { closing: () => false, openStream: () => () => undefined, hold: () => undefined };

/**
 * How long after a refusal for overload (503, `Retry-After: 1`) the next request on the same connection
 * is taken up. A client that retries at once would otherwise keep the loop busy refusing it: 1,000
 * connections of searches that each sent again the moment they were refused took the whole thread, and
 * a turn of the event loop (one accepted connection each) lasted 75 ms. A client that waits as it was
 * told never notices. Health checks are not held.
 */
const SHED_HOLD_MS = 500;

/**
 * Held requests taken up per turn of the event loop once their hold is over. The holds of many
 * connections end within the same few milliseconds (they were refused together), and taken up in the
 * timer's own turn they made one turn of 100–400 ms (each refused again costs about half a millisecond
 * of the thread): the loop accepted no connection meanwhile, and the next holds ended together again.
 * A few per turn keep the turns short; the others wait their turn in arrival order.
 */
const HELD_PER_TURN = 8;

function isHealthCheck(url: string | undefined): boolean {
  const path = url === undefined ? '' : url.split('?', 1)[0]!;
  return path === '/health' || path.endsWith('/health');
}

/** Sends what the handler answered on a node:http response (nothing when the client is gone). */
export function nodeListenerOf(handler: RequestHandler, lifecycle: ListenerLifecycle = NO_LIFECYCLE): NodeListener {
  const closing = () => lifecycle.closing();
  const shedAt = new WeakMap<object, number>();
  const serve = (req: IncomingMessage, res: ServerResponse, waitedMs = 0) => {
    const exchange = exchangeOf(req, res, waitedMs);
    const work = handler(exchange);
    lifecycle.hold(work);
    void work.then(
      (handled) => {
        if (handled.clientGone || res.destroyed) {
          handled.logSent(499, 0);
          return;
        }
        const { answer } = handled;
        if (answer.stream) {
          const forget = lifecycle.openStream(answer.stream.cancel);
          res.once('close', forget);
          return sendStream(res, answer.status, answer.headers, answer.stream, handled.logSent);
        }
        const length = Buffer.byteLength(answer.body);
        const headers: Record<string, string> = { ...answer.headers, 'content-length': String(length) };
        if (handled.closeConnection || closing()) headers.connection = 'close';
        res.once('close', () => handled.logSent(res.writableFinished ? answer.status : 499, res.writableFinished ? length : 0));
        res.writeHead(answer.status, headers);
        res.end(answer.body);
        if (handled.shed) shedAt.set(req.socket, performance.now());
      },
      // The handler turns every failure into an answer; this is a last guard against a crash.
      () => {
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          res.end('{"error":{"code":"INTERNAL","message":"Internal error"}}');
        }
      },
    );
  };
  // Held requests whose hold is over, taken up a few per turn of the event loop (takeUp).
  const due: Array<() => void> = [];
  let draining = false;
  const drain = () => {
    for (let i = 0; i < HELD_PER_TURN && due.length > 0; i++) due.shift()!();
    if (due.length > 0) setImmediate(drain);
    else draining = false;
  };
  const takeUp = (req: IncomingMessage, res: ServerResponse, arrivedAt: number) => {
    due.push(() => {
      if (res.destroyed || req.socket.destroyed) return; // cut meanwhile (a stop): nothing to answer
      serve(req, res, performance.now() - arrivedAt);
    });
    if (!draining) {
      draining = true;
      setImmediate(drain);
    }
  };
  return (req, res) => {
    const at = shedAt.get(req.socket);
    const wait = at === undefined ? 0 : at + SHED_HOLD_MS - performance.now();
    if (wait > 0 && !isHealthCheck(req.url)) setTimeout(takeUp, wait, req, res, performance.now());
    else serve(req, res);
  };
}

/**
 * A `(req, res)` listener for `node:http` / `node:https` servers (and frameworks that hand out the
 * raw node objects). Every route is served at the root and under `/gms`.
 */
export function createNodeListener(catalog: Catalog, options: HttpOptions = {}): NodeListener {
  return nodeListenerOf(createRequestHandler(catalog, options));
}
