import type { Attributes, Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import { isCatalogError } from '../../errors';

/**
 * Spans through `@opentelemetry/api`, an optional peer: loaded once per process with a dynamic import
 * (so `import 'metacatalog'` works without it), and a no-op until the host registers an SDK. Until the
 * import has resolved (`catalog.ready()` waits for it), or when the package is absent, nothing is traced.
 */
type TracingApi = typeof import('@opentelemetry/api');

let api: TracingApi | undefined;
/** The tracer of the global tracer provider it was taken from (a provider registered anew gets a new one). */
let tracerOf: { provider: unknown; tracer: Tracer } | undefined;
let loading: Promise<void> | undefined;
/** The API's no-op tracer provider: the global provider delegates to it until a host registers an SDK. */
let noopProvider: unknown;

const TRACER_NAME = 'metacatalog';

/** Starts loading the API (once per process); resolves when it is loaded or known to be missing. */
export function loadTracing(): Promise<void> {
  loading ??= import('@opentelemetry/api').then(
    (loaded) => {
      api = loaded;
      noopProvider = new loaded.ProxyTracerProvider().getDelegate();
    },
    () => undefined,
  );
  return loading;
}

/** The loaded API, or undefined (not installed, or not loaded yet). */
export function tracingApi(): TracingApi | undefined {
  return api;
}

/**
 * The loaded API when spans can be recorded: undefined also while no SDK is registered (the global
 * tracer provider still delegates to the no-op one), so that a host with the API installed but no SDK
 * pays a check per call, not a no-op span, a context and a promise per span (asked per call: an SDK
 * registered later is used from then on). A provider from another copy of the API counts as registered.
 */
export function activeTracingApi(): TracingApi | undefined {
  return activeTracer() ? api : undefined;
}

/** The tracer spans are made with, or undefined while nothing can record them (see activeTracingApi). */
function activeTracer(): Tracer | undefined {
  if (!api) return undefined;
  const provider = api.trace.getTracerProvider();
  if (provider instanceof api.ProxyTracerProvider && provider.getDelegate() === noopProvider) return undefined;
  // Taken anew when the host registers a provider again (after `trace.disable()`): a tracer of the old
  // one would send spans where no one reads them.
  if (tracerOf?.provider !== provider) tracerOf = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return tracerOf.tracer;
}

export type SpanAttributes = Attributes;
export type { Context, Span };

/** A failure as an outcome label: the catalog error code, or `error` for anything unexpected. */
export function outcomeOf(error: unknown): string {
  return isCatalogError(error) ? error.code : 'error';
}

/**
 * Runs `run` inside a span that is the active one for everything it awaits (catalog operations under an
 * HTTP request, adapter calls under an operation). Attributes are computed only for a recording span;
 * the outcome (`ok` or the error code) is set when it ends. A refusal (a CatalogError) is an outcome,
 * not a span error; anything else marks the span as failed.
 */
export function inSpan<T>(
  name: string,
  attributes: (() => SpanAttributes) | undefined,
  run: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context; outcome?: (result: T) => string } = {},
): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return run(undefined);
  const spanApi = api!;
  const spanOptions = options.kind === undefined ? {} : { kind: options.kind };
  const body = (span: Span): Promise<T> => {
    const recording = span.isRecording();
    if (recording && attributes) span.setAttributes(attributes());
    return run(span).then(
      (result) => {
        if (recording) span.setAttribute('metacatalog.outcome', options.outcome ? options.outcome(result) : 'ok');
        span.end();
        return result;
      },
      (error: unknown) => {
        if (recording) {
          span.setAttribute('metacatalog.outcome', outcomeOf(error));
          if (!isCatalogError(error)) {
            span.setStatus({ code: spanApi.SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
          }
        }
        span.end();
        throw error;
      },
    );
  };
  return options.parent ? tracer.startActiveSpan(name, spanOptions, options.parent, body) : tracer.startActiveSpan(name, spanOptions, body);
}
