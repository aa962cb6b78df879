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

  toJSON(): { code: CatalogErrorCode; message: string; details?: readonly Violation[]; reason?: string } {
    return {
      code: this.code,
      message: this.message,
      ...(this.details.length ? { details: this.details } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }
}

export function isCatalogError(value: unknown): value is CatalogError {
  return value instanceof CatalogError;
}

/** An INVALID_INPUT error that lists every violation; the message names all of them. */
export function invalidInput(violations: readonly Violation[], summary?: string): CatalogError {
  const listed = violations.map((v) => (v.path ? `${v.path}: ${v.message}` : v.message)).join('; ');
  return new CatalogError('INVALID_INPUT', summary ? `${summary}: ${listed}` : listed, { details: violations });
}

/** Throws INVALID_INPUT when the list is not empty. */
export function throwIfViolations(violations: readonly Violation[], summary?: string): void {
  if (violations.length > 0) throw invalidInput(violations, summary);
}
