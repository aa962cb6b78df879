import type { Registry } from 'prom-client';
import type { Catalog } from '../catalog';
import { telemetryOf } from '../core/telemetry';
import { CatalogError } from '../errors';
import { CatalogMetrics, processMetricsRegistry } from './metrics-registry';

export interface MetricsHandlerOptions {
  /** Add Node's process metrics (prom-client's defaults: CPU, memory, event loop lag, GC). Default true. */
  processMetrics?: boolean;
}

/**
 * `GET /metrics` as a fetch-style handler (any path: the host mounts it), plus what a host that runs its
 * own prom-client registry needs to merge the catalog's metrics into it.
 */
export interface MetricsHandler {
  (request: Request): Promise<Response>;
  /** The catalog's own metrics (without the process metrics). */
  readonly registry: Registry;
  /** The Prometheus text of one scrape. */
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** Switches the catalog's metrics on (once; later calls share them) and returns them. */
function catalogMetricsOf(catalog: Catalog): CatalogMetrics {
  const telemetry = telemetryOf(catalog);
  if (!telemetry) throw new CatalogError('INVALID_INPUT', 'metrics need a catalog made by createCatalog');
  if (telemetry.metrics instanceof CatalogMetrics) return telemetry.metrics;
  const metrics = new CatalogMetrics(telemetry);
  telemetry.metrics = metrics;
  return metrics;
}

/**
 * Prometheus metrics of a catalog: requests by route template, catalog calls and adapter commits by
 * adapter, jobs, the change feed, token verifications, storage health and (by default) the process.
 * Measuring starts with this call; label values are bounded (no URN, actor or token ever is one).
 */
export function createMetricsHandler(catalog: Catalog, options: MetricsHandlerOptions = {}): MetricsHandler {
  const { registry } = catalogMetricsOf(catalog);
  const processRegistry = options.processMetrics === false ? undefined : processMetricsRegistry();
  const metrics = async () => {
    const own = await registry.metrics();
    return processRegistry ? `${own}\n${await processRegistry.metrics()}` : own;
  };
  const contentType = registry.contentType;
  const handler = async (request: Request): Promise<Response> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response(JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: 'metrics are read with GET' } }), {
        status: 405,
        headers: { 'content-type': 'application/json; charset=utf-8', allow: 'GET, HEAD' },
      });
    }
    const text = await metrics();
    return new Response(request.method === 'HEAD' ? null : text, { status: 200, headers: { 'content-type': contentType } });
  };
  return Object.assign(handler, { registry, metrics, contentType });
}
