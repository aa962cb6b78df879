import type { AdmissionOptions } from './admission';
import type { RateLimitOptions } from './rate-limit';

/** One line of the access log, handed to the host's hook. It never holds a token or a request body. */
export interface AccessLogEntry {
  /** ISO 8601 time the request arrived. */
  time: string;
  /** The `X-Request-Id` of the answer (the client's, when it sent a well-formed one). */
  requestId: string;
  method: string;
  /** Path and query as received, with credentials redacted (`access_token=…`, anything shaped like a JWT). */
  path: string;
  /** The route template that answered (`/openapi/v2/entity/{entityName}/{urn}`), or `unmatched`. */
  route: string;
  /** The status sent; 499 when the client went away before the answer. */
  status: number;
  durationMs: number;
  /** The authenticated actor, when authentication succeeded. */
  actorUrn?: string;
  /** The error code of a refused or failed request. */
  errorCode?: string;
  remoteAddress?: string;
  /** Body bytes read and written. */
  requestBytes: number;
  responseBytes: number;
}

/** Where an unexpected error happened (for the host's error log). */
export interface HttpErrorReport {
  requestId: string;
  method: string;
  /** Redacted like the access log's. */
  path: string;
  /** The route template, or `unmatched`. */
  route?: string;
  /** `http` for a route, `graphql <field path>` for a resolver. */
  where: string;
}

export interface HttpOptions {
  /**
   * Take the actor from `X-Service-Actor: <user urn>` when a request has no `Authorization` header.
   * Only for a service behind a trusted front that authenticates users itself. Default false.
   */
  trustActorHeader?: boolean;
  /** Largest request body accepted, in bytes (413 beyond). Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Largest body of DataHub's change proposal batches (`POST /aspects?action=ingestProposal(Batch)`),
   * whose clients send up to 15 MB. Default 16 MiB (never below `maxBodyBytes`).
   */
  maxProposalBodyBytes?: number;
  /** A prefix the host mounts the routes under (e.g. `/catalog`); routes are then also under `<basePath>/gms`. */
  basePath?: string;
  /** Serve `POST /api/graphql` (needs the optional peer `graphql`). Default true. */
  graphql?: boolean;
  /** Limits of `POST /api/graphql`, checked before a document runs (docs/graphql.md). */
  graphqlLimits?: GraphQLHttpLimits;
  /** Called once per request after the answer was sent (or the client went away). Never sees tokens. */
  accessLog?: (entry: AccessLogEntry) => void;
  /**
   * Called with every unexpected error (the client sees `INTERNAL` with the request id only) and with
   * every UNAVAILABLE one (the storage failing: the client sees 503 and `Retry-After`). Default: stderr,
   * the same failure repeated written once per 10 s and then counted.
   */
  onError?: (error: unknown, report: HttpErrorReport) => void;
  /**
   * Admission control (docs/operations.md): requests running at once per class (reads, writes, GraphQL
   * weighed by its cost) and how long one may wait; beyond, 503 `UNAVAILABLE` with `Retry-After` at once.
   * `/health` is never refused. On by default (4 units per core); `false` or `maxInFlight: 0` turns it off.
   */
  admission?: AdmissionOptions | false;
  /**
   * Requests per second per client (the access token's id, else the trusted actor, else the address):
   * beyond, 429 `RATE_LIMITED` with `Retry-After`; every answer then carries `RateLimit-Limit`,
   * `RateLimit-Remaining` and `RateLimit-Reset`. A number is `perSecond`. Default: no limit.
   */
  rateLimit?: number | RateLimitOptions;
}

/** A fetch-style handler: standard `Request` in, `Response` out. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** The GraphQL endpoint's limits; every one has a safe default (docs/graphql.md). */
export interface GraphQLHttpLimits {
  /** Deepest field nesting, fragments expanded. Default 15. */
  maxDepth?: number;
  /** Cost budget of one operation (fields × list sizes, aliases counted). Default 50,000. */
  maxCost?: number;
  /** Items assumed for a list whose size no argument gives. Default 10. */
  defaultListSize?: number;
  /** Largest answer, in bytes of JSON; a larger one is refused (413). Default 16 MiB. */
  maxResponseBytes?: number;
  /** Time one request may run; resolvers that start later fail with TIMEOUT. Default 10 s. */
  timeoutMs?: number;
  /** Bytes of parsed documents kept for reuse (documents over 1/16 of it are not kept). Default 8 MiB. */
  documentCacheBytes?: number;
}
