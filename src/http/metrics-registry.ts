import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { CatalogTelemetry, MetricsSink } from '../core/telemetry';
import { registerGauges } from './metrics-gauges';

export type Prom = typeof PromClient;

/** prom-client is loaded on the first call that asks for metrics: importing the HTTP layer stays cheap. */
let prom: Prom | undefined;
export function promClient(): Prom {
  prom ??= createRequire(import.meta.url)('prom-client') as Prom;
  return prom;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
/** Distinct GraphQL operation names kept as label values; later ones are counted as `other`. */
const MAX_GRAPHQL_OPERATIONS = 100;
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,99}$/;
const HTTP_METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Children of a labelled metric by their label values: prom-client hashes the labels on every call,
 * this keeps the child. Bounded: label values are bounded sets, and the map starts over past 2,000.
 */
class Children<C> {
  private readonly children = new Map<string, C>();
  constructor(private readonly make: (values: string[]) => C) {}

  get(...values: string[]): C {
    const key = values.join('\u0000');
    let child = this.children.get(key);
    if (!child) {
      if (this.children.size >= 2000) this.children.clear();
      child = this.make(values);
      this.children.set(key, child);
    }
    return child;
  }
}

interface Observer {
  observe(value: number): void;
}
interface Incrementer {
  inc(value?: number): void;
}

/** A catalog's metrics in its own prom-client registry: what the sink records and what each scrape probes. */
export class CatalogMetrics implements MetricsSink {
  readonly registry: PromClient.Registry;
  private readonly httpRequests: Children<Incrementer>;
  private readonly httpDuration: Children<Observer>;
  private readonly graphql: Children<Incrementer>;
  private readonly graphqlNames = new Set<string>();
  private readonly operations: Children<Incrementer>;
  private readonly operationDuration: Children<Observer>;
  private readonly commits: Children<Incrementer>;
  private readonly commitDuration: Observer;
  private readonly commitEntities: Observer;
  private readonly changeEvents: Incrementer;
  private readonly queryDuration: Children<Observer>;
  private readonly verifications: Children<Incrementer>;

  constructor(telemetry: CatalogTelemetry) {
    const client = promClient();
    const registry = new client.Registry();
    this.registry = registry;
    const adapter = telemetry.adapterName;
    const registers = [registry];

    const httpRequests = new client.Counter({
      name: 'metacatalog_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpRequests = new Children(([method, route, status]) => httpRequests.labels({ method, route, status }));
    const httpDuration = new client.Histogram({
      name: 'metacatalog_http_request_duration_seconds',
      help: 'Time from the request to the last byte of its answer, by method and route template.',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.httpDuration = new Children(([method, route]) => httpDuration.labels({ method, route }));
    const graphql = new client.Counter({
      name: 'metacatalog_graphql_operations_total',
      help: `GraphQL requests by operation name (the first ${MAX_GRAPHQL_OPERATIONS} names seen; later ones are "other"), type and outcome.`,
      labelNames: ['operation', 'type', 'outcome'],
      registers,
    });
    this.graphql = new Children(([operation, type, outcome]) => graphql.labels({ operation, type, outcome }));
    const operations = new client.Counter({
      name: 'metacatalog_operations_total',
      help: 'Catalog calls by operation kind, method, adapter and outcome (ok or the error code).',
      labelNames: ['operation', 'method', 'adapter', 'outcome'],
      registers,
    });
    this.operations = new Children(([operation, method, outcome]) => operations.labels({ operation, method, adapter, outcome }));
    const operationDuration = new client.Histogram({
      name: 'metacatalog_operation_duration_seconds',
      help: 'Latency of catalog calls by operation kind, method and adapter.',
      labelNames: ['operation', 'method', 'adapter'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.operationDuration = new Children(([operation, method]) => operationDuration.labels({ operation, method, adapter }));
    const commits = new client.Counter({
      name: 'metacatalog_commits_total',
      help: 'Adapter commits by outcome: ok, conflict (the writer reads again and retries) or an error code.',
      labelNames: ['adapter', 'outcome'],
      registers,
    });
    this.commits = new Children(([outcome]) => commits.labels({ adapter, outcome }));
    this.commitDuration = new client.Histogram({
      name: 'metacatalog_commit_duration_seconds',
      help: 'Latency of adapter commits (one atomic batch each).',
      labelNames: ['adapter'],
      buckets: LATENCY_BUCKETS,
      registers,
    }).labels({ adapter });
    this.commitEntities = new client.Histogram({
      name: 'metacatalog_commit_entities',
      help: 'Entities written per committed batch (a bulk chunk is one batch).',
      labelNames: ['adapter'],
      buckets: SIZE_BUCKETS,
      registers,
    }).labels({ adapter });
    this.changeEvents = new client.Counter({
      name: 'metacatalog_change_events_total',
      help: 'Change events committed by this process (rate() gives events per second).',
      labelNames: ['adapter'],
      registers,
    }).labels({ adapter });
    const queryDuration = new client.Histogram({
      name: 'metacatalog_adapter_query_duration_seconds',
      help: 'Latency of adapter searches and aggregations, by kind and outcome.',
      labelNames: ['adapter', 'kind', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.queryDuration = new Children(([kind, outcome]) => queryDuration.labels({ adapter, kind, outcome }));
    const verifications = new client.Counter({
      name: 'metacatalog_token_verifications_total',
      help: 'Access token verifications by outcome: ok, expired, revoked, forged, unknown_key, malformed.',
      labelNames: ['outcome'],
      registers,
    });
    this.verifications = new Children(([outcome]) => verifications.labels({ outcome }));
    registerGauges(client, registry, telemetry);
  }

  operation(operation: string, method: string, outcome: string, seconds: number): void {
    this.operations.get(operation, method, outcome).inc();
    this.operationDuration.get(operation, method).observe(seconds);
  }

  commit(outcome: string, seconds: number, entities: number, events: number): void {
    this.commits.get(outcome).inc();
    this.commitDuration.observe(seconds);
    if (outcome === 'ok') {
      this.commitEntities.observe(entities);
      if (events > 0) this.changeEvents.inc(events);
    }
  }

  query(kind: string, outcome: string, seconds: number): void {
    this.queryDuration.get(kind, outcome).observe(seconds);
  }

  tokenVerification(outcome: string): void {
    this.verifications.get(outcome).inc();
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = HTTP_METHOD_LABELS.has(method) ? method : 'OTHER';
    this.httpRequests.get(methodLabel, route, String(status)).inc();
    this.httpDuration.get(methodLabel, route).observe(seconds);
  }

  graphqlOperation(operationName: string, operationType: string, outcome: string): void {
    let name = GRAPHQL_NAME.test(operationName) ? operationName : 'other';
    if (!this.graphqlNames.has(name)) {
      if (this.graphqlNames.size < MAX_GRAPHQL_OPERATIONS) this.graphqlNames.add(name);
      else name = 'other';
    }
    this.graphql.get(name, operationType, outcome).inc();
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
