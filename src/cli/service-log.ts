import { formatAccessLogJson, formatAccessLogLine, formatErrorLogJson } from '../http/access-log';
import type { AccessLogEntry, HttpErrorReport } from '../http/types';
import type { CommandIo } from './io';

export type LogFormat = 'text' | 'json';

/** How `serve` writes its access log (stdout) and errors (stderr): text lines, or one JSON object per line. */
export interface ServiceLog {
  access(entry: AccessLogEntry): void;
  requestError(error: unknown, report: HttpErrorReport): void;
  /** An error of background work (jobs, retention) or of opening the store. */
  backgroundError(error: unknown, where: string): void;
}

export function serviceLog(format: LogFormat, io: CommandIo): ServiceLog {
  if (format === 'json') {
    return {
      access: (entry) => io.stdout(`${formatAccessLogJson(entry)}\n`),
      requestError: (error, report) =>
        io.stderr(
          `${formatErrorLogJson(error, { requestId: report.requestId, method: report.method, route: report.route, path: report.path, where: report.where })}\n`,
        ),
      backgroundError: (error, where) => io.stderr(`${formatErrorLogJson(error, { where })}\n`),
    };
  }
  return {
    access: (entry) => io.stdout(`${formatAccessLogLine(entry)}\n`),
    requestError: (error, report) =>
      io.stderr(
        `metacatalog: unexpected error, request ${report.requestId} ${report.method} ${report.path} (${report.where}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      ),
    backgroundError: (error, where) => io.stderr(`metacatalog: ${where}: ${error instanceof Error ? error.message : String(error)}\n`),
  };
}

/**
 * The command's own messages as JSON lines too (`--log-format json`), so that a collector can parse every
 * line: a line that is not JSON already becomes `{ time, level, msg }` (`info` on stdout, `warn` on stderr).
 */
export function jsonLinesIo(io: CommandIo): CommandIo {
  const wrap = (level: 'info' | 'warn', write: (text: string) => void) => (text: string) => {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const out = lines.map((line) => (line.startsWith('{') ? line : JSON.stringify({ time: new Date().toISOString(), level, msg: line })));
    if (out.length) write(`${out.join('\n')}\n`);
  };
  return { stdout: wrap('info', io.stdout), stderr: wrap('warn', io.stderr) };
}
