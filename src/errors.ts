/**
 * One error class for every failure the catalog reports on purpose. Transports map `code` to their
 * own vocabulary (HTTP status, GraphQL `extensions.code`); see docs/errors.md.
 */
export const ERROR_CODES = [
  'INVALID_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'UNSUPPORTED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'METHOD_NOT_ALLOWED',
  'TIMEOUT',
  'UNAVAILABLE',
  'RATE_LIMITED',
  'INTERNAL',
] as const;

export type CatalogErrorCode = (typeof ERROR_CODES)[number];

/** One problem found while validating input: where it is (a JSON path such as `/allowedValues/1/value`) and what is wrong. */
export interface Violation {
  path: string;
  message: string;
}

export interface CatalogErrorOptions {
  details?: readonly Violation[];
  cause?: unknown;
  /** Machine-readable reason, e.g. `expired` / `revoked` / `malformed` for UNAUTHENTICATED. */
  reason?: string;
}

export class CatalogError extends Error {
  readonly code: CatalogErrorCode;
  readonly details: readonly Violation[];
  readonly reason: string | undefined;

  constructor(code: CatalogErrorCode, message: string, options: CatalogErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CatalogError';
    this.code = code;
    this.details = options.details ?? [];
    this.reason = options.reason;
  }

  /**
   * The error as transports answer it: at most `MAX_LISTED_VIOLATIONS` of the details, with
   * `omittedDetails` counting the rest (a hostile body must not be answered many times its size).
   */
  toJSON(): { code: CatalogErrorCode; message: string; details?: readonly Violation[]; omittedDetails?: number; reason?: string } {
    const omitted = this.details.length - MAX_LISTED_VIOLATIONS;
    return {
      code: this.code,
      message: this.message,
      ...(this.details.length ? { details: omitted > 0 ? this.details.slice(0, MAX_LISTED_VIOLATIONS) : this.details } : {}),
      ...(omitted > 0 ? { omittedDetails: omitted } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }
}

/** Violations an answer lists; the rest are counted (`omittedDetails`), and an error's message names at most 10. */
const MAX_LISTED_VIOLATIONS = 100;
const MAX_VIOLATIONS_IN_MESSAGE = 10;

export function isCatalogError(value: unknown): value is CatalogError {
  return value instanceof CatalogError;
}

/**
 * An INVALID_INPUT error whose `details` hold every violation; the message names the first ten and
 * counts the rest, so that a refused batch of a thousand items does not make a message of a hundred KB.
 */
export function invalidInput(violations: readonly Violation[], summary?: string): CatalogError {
  const text = listed(violations);
  return new CatalogError('INVALID_INPUT', summary ? `${summary}: ${text}` : text, { details: violations });
}

/** Throws INVALID_INPUT when the list is not empty. */
export function throwIfViolations(violations: readonly Violation[], summary?: string): void {
  if (violations.length > 0) throw invalidInput(violations, summary);
}

/**
 * Why the storage is unavailable (the `reason` of an UNAVAILABLE error): the connection to the database
 * is lost or refused, the disk is full, the file or database is read-only, an I/O error, or the database
 * is locked by another writer for longer than the adapter waits.
 */
export type UnavailableReason = 'connection' | 'disk-full' | 'read-only' | 'io' | 'busy';

/** Seconds a client should wait before trying again (HTTP `Retry-After`), by reason. */
export const RETRY_AFTER_SECONDS: Readonly<Record<UnavailableReason, number>> = {
  connection: 1,
  busy: 1,
  'disk-full': 5,
  'read-only': 5,
  io: 5,
};

const REASON_TEXT: Readonly<Record<UnavailableReason, string>> = {
  connection: 'the connection to the database is lost',
  busy: 'the database is locked by another writer',
  'disk-full': 'the disk is full',
  'read-only': 'the database is read-only',
  io: 'an I/O error',
};

/** PostgreSQL SQLSTATEs (the `code` of a `pg` error) that say the server cannot serve now, not that the request is wrong. */
function reasonOfSqlState(code: string): UnavailableReason | undefined {
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return 'connection';
  if (code === '53100') return 'disk-full';
  if (code === '25006') return 'read-only'; // a standby, or a database set read-only
  if (code === '58030' || code === '58000') return 'io';
  return undefined;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** What the `pg` driver throws without a code when its connection ends or cannot be made. */
const DRIVER_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /is not queryable/,
  /^timeout exceeded when trying to connect/,
  /^Query read timeout/,
];

function reasonOf(code: string | undefined, message: string): UnavailableReason | undefined {
  if (code !== undefined) {
    if (code.startsWith('SQLITE_')) {
      if (code === 'SQLITE_FULL') return 'disk-full';
      if (code.startsWith('SQLITE_READONLY')) return 'read-only';
      if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'io';
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
      return undefined;
    }
    if (NETWORK_CODES.has(code)) return 'connection';
    if (code === 'ENOSPC' || code === 'EDQUOT') return 'disk-full';
    if (code === 'EROFS') return 'read-only';
    if (code === 'EIO') return 'io';
    if (/^[0-9A-Z]{5}$/.test(code)) return reasonOfSqlState(code);
  }
  return DRIVER_CONNECTION_MESSAGES.some((pattern) => pattern.test(message)) ? 'connection' : undefined;
}

/**
 * Whether `error` is a failure of the storage itself, and in what words (the driver's message, or a
 * network error's code only: never an address); undefined for anything else.
 */
export function storageFailure(error: unknown): { reason: UnavailableReason; words: string } | undefined {
  if (typeof error !== 'object' || error === null || error instanceof CatalogError) return undefined;
  const raw = (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : undefined;
  const message = error instanceof Error ? error.message : '';
  const reason = reasonOf(code, message);
  if (reason === undefined) return undefined;
  return { reason, words: code !== undefined && NETWORK_CODES.has(code) ? code : message || code || reason };
}

/**
 * The UNAVAILABLE error for a failure of the storage itself (disk full, connection lost, read-only file,
 * PostgreSQL shutting down...), or undefined when `error` is something else. Its `reason` tells the kinds
 * apart, its message names the storage's own words, and the original error is its `cause`. An
 * UNAVAILABLE CatalogError is returned as it is.
 */
export function storageUnavailable(error: unknown): CatalogError | undefined {
  if (error instanceof CatalogError) return error.code === 'UNAVAILABLE' ? error : undefined;
  const failure = storageFailure(error);
  if (!failure) return undefined;
  return new CatalogError('UNAVAILABLE', `the storage is unavailable (${REASON_TEXT[failure.reason]}): ${failure.words}; try again later`, {
    cause: error,
    reason: failure.reason,
  });
}

/** The `reason` of an UNAVAILABLE error as a known reason (adapters may throw UNAVAILABLE with none: `connection`). */
export function unavailableReason(error: CatalogError): UnavailableReason {
  const reason = error.reason as UnavailableReason | undefined;
  return reason !== undefined && reason in RETRY_AFTER_SECONDS ? reason : 'connection';
}

function listed(violations: readonly Violation[]): string {
  const named = violations.slice(0, MAX_VIOLATIONS_IN_MESSAGE).map((v) => (v.path ? `${v.path}: ${v.message}` : v.message));
  const more = violations.length - named.length;
  return `${named.join('; ')}${more > 0 ? `; and ${more} more (every one is in details)` : ''}`;
}

/**
 * The one way back from the canonical input's violation paths to the caller's shape: the error with
 * every path mapped by `map` (a transport's spelling of the body, a route that reports relative to the
 * value). Other errors are returned as they are. `summary` replaces the message's summary of an
 * INVALID_INPUT error (kept when left out).
 */
export function withPaths(error: unknown, map: (path: string) => string, summary?: string): unknown {
  if (!isCatalogError(error) || !error.details.length) return error;
  const details = error.details.map((d) => ({ path: map(d.path), message: d.message }));
  const before = listed(error.details);
  const kept = error.message.endsWith(`: ${before}`) ? error.message.slice(0, -before.length - 2) : undefined;
  if (error.code === 'INVALID_INPUT') return invalidInput(details, summary ?? kept);
  // Other codes keep their message, its listed violations spelled with the mapped paths too.
  const message = kept !== undefined ? `${kept}: ${listed(details)}` : error.message;
  return new CatalogError(error.code, message, {
    details,
    cause: error,
    ...(error.reason !== undefined ? { reason: error.reason } : {}),
  });
}

/** `path` relative to `root` when it lies under it (`/aspects/x/name` under `/aspects/x` is `/name`), unchanged otherwise. */
export function relativeTo(path: string, root: string): string {
  if (path === root) return '';
  return path.startsWith(`${root}/`) ? path.slice(root.length) : path;
}
