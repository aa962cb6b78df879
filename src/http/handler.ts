import type { Actor } from '../core/access';
import { randomUUID } from 'node:crypto';
import type { Catalog } from '../catalog';
import { CatalogError } from '../errors';
import { emptyAnswer, errorAnswer, jsonAnswer, textAnswer } from './answers';
import { repeatLimitedErrorLog } from './error-log';
import { admissionOf, checkAdmissionOptions, graphqlUnits, type Release, type RequestClass } from './admission';
import { authenticateRequest } from './authenticate';
import { checkRateLimitOptions, RateLimiter, rateLimited } from './rate-limit';
import { ClientGoneError, type IncomingExchange, type OutgoingAnswer } from './exchange';
import { checkContentType, parseJsonBody } from './json-body';
import { redactForLog } from './redact';
import { compileRoutes, matchRoute, pathSegments, type BodyKind, type RouteSpec } from './router';
import { allRoutes } from './routes/index';
import { telemetryOf } from '../core/telemetry';
import { inRequestSpan, recordRequest, type RequestTrace } from './request-telemetry';
import type { AccessLogEntry, HttpOptions } from './types';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_PROPOSAL_BODY_BYTES = 16 * 1024 * 1024;

/** What the server adapter sends, and how it completes the access-log entry once it has. */
interface HandledRequest {
  answer: OutgoingAnswer;
  /** The request body was refused part-way: the connection should not be reused. */
  closeConnection: boolean;
  /** The client went away before the answer: nothing is to be sent. */
  clientGone: boolean;
  /** Calls the access-log hook (once) with the status sent and the bytes written. */
  logSent(status: number, responseBytes: number): void;
  /** The error code of a refused or failed request. */
  errorCode?: string;
  /** Refused by admission control (503 overloaded): the server may close the connection after it. */
  shed: boolean;
}

export type RequestHandler = (exchange: IncomingExchange) => Promise<HandledRequest>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

function checkOptions(options: HttpOptions): void {
  for (const name of ['maxBodyBytes', 'maxProposalBodyBytes'] as const) {
    const max = options[name];
    if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
      throw new CatalogError('INVALID_INPUT', `${name} must be a positive integer, got ${String(max)}`);
    }
  }
  const base = options.basePath;
  if (base !== undefined && (typeof base !== 'string' || !/^(\/[A-Za-z0-9._~-]+)*$/.test(base))) {
    throw new CatalogError('INVALID_INPUT', `basePath must look like "/catalog" (or be empty), got ${JSON.stringify(base)}`);
  }
  checkAdmissionOptions(options.admission);
  checkRateLimitOptions(options.rateLimit);
}

/** Routes never refused by admission control or rate limits: a balancer's health check must see the truth. */
const NEVER_SHED = new Set(['/health']);

