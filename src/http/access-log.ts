import type { AccessLogEntry } from './types';

/** One line per request, for a terminal or a log file: time, status, method, path, duration, actor, request id. */
export function formatAccessLogLine(entry: AccessLogEntry): string {
  const actor = entry.actorUrn ?? '-';
  const code = entry.errorCode ? ` ${entry.errorCode}` : '';
  return `${entry.time} ${entry.status} ${entry.method} ${entry.path} ${entry.durationMs.toFixed(1)}ms ${actor} ${entry.requestId}${code}`;
}

/** The level of a request's line: `info`, `warn` for a server-side failure (the error itself is logged apart). */
function levelOf(status: number): 'info' | 'warn' {
  return status >= 500 ? 'warn' : 'info';
}

/**
 * One JSON object per request, for log collectors: time, level, route template, status, duration,
 * request id (the `X-Request-Id` of the answer and the span's `metacatalog.request_id`), actor. Like the
 * text line, it never holds a token or a body.
 */
export function formatAccessLogJson(entry: AccessLogEntry): string {
  return JSON.stringify({
    time: entry.time,
    level: levelOf(entry.status),
    msg: 'request',
    requestId: entry.requestId,
    method: entry.method,
    route: entry.route,
    path: entry.path,
    status: entry.status,
    durationMs: entry.durationMs,
    ...(entry.actorUrn !== undefined ? { actor: entry.actorUrn } : {}),
    ...(entry.errorCode !== undefined ? { errorCode: entry.errorCode } : {}),
    ...(entry.remoteAddress !== undefined ? { remoteAddress: entry.remoteAddress } : {}),
    requestBytes: entry.requestBytes,
    responseBytes: entry.responseBytes,
  });
}

/** An unexpected error as one JSON object: where it happened and the error (message and stack). */
export function formatErrorLogJson(error: unknown, context: Record<string, string | undefined>, time = new Date()): string {
  const described =
    error instanceof Error
      ? { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) }
      : { message: String(error) };
  const fields = Object.fromEntries(Object.entries(context).filter(([, value]) => value !== undefined));
  return JSON.stringify({ time: time.toISOString(), level: 'error', msg: 'unexpected error', ...fields, error: described });
}
