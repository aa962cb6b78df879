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
export const MAX_LISTED_VIOLATIONS = 100;
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
  if (error.code === 'INVALID_INPUT') {
    const before = listed(error.details);
    const kept = error.message.endsWith(`: ${before}`) ? error.message.slice(0, -before.length - 2) : undefined;
    return invalidInput(details, summary ?? kept);
  }
  return new CatalogError(error.code, error.message, {
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
