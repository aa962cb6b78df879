import type { Job } from '../../adapter/types';

/**
 * Where a catalog's measurements go once a host asks for metrics (`createMetricsHandler` attaches one).
 * Every label value handed in is bounded: operation and method names from a fixed table, route
 * templates, error codes, adapter and job type names; never a URN, an actor or a token.
 */
export interface MetricsSink {
  /** One public catalog call: `operation` (upsert, bulk, patch, delete, search, ...), `method` (`entities.upsertMany`). */
  operation(operation: string, method: string, outcome: string, seconds: number): void;
  /** One adapter commit: `ok`, `conflict` (the writer retries) or `error`; entities and change events in it. */
  commit(outcome: string, seconds: number, entities: number, events: number): void;
  /** One adapter query: `search`, `aggregate`. */
  query(kind: string, outcome: string, seconds: number): void;
  /** One token verification: ok, expired, revoked, forged, unknown_key, malformed. */
  tokenVerification(outcome: string): void;
  /** One HTTP request, by route template (`unmatched` when no route matched). */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** One GraphQL request that named (or had) an operation. */
  graphqlOperation(operationName: string, operationType: string, outcome: string): void;
  /** One HTTP request refused before it ran: `overloaded` (admission control) or `rate_limited`, by request class. */
  httpShed?(kind: string, requestClass: string, why: string): void;
}

/** What the scrape reads at collection time, through the catalog's own state. */
export interface TelemetryProbe {
  /** Pending and dead jobs, oldest first (at most `limit`). */
  jobs(limit: number): Promise<Job[]>;
  /** The change feed's head id, and the time of the oldest event still kept; undefined without a feed. */
  changeFeed(): Promise<{ lastId?: string; oldestTime?: number } | undefined>;
  /** Whether writes reach the storage, and since when they fail. */
  storage(): Promise<{ ok: boolean; failingSince?: number }>;
  now(): number;
}

/**
 * A catalog's telemetry: its adapter's name (a label everywhere), the sink (none until metrics are asked
 * for: measuring costs nothing until then), the live change-feed followers, and the probe for gauges.
 */
export class CatalogTelemetry {
  metrics: MetricsSink | undefined;
  /** Open `changes.follow` iterations (server-sent event streams included). */
  followers = 0;

  constructor(
    readonly adapterName: string,
    readonly probe: TelemetryProbe,
  ) {}
}

const TELEMETRY = Symbol.for('metacatalog.telemetry');

/** Attaches the telemetry to the catalog object (a hidden property: not part of its enumerable surface). */
export function attachTelemetry<T extends object>(telemetry: CatalogTelemetry, catalog: T): T {
  Object.defineProperty(catalog, TELEMETRY, { value: telemetry, enumerable: false });
  return catalog;
}

/** The telemetry of a catalog made by `createCatalog`; undefined for any other object. */
export function telemetryOf(catalog: object): CatalogTelemetry | undefined {
  const value = (catalog as { [TELEMETRY]?: unknown })[TELEMETRY];
  return value instanceof CatalogTelemetry ? value : undefined;
}
