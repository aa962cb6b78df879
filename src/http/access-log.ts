import type { AccessLogEntry } from './types';

/** One line per request, for a terminal or a log file: time, status, method, path, duration, actor, request id. */
export function formatAccessLogLine(entry: AccessLogEntry): string {
  const actor = entry.actorUrn ?? '-';
  const code = entry.errorCode ? ` ${entry.errorCode}` : '';
  return `${entry.time} ${entry.status} ${entry.method} ${entry.path} ${entry.durationMs.toFixed(1)}ms ${actor} ${entry.requestId}${code}`;
}
