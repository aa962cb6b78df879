import { activeTracingApi, inSpan, tracingApi, type CatalogTelemetry, type Span } from '../core/telemetry';
import type { IncomingExchange } from './exchange';

/** What the handler tells the request's span as it learns it. */
export interface RequestTrace {
  /** The matched route template (the span is renamed `METHOD /template`). */
  route(template: string): void;
  /** The GraphQL operation that ran. */
  graphql(operationName: string, operationType: string, outcome: string): void;
  /** The answer: status, request id, actor and error code (never a token or a body). */
  answered(answer: { status: number; requestId: string; actorUrn?: string; errorCode?: string }): void;
}

function traceOf(span: Span, method: string): RequestTrace {
  return {
    route(template) {
      span.updateName(`${method} ${template}`);
      span.setAttribute('http.route', template);
    },
    graphql(operationName, operationType, outcome) {
      span.setAttributes({
        'graphql.operation.name': operationName,
        'graphql.operation.type': operationType,
        'metacatalog.graphql.outcome': outcome,
      });
    },
    answered({ status, requestId, actorUrn, errorCode }) {
      span.setAttributes({
        'http.response.status_code': status,
        'metacatalog.request_id': requestId,
        ...(actorUrn !== undefined ? { 'metacatalog.actor': actorUrn } : {}),
        ...(errorCode !== undefined ? { 'error.type': errorCode } : {}),
      });
      const api = tracingApi();
      if (api && status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    },
  };
}

/**
 * Runs one request inside a server span that continues the caller's trace (the `traceparent` header,
 * read by the propagator the host registered). Without `@opentelemetry/api` the request runs as is.
 */
export function inRequestSpan<T extends { errorCode?: string }>(
  exchange: IncomingExchange,
  run: (trace: RequestTrace | undefined) => Promise<T>,
): Promise<T> {
  const api = activeTracingApi();
  if (!api) return run(undefined);
  const method = exchange.method.toUpperCase();
  const parent = api.propagation.extract(api.ROOT_CONTEXT, exchange, {
    keys: () => ['traceparent', 'tracestate'],
    get: (carrier, key) => carrier.header(key.toLowerCase()),
  });
  return inSpan(
    method,
    () => ({ 'http.request.method': method }),
    (span) => run(span?.isRecording() ? traceOf(span, method) : undefined),
    { kind: api.SpanKind.SERVER, parent, outcome: (result) => result.errorCode ?? 'ok' },
  );
}

/** Records one answered request in the catalog's metrics (when they are on). */
export function recordRequest(
  telemetry: CatalogTelemetry | undefined,
  method: string,
  route: string,
  status: number,
  seconds: number,
): void {
  telemetry?.metrics?.httpRequest(method.toUpperCase(), route, status, seconds);
}
