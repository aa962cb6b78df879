import { CatalogError, isCatalogError, RETRY_AFTER_SECONDS, unavailableReason, type CatalogErrorCode } from '../errors';
import type { OutgoingAnswer } from './exchange';

/** The HTTP status of each error code (docs/errors.md). A new code fails to compile until it is mapped here. */
export const STATUS_OF_CODE: Readonly<Record<CatalogErrorCode, number>> = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNSUPPORTED: 501,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  METHOD_NOT_ALLOWED: 405,
  TIMEOUT: 504,
  UNAVAILABLE: 503,
  RATE_LIMITED: 429,
  INTERNAL: 500,
};

const BASE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): OutgoingAnswer {
  return { status, headers: { ...BASE_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** An answer without a body (204, a HEAD request, a DELETE the platform answers with nothing). */
export function emptyAnswer(status: number, headers: Record<string, string> = {}): OutgoingAnswer {
  const { 'content-type': _omitted, ...rest } = { ...BASE_HEADERS, ...headers };
  return { status, headers: rest, body: '' };
}

/** A text answer (a page, a script, or JSON serialized already). */
export function textAnswer(status: number, body: string, contentType: string, headers: Record<string, string> = {}): OutgoingAnswer {
  return { status, headers: { ...BASE_HEADERS, 'content-type': contentType, ...headers }, body };
}

/** A refusal with an `Allow` header: the route exists, the method does not. */
export function methodNotAllowed(method: string, allowed: readonly string[]): CatalogError {
  const message = `${method} is not allowed here; allowed: ${allowed.join(', ')}`;
  const error = new CatalogError('METHOD_NOT_ALLOWED', message);
  allowedMethods.set(error, allowed);
  return error;
}
const allowedMethods = new WeakMap<CatalogError, readonly string[]>();

/**
 * The answer for a failure. A CatalogError keeps its code, message, details and reason (no cause, no
 * stack); anything else is INTERNAL with only the request id, and `report` is called with it. An
 * UNAVAILABLE storage is reported too (the log says why the service answers 503) and answered with
 * `Retry-After`.
 */
export function errorAnswer(
  error: unknown,
  requestId: string,
  report: (error: unknown) => void,
  restli?: { invalidInputStatus?: number },
): { answer: OutgoingAnswer; code: CatalogErrorCode } {
  if (!isCatalogError(error) || error.code === 'INTERNAL') {
    report(error);
    const message = `Internal error (request id ${requestId}); the server's log has the details`;
    const body = { error: { code: 'INTERNAL', message }, message, ...(restli ? { status: 500 } : {}) };
    return { answer: jsonAnswer(500, body), code: 'INTERNAL' };
  }
  const headers: Record<string, string> = {};
  if (error.code === 'UNAVAILABLE') {
    // A request shed by admission control is no failure to log (the metrics count it).
    if (error.reason !== 'overloaded') report(error);
    headers['retry-after'] = String(retryAfterSeconds(error));
  }
  if (error.code === 'UNAUTHENTICATED') headers['www-authenticate'] = wwwAuthenticate(error.reason);
  const allowed = allowedMethods.get(error);
  if (allowed) headers.allow = allowed.join(', ');
  const status =
    restli?.invalidInputStatus !== undefined && error.code === 'INVALID_INPUT' ? restli.invalidInputStatus : STATUS_OF_CODE[error.code];
  // `message` also at the top level: the platform's clients print the reason from there (and Rest.li's read `status`).
  const body = { error: error.toJSON(), message: error.message, ...(restli ? { status } : {}) };
  return { answer: jsonAnswer(status, body, headers), code: error.code };
}

/** RFC 6750: a missing credential gets the bare challenge; a bad token gets `invalid_token` with the reason. */
function wwwAuthenticate(reason: string | undefined): string {
  const realm = 'Bearer realm="metacatalog"';
  if (reason === undefined || reason === 'missing') return realm;
  return `${realm}, error="invalid_token", error_description="${reason.replace(/[^A-Za-z0-9_ .-]/g, '')}"`;
}

/** `Retry-After` of an UNAVAILABLE answer, in seconds. */
function retryAfterSeconds(error: CatalogError): number {
  return RETRY_AFTER_SECONDS[unavailableReason(error)];
}
