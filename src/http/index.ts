/**
 * `metacatalog/http`: the catalog over HTTP, wire-compatible with the established metadata platform
 * (`/api/graphql`, the OpenAPI v2 entity family, `/operations?action=...`), every route also under
 * `/gms`. Transports are thin: routes parse, call the catalog as the authenticated actor and shape the
 * answer (docs/http.md).
 */
export { createFetchHandler } from './fetch-handler';
export { createNodeListener } from './node-listener';
export type { NodeListener } from './node-listener';
export { startServer } from './server';
export type { RunningServer, ServerOptions } from './server';
export { DEFAULT_MAX_BODY_BYTES } from './handler';
export { STATUS_OF_CODE } from './answers';
export { formatAccessLogJson, formatAccessLogLine, formatErrorLogJson } from './access-log';
export { createMetricsHandler } from './metrics-handler';
export type { MetricsHandler, MetricsHandlerOptions } from './metrics-handler';
export { startMetricsServer } from './metrics-server';
export type { MetricsServerOptions, RunningMetricsServer } from './metrics-server';
export type { AccessLogEntry, FetchHandler, HttpErrorReport, HttpOptions } from './types';
export type { AdmissionOptions } from './admission';
export type { RateLimitOptions } from './rate-limit';
export { decodeYamlDefinitions, decodeYamlEntry, previewYamlDefinitions, upsertYamlDefinitions, yamlDefinitionPath } from './property-yaml';
