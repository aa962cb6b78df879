import type * as PromClient from 'prom-client';
import type { CatalogTelemetry, MetricsSink } from '../core/telemetry';
import { promClient } from './metrics-client';
import { registerGauges } from './metrics-gauges';
import { FastCounter, FastHistogram } from './metrics-series';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** Distinct GraphQL operation names kept as label values; later ones are counted as `other`. */
const MAX_GRAPHQL_OPERATIONS = 100;
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,99}$/;
const HTTP_METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A catalog's metrics in its own prom-client registry: what the sink records and what each scrape probes. */
export class CatalogMetrics implements MetricsSink {
  readonly registry: PromClient.Registry;
  private readonly adapter: string;
  private readonly httpRequests = new FastCounter(
    'metacatalog_http_requests_total',
    'HTTP requests answered, by method, route template and status.',
    ['method', 'route', 'status'],
  );
  private readonly httpDuration = new FastHistogram(
    'metacatalog_http_request_duration_seconds',
    'Time from the request to the last byte of its answer, by method and route template.',
    ['method', 'route'],
    LATENCY_BUCKETS,
  );
  private readonly graphql = new FastCounter(
    'metacatalog_graphql_operations_total',
    `GraphQL requests by operation name (the first ${MAX_GRAPHQL_OPERATIONS} names seen; later ones are "other"), type and outcome.`,
    ['operation', 'type', 'outcome'],
  );
  private readonly graphqlNames = new Set<string>();
  private readonly operations = new FastCounter(
    'metacatalog_operations_total',
    'Catalog calls by operation kind, method, adapter and outcome (ok or the error code).',
    ['operation', 'method', 'adapter', 'outcome'],
  );
  private readonly operationDuration = new FastHistogram(
    'metacatalog_operation_duration_seconds',
    'Latency of catalog calls by operation kind, method and adapter.',
    ['operation', 'method', 'adapter'],
    LATENCY_BUCKETS,
  );
  private readonly commits = new FastCounter(
    'metacatalog_commits_total',
    'Adapter commits by outcome: ok, conflict (the writer reads again and retries) or an error code.',
    ['adapter', 'outcome'],
  );
  private readonly commitDuration = new FastHistogram(
    'metacatalog_commit_duration_seconds',
    'Latency of adapter commits (one atomic batch each).',
    ['adapter'],
    LATENCY_BUCKETS,
  );
  private readonly commitEntities = new FastHistogram(
    'metacatalog_commit_entities',
    'Entities written per committed batch (a bulk chunk is one batch).',
    ['adapter'],
    SIZE_BUCKETS,
  );
  private readonly changeEvents = new FastCounter(
    'metacatalog_change_events_total',
    'Change events committed by this process (rate() gives events per second).',
    ['adapter'],
  );
  private readonly queryDuration = new FastHistogram(
    'metacatalog_adapter_query_duration_seconds',
    'Latency of adapter searches and aggregations, by kind and outcome.',
    ['adapter', 'kind', 'outcome'],
    LATENCY_BUCKETS,
  );
  private readonly shed = new FastCounter(
    'metacatalog_http_shed_total',
    'HTTP requests refused before they ran: overloaded (503, admission control) or rate_limited (429), by request class and why (queue-full, wait, loop-lag, rate).',
    ['kind', 'class', 'why'],
  );
  private readonly verifications = new FastCounter(
    'metacatalog_token_verifications_total',
    'Access token verifications by outcome: ok, expired, revoked, forged, unknown_key, malformed.',
    ['outcome'],
  );

  constructor(telemetry: CatalogTelemetry) {
    const client = promClient();
    this.registry = new client.Registry();
    this.adapter = telemetry.adapterName;
    for (const metric of [
      this.httpRequests,
      this.httpDuration,
      this.graphql,
      this.operations,
      this.operationDuration,
      this.commits,
      this.commitDuration,
      this.commitEntities,
      this.changeEvents,
      this.queryDuration,
      this.verifications,
      this.shed,
    ]) {
      this.registry.registerMetric(metric as unknown as PromClient.Metric);
    }
    registerGauges(client, this.registry, telemetry);
  }

  operation(operation: string, method: string, outcome: string, seconds: number): void {
    this.operations.child(operation, method, this.adapter, outcome).value += 1;
    this.operationDuration.child(operation, method, this.adapter).observe(seconds);
  }

  commit(outcome: string, seconds: number, entities: number, events: number): void {
    this.commits.child(this.adapter, outcome).value += 1;
    this.commitDuration.child(this.adapter).observe(seconds);
    if (outcome === 'ok') {
      this.commitEntities.child(this.adapter).observe(entities);
      if (events > 0) this.changeEvents.child(this.adapter).value += events;
    }
  }

  query(kind: string, outcome: string, seconds: number): void {
    this.queryDuration.child(this.adapter, kind, outcome).observe(seconds);
  }

  tokenVerification(outcome: string): void {
    this.verifications.child(outcome).value += 1;
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = HTTP_METHOD_LABELS.has(method) ? method : 'OTHER';
    this.httpRequests.child(methodLabel, route, status).value += 1;
    this.httpDuration.child(methodLabel, route).observe(seconds);
  }

  httpShed(kind: string, requestClass: string, why: string): void {
    this.shed.child(kind, requestClass, why).value += 1;
  }

  graphqlOperation(operationName: string, operationType: string, outcome: string): void {
    let name = GRAPHQL_NAME.test(operationName) ? operationName : 'other';
    if (!this.graphqlNames.has(name)) {
      if (this.graphqlNames.size < MAX_GRAPHQL_OPERATIONS) this.graphqlNames.add(name);
      else name = 'other';
    }
    this.graphql.child(name, operationType, outcome).value += 1;
  }
}

/** Node's process metrics (prom-client's defaults), once per process whatever the number of catalogs. */
let processRegistry: PromClient.Registry | undefined;
export function processMetricsRegistry(): PromClient.Registry {
  if (!processRegistry) {
    const client = promClient();
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