/** The admission class of a matched route. */
function requestClassOf(pattern: string, method: string): RequestClass {
  if (pattern === '/api/graphql') return 'graphql';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/**
 * The server-independent core of `createFetchHandler` and `createNodeListener`: routes the request,
 * authenticates it, reads its body, calls the route and turns every failure into an error answer.
 */
export function createRequestHandler(
  catalog: Catalog,
  options: HttpOptions = {},
  routeSpecs: readonly RouteSpec[] = allRoutes(catalog, options),
): RequestHandler {
  checkOptions(options);
  const routes = compileRoutes(routeSpecs);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxProposalBodyBytes = Math.max(maxBodyBytes, options.maxProposalBodyBytes ?? DEFAULT_MAX_PROPOSAL_BODY_BYTES);
  const baseSegments = (options.basePath ?? '').split('/').filter(Boolean);
  const trustActorHeader = options.trustActorHeader === true;
  const onError = options.onError ?? repeatLimitedErrorLog((line) => process.stderr.write(line), { prefix: 'metacatalog http' });
  const telemetry = telemetryOf(catalog);
  const admission = admissionOf(options.admission, (requestClass, why) => telemetry?.metrics?.httpShed?.('overloaded', requestClass, why));
  const limiter = options.rateLimit !== undefined ? new RateLimiter(options.rateLimit) : undefined;

  const handleExchange = async (exchange: IncomingExchange, trace: RequestTrace | undefined): Promise<HandledRequest> => {
    const startedAt = performance.now();
    const arrivedAt = Date.now();
    const given = exchange.header('x-request-id');
    const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    let redacted: string | undefined;
    const logPath = () => (redacted ??= redactForLog(exchange.rawPath, exchange.rawQuery));
    let actorUrn: string | undefined;
    let actor: Actor | undefined;
    let requestBytes = 0;
    let errorCode: string | undefined;
    let closeConnection = false;
    let clientGone = false;
    let shed = false;
    // The route template (bounded: a label and a span name), `unmatched` until a route matched.
    let route = 'unmatched';
    const report = (error: unknown, where: string) => {
      try {
        onError(error, { requestId, method: exchange.method, path: logPath(), route, where });
      } catch {
        // A failing error hook must not change the answer.
      }
    };

    const readJson = async (kind: BodyKind, limit: number): Promise<unknown> => {
      if (!exchange.hasBody()) {
        if (kind === 'optional-json') return undefined;
        const message = 'this route needs a JSON body';
        throw new CatalogError('INVALID_INPUT', message, { details: [{ path: 'body', message }] });
      }
      const accepted =
        kind === 'json-patch'
          ? ['application/json-patch+json']
          : kind === 'json-or-json-patch'
            ? ['application/json-patch+json', 'application/json']
            : ['application/json'];
      checkContentType(exchange.header('content-type'), accepted);
      let bytes: Uint8Array;
      try {
        bytes = await exchange.readBody(limit);
      } catch (error) {
        if (error instanceof CatalogError && error.code === 'PAYLOAD_TOO_LARGE') closeConnection = true;
        throw error;
      }
      requestBytes = bytes.byteLength;
      if (bytes.byteLength === 0 && kind === 'optional-json') return undefined;
      return parseJsonBody(bytes);
    };

    let answer: OutgoingAnswer;
    let restliErrors: { invalidInputStatus?: number } | undefined;
    let release: Release | undefined;
    let rateHeaders: Record<string, string> | undefined;
    /** Takes one request from the client's bucket: RATE_LIMITED when it is empty. */
    const limitRate = (key: string, requestClass: RequestClass) => {
      if (!limiter) return;
      const decision = limiter.take(key);
      rateHeaders = decision.headers;
      if (!decision.allowed) {
        telemetry?.metrics?.httpShed?.('rate_limited', requestClass, 'rate');
        throw rateLimited(limiter);
      }
    };
    try {
      let segments = pathSegments(exchange.rawPath) ?? [];
      if (!baseSegments.every((s, i) => segments[i] === s)) throw new CatalogError('NOT_FOUND', `every route is under ${options.basePath}`);
      segments = segments.slice(baseSegments.length);
      if (segments[0] === 'gms') segments = segments.slice(1);
      const match = matchRoute(routes, exchange.method.toUpperCase(), segments);
      restliErrors = match.method.restliErrors;
      route = match.spec.pattern;
      trace?.route(route);
      const method = exchange.method.toUpperCase();
      const requestClass = requestClassOf(route, method);
      const sheddable = !NEVER_SHED.has(route);
      // Admitted (or refused) at arrival, before its authentication or body cost anything: every wait
      // a request has inside the handler is then in the gate's queue, bounded by maxQueueMs. A GraphQL
      // request weighs what recent ones weighed (its body is not read yet).
      if (admission && sheddable) {
        admission.precheck(requestClass);
        const admitted = admission.admit(requestClass, admission.typicalUnits(requestClass), exchange.waitedMs ?? 0);
        release = typeof admitted === 'function' ? admitted : await admitted;
        // A client that left while it waited (or the server cut it at a stop) gets no work done.
        if (exchange.isGone()) throw new ClientGoneError();
      }
      const addressKey = `address ${exchange.remoteAddress ?? 'unknown'}`;
      if (!match.method.public) {
        let authenticated: Awaited<ReturnType<typeof authenticateRequest>>;
        try {
          authenticated = await authenticateRequest(catalog, exchange.header, trustActorHeader);
        } catch (error) {
          // Failed attempts count against the address: guessing tokens is rate limited too.
          if (sheddable) limitRate(addressKey, requestClass);
          throw error;
        }
        actor = authenticated.actor;
        actorUrn = typeof actor === 'string' ? actor : actor.urn;
        if (sheddable)
          limitRate(authenticated.tokenId !== undefined ? `token ${authenticated.tokenId}` : `actor ${actorUrn}`, requestClass);
      } else if (sheddable) limitRate(addressKey, requestClass);
      const limit = match.method.bodyLimit === 'proposals' ? maxProposalBodyBytes : maxBodyBytes;
      const body = match.method.body === 'none' ? undefined : await readJson(match.method.body, limit);
      // A client that left while its body was read, or before its call started, gets no call at all.
      if (exchange.isGone()) throw new ClientGoneError();
      if (admission && sheddable && requestClass === 'graphql') admission.noteUnits(requestClass, graphqlUnits(body));
      const result = await match.method.handle({
        catalog,
        actorUrn: actorUrn ?? '',
        actor: actor ?? '',
        basePath: options.basePath ?? '',
        params: match.params,
        query: new URLSearchParams(exchange.rawQuery),
        body,
        requestId,
        reportError: report,
        header: exchange.header,
        noteGraphQL(operationName, operationType, outcome) {
          telemetry?.metrics?.graphqlOperation(operationName, operationType, outcome);
          trace?.graphql(operationName, operationType, outcome);
        },
      });
      answer = result.stream
        ? { status: result.status ?? 200, headers: { ...result.headers }, body: '', stream: result.stream }
        : result.body === undefined
          ? emptyAnswer(result.status ?? 200, result.headers)
          : result.contentType !== undefined && typeof result.body === 'string'
            ? textAnswer(result.status ?? 200, result.body, result.contentType, result.headers)
            : jsonAnswer(result.status ?? 200, result.body, result.headers);
    } catch (error) {
      if (error instanceof ClientGoneError) {
        clientGone = true;
        errorCode = 'CLIENT_GONE';
        answer = jsonAnswer(499, { error: { code: 'CLIENT_GONE', message: error.message } });
      } else {
        const failed = errorAnswer(error, requestId, (e) => report(e, 'http'), restliErrors);
        answer = failed.answer;
        errorCode = failed.code;
        shed = error instanceof CatalogError && error.code === 'UNAVAILABLE' && error.reason === 'overloaded';
      }
    } finally {
      // The slot is held while the route works; a stream's slot is given back when it starts.
      release?.();
    }
    if (rateHeaders) Object.assign(answer.headers, rateHeaders);
    answer.headers['x-request-id'] = requestId;
    trace?.answered({
      status: answer.status,
      requestId,
      ...(actorUrn !== undefined ? { actorUrn } : {}),
      ...(errorCode ? { errorCode } : {}),
    });
    // A HEAD answer carries the status and headers of its GET, never a body (nor a stream).
    if (exchange.method.toUpperCase() === 'HEAD') {
      answer.stream?.cancel();
      answer = { status: answer.status, headers: answer.headers, body: '' };
    }

    let logged = false;
    return {
      answer,
      closeConnection,
      clientGone,
      shed,
      ...(errorCode !== undefined ? { errorCode } : {}),
      logSent(status, responseBytes) {
        if (logged) return;
        logged = true;
        const seconds = (performance.now() - startedAt) / 1000;
        recordRequest(telemetry, exchange.method, route, status, seconds);
        if (!options.accessLog) return;
        const entry: AccessLogEntry = {
          time: new Date(arrivedAt).toISOString(),
          requestId,
          method: exchange.method,
          path: logPath(),
          route,
          status,
          durationMs: Math.round(seconds * 1_000_000) / 1000,
          ...(actorUrn !== undefined ? { actorUrn } : {}),
          ...(errorCode !== undefined ? { errorCode } : {}),
          ...(exchange.remoteAddress !== undefined ? { remoteAddress: exchange.remoteAddress } : {}),
          requestBytes,
          responseBytes,
        };
        try {
          options.accessLog(entry);
        } catch {
          // The access log never fails a request.
        }
      },
    };
  };

  return (exchange) => inRequestSpan(exchange, (trace) => handleExchange(exchange, trace));
}
