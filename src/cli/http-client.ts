import { CatalogError, ERROR_CODES, type CatalogErrorCode, type Violation } from '../index';
import { CommandError } from './io';
import { readServerSentEvents } from './sse';

type QueryValue = string | number | boolean | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function codeOf(value: unknown, fallback: CatalogErrorCode): CatalogErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value) ? (value as CatalogErrorCode) : fallback;
}

function detailsOf(value: unknown): Violation[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((v) => ({ path: String(v.path ?? ''), message: String(v.message ?? '') }));
}

const STATUS_CODES: Readonly<Record<number, CatalogErrorCode>> = {
  400: 'INVALID_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  501: 'UNSUPPORTED',
  429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

/** How long a followed event stream waits for its server to come back (a restart), and between tries. */
const RECONNECT_FOR_MS = 60_000;
const RECONNECT_DELAY_MS = 1_000;

/**
 * The remote mode's HTTP client: the REST family and /api/graphql of a metacatalog server, with the
 * bearer token. The server's error bodies (`{ error: { code, message, details } }`, GraphQL
 * `extensions.code`) come back as the same CatalogError the library throws in embedded mode.
 */
export class GmsClient {
  constructor(
    readonly server: string,
    private readonly token: string,
  ) {}

  private async send(method: string, path: string, query: Record<string, QueryValue>, body: unknown): Promise<Response> {
    const url = new URL(`${this.server}${path}`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CommandError(`cannot reach ${this.server}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
  }

  private async json(response: Response): Promise<unknown> {
    const text = await response.text();
    if (text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CatalogError(
        response.ok ? 'INTERNAL' : (STATUS_CODES[response.status] ?? 'INTERNAL'),
        `${this.server} answered ${response.status} with a body that is not JSON`,
      );
    }
  }

  /** One REST call; the parsed JSON answer. With `notFound: 'undefined'` a 404 resolves to undefined. */
  async rest(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: { query?: Record<string, QueryValue>; body?: unknown; notFound?: 'undefined' } = {},
  ): Promise<unknown> {
    const response = await this.send(method, path, options.query ?? {}, options.body);
    if (response.status === 404 && options.notFound === 'undefined') {
      await response.body?.cancel();
      return undefined;
    }
    const payload = await this.json(response);
    if (response.ok) return payload;
    throw this.failure(response, payload);
  }

  /** The CatalogError of an error answer (its JSON body `{ error: { code, message, details } }`). */
  private failure(response: Response, payload: unknown): CatalogError {
    const error = isRecord(payload) && isRecord(payload.error) ? payload.error : undefined;
    const fallback = STATUS_CODES[response.status] ?? 'INTERNAL';
    if (!error) return new CatalogError(fallback, `${this.server} answered ${response.status} ${response.statusText}`.trim());
    return new CatalogError(codeOf(error.code, fallback), String(error.message ?? `${this.server} answered ${response.status}`), {
      details: detailsOf(error.details),
      ...(typeof error.reason === 'string' ? { reason: error.reason } : {}),
    });
  }

  /** A GET answered with JSON lines, each parsed as it arrives (an error answer is its CatalogError). */
  async *jsonLines(path: string, query: Record<string, QueryValue>): AsyncGenerator<unknown> {
    const response = await this.send('GET', path, query, undefined);
    if (!response.ok || !response.body) throw this.failure(response, await this.json(response));
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(bytes, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() !== '') yield JSON.parse(line) as unknown;
      }
    }
    buffered += decoder.decode();
    if (buffered.trim() !== '') yield JSON.parse(buffered) as unknown;
  }

  /** A POST to /api/graphql; the `data`, or the first error as a CatalogError. */
  async graphql(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await this.send('POST', '/api/graphql', {}, { query, variables });
    const payload = await this.json(response);
    const errors = isRecord(payload) && Array.isArray(payload.errors) ? payload.errors.filter(isRecord) : [];
    const first = errors[0];
    if (first) {
      const extensions = isRecord(first.extensions) ? first.extensions : {};
      throw new CatalogError(
        codeOf(extensions.code, STATUS_CODES[response.status] ?? 'INTERNAL'),
        String(first.message ?? 'GraphQL error'),
        {
          details: detailsOf(extensions.details),
          ...(typeof extensions.reason === 'string' ? { reason: extensions.reason } : {}),
        },
      );
    }
    if (!response.ok || !isRecord(payload) || !isRecord(payload.data)) {
      const rest = isRecord(payload) && isRecord(payload.error) ? payload.error : undefined;
      if (rest) throw new CatalogError(codeOf(rest.code, STATUS_CODES[response.status] ?? 'INTERNAL'), String(rest.message));
      throw new CatalogError(
        STATUS_CODES[response.status] ?? 'INTERNAL',
        `${this.server}/api/graphql answered ${response.status} without data`,
      );
    }
    return payload.data;
  }

  /**
   * Server-sent events of a streaming route, reconnecting with `Last-Event-ID` when the stream ends
   * (waiting up to a minute for a server that restarts); each `data:` parsed as JSON. Ends when `signal` aborts.
   */
  async *eventStream(
    path: string,
    query: Record<string, QueryValue>,
    lastEventId: string | undefined,
    signal?: AbortSignal,
  ): AsyncGenerator<unknown> {
    // Once streaming, a server restarting (refusing connections, or answering 503 meanwhile) is waited
    // for, a minute at most; a server that never answered is an error at once.
    let connected = false;
    let unreachableSince: number | undefined;
    const waitOrGiveUp = async (reason: () => Error): Promise<void> => {
      if (!connected) throw reason();
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > RECONNECT_FOR_MS) throw reason();
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
    };
    while (!signal?.aborted) {
      const url = new URL(`${this.server}${path}`);
      for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
      const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${this.token}` };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      let response: Response;
      try {
        response = await fetch(url, { headers, ...(signal ? { signal } : {}) });
      } catch (error) {
        if (signal?.aborted) return;
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        await waitOrGiveUp(
          () => new CommandError(`cannot reach ${this.server}: ${cause?.code ?? cause?.message ?? (error as Error).message}`),
        );
        continue;
      }
      if (response.status === 503 && connected) {
        await response.body?.cancel();
        await waitOrGiveUp(() => new CatalogError('UNAVAILABLE', `${this.server} answered 503 to the event stream for over a minute`));
        continue;
      }
      if (!response.ok || !response.body) {
        // The error answer is JSON: let rest() turn it into the CatalogError.
        await response.body?.cancel();
        await this.rest('GET', path, { query: { ...query, ...(lastEventId ? { after: lastEventId } : {}), limit: 1 } });
        throw new CatalogError('INTERNAL', `${this.server} answered ${response.status} to the event stream`);
      }
      connected = true;
      unreachableSince = undefined;
      try {
        for await (const event of readServerSentEvents(response.body as unknown as AsyncIterable<Uint8Array>)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.data !== undefined) yield JSON.parse(event.data) as unknown;
        }
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
    }
  }
}
