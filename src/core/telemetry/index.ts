// The public face of the telemetry domain: spans and measurements at the catalog's boundaries (its public
// calls, the adapter's commits and queries), read by the HTTP layer's metrics handler and request spans.
export { measuredCommit, measuredQuery } from './adapter-calls';
export { instrumentService } from './catalog-operations';
export { attachTelemetry, CatalogTelemetry, telemetryOf } from './telemetry';
export type { MetricsSink } from './telemetry';
export { activeTracingApi, inSpan, loadTracing, tracingApi } from './tracing';
export type { Span } from './tracing';
