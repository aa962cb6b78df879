import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { createRequestHandler } from './handler';
import { nodeListenerOf } from './node-listener';
import { GracefulShutdown } from './shutdown';
import type { HttpOptions } from './types';

export interface ServerOptions extends HttpOptions {
  /** Default 8080; 0 picks a free port (read it from `port` of the result). */
  port?: number;
  /** Default `127.0.0.1` (loopback only). */
  host?: string;
  /** How long `close()` waits for requests in flight before it cuts their connections (streams end at once). Default 10 s. */
  shutdownTimeoutMs?: number;
  /** Time a client has to send the request line and headers (408 after). Default 20 s. */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request, body included (408 after). Default 60 s. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open. Default 5 s. */
  keepAliveTimeoutMs?: number;
}

export interface RunningServer {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  /** Requests being answered now. */
  inFlight(): number;
  /**
   * Graceful stop: no new connection is accepted, every change-feed stream ends at once (its client
   * resumes from its last event id), answers in flight are finished (with `Connection: close`), idle
   * keep-alive connections are closed; after `shutdownTimeoutMs` the rest is cut. Does not close the
   * catalog (the owner of the catalog does, after this resolves).
   */
  close(): Promise<void>;
}

/** What node:http's parser refused, as status and code of the JSON error body. */
function clientErrorAnswer(error: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      code: 'INVALID_INPUT',
      message: 'the request line and headers are larger than 16 KB: send long input in a body',
    };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, code: 'TIMEOUT', message: 'the request took too long to arrive' };
  return { status: 400, code: 'INVALID_INPUT', message: `the request is not well-formed HTTP (${error.code ?? 'unreadable'})` };
}

function answerClientError(error: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (!socket.writable || (error.code === 'ECONNRESET' && !('bytesParsed' in error))) {
    socket.destroy();
    return;
  }
  const { status, code, message } = clientErrorAnswer(error);
  // `message` also at the top level, as in every other error answer.
  const body = JSON.stringify({ error: { code, message }, message });
  const reason = status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function timeoutOption(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new CatalogError('INVALID_INPUT', `${name} must be a positive integer (ms), got ${String(value)}`);
  return value;
}

/** Serves the catalog over node:http on one port, with a graceful `close()`. */
export async function startServer(catalog: Catalog, options: ServerOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  const headersTimeout = timeoutOption(options.headersTimeoutMs, 'headersTimeoutMs', 20_000);
  const requestTimeout = Math.max(headersTimeout, timeoutOption(options.requestTimeoutMs, 'requestTimeoutMs', 60_000));
  const keepAliveTimeout = timeoutOption(options.keepAliveTimeoutMs, 'keepAliveTimeoutMs', 5_000);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CatalogError('INVALID_INPUT', `port must be an integer from 0 to 65535, got ${String(port)}`);
  // node checks the headers and request timeouts on a timer of this period (30 s by default, so that a
  // 20 s timeout held up to 50 s): check often enough that a timeout holds to within a tenth of it.
  const connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 10)));
  const server: Server = createServer({ connectionsCheckingInterval, headersTimeout, requestTimeout, keepAliveTimeout });
  const shutdown = new GracefulShutdown(server, shutdownTimeoutMs);
  const listener = nodeListenerOf(createRequestHandler(catalog, options), shutdown);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    shutdown.track(res);
    listener(req, res);
  });
  // Requests node:http refuses before any route sees them (a URL or headers over its 16 KB limit, a
  // malformed Content-Length...) get the same JSON error body as every other refusal.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => answerClientError(error, socket));
  const listening = server;
  await new Promise<void>((resolve, reject) => {
    listening.once('error', reject);
    listening.listen(port, host, () => {
      listening.off('error', reject);
      resolve();
    });
  });
  const address = listening.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    server: listening,
    inFlight: () => shutdown.inFlight(),
    close: () => shutdown.close(),
  };
}
