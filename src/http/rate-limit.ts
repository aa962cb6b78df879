import { CatalogError } from '../errors';

/**
 * Requests per client: a token bucket per access token (by the verified token's id, never the token
 * itself), per actor when a trusted front names it, per address otherwise. docs/operations.md.
 */
export interface RateLimitOptions {
  /** Requests per second each client may send on average. */
  perSecond: number;
  /** Requests a client may send at once after a quiet while. Default `perSecond` (one second's worth). */
  burst?: number;
  /** Clients whose buckets are kept (least recently seen dropped first: a dropped one starts full). Default 10,000. */
  maxClients?: number;
}

const DEFAULT_MAX_CLIENTS = 10_000;

/** INVALID_INPUT naming the bad rate limit option. */
export function checkRateLimitOptions(options: number | RateLimitOptions | undefined): void {
  if (options === undefined) return;
  const given = typeof options === 'number' ? { perSecond: options } : options;
  if (typeof given !== 'object' || given === null) throw new CatalogError('INVALID_INPUT', 'rateLimit must be a number or an object');
  if (typeof given.perSecond !== 'number' || !Number.isFinite(given.perSecond) || given.perSecond <= 0) {
    throw new CatalogError('INVALID_INPUT', `rateLimit.perSecond must be a positive number, got ${String(given.perSecond)}`);
  }
  for (const name of ['burst', 'maxClients'] as const) {
    const value = given[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new CatalogError('INVALID_INPUT', `rateLimit.${name} must be a positive integer, got ${String(value)}`);
    }
  }
}

/** The `RateLimit-*` headers of one answer, and whether the request may go on. */
export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets by client key, in a map bounded by `maxClients` (insertion order kept as recency). */
export class RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  private readonly maxClients: number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    options: number | RateLimitOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    const given = typeof options === 'number' ? { perSecond: options } : options;
    this.perSecond = given.perSecond;
    this.burst = given.burst ?? Math.max(1, Math.ceil(given.perSecond));
    this.maxClients = given.maxClients ?? DEFAULT_MAX_CLIENTS;
  }

  /** Takes one request from the client's bucket. */
  take(key: string): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: this.burst, at: now };
      if (this.buckets.size >= this.maxClients) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
    }
    this.buckets.set(key, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const secondsToFull = (this.burst - bucket.tokens) / this.perSecond;
    const headers: Record<string, string> = {
      'ratelimit-limit': String(this.burst),
      'ratelimit-remaining': String(Math.floor(bucket.tokens)),
      'ratelimit-reset': String(Math.ceil(secondsToFull)),
    };
    if (!allowed) headers['retry-after'] = String(Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)));
    return { allowed, headers };
  }

  /** Clients with a bucket now. */
  size(): number {
    return this.buckets.size;
  }
}

/** The refusal of a request over its client's rate. */
export function rateLimited(limiter: RateLimiter): CatalogError {
  return new CatalogError(
    'RATE_LIMITED',
    `too many requests: this client may send ${limiter.perSecond} per second (bursts of ${limiter.burst}); wait for Retry-After`,
  );
}
