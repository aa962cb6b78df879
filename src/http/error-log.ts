import { errorKind, limitRepeats, type RepeatLimitOptions } from '../core/logging/index';
import { isCatalogError } from '../errors';
import type { HttpErrorReport } from './types';

/**
 * The HTTP layer's error log (the default `onError`, and `metacatalog serve`'s): an unexpected error
 * with its stack, the storage being unavailable in one line without one; the same failure repeated
 * (a full disk, a database that went away, hit by every request) is written once per interval, then
 * counted.
 */
export function repeatLimitedErrorLog(
  write: (line: string) => void,
  options: RepeatLimitOptions & { prefix?: string } = {},
): (error: unknown, report: HttpErrorReport) => void {
  const prefix = options.prefix ?? 'metacatalog';
  const log = limitRepeats(write, options);
  return (error, report) => {
    const request = `request ${report.requestId} ${report.method} ${report.path}`;
    if (isCatalogError(error) && error.code === 'UNAVAILABLE') {
      log(`UNAVAILABLE ${error.message}`, `${prefix}: ${error.message} (first: ${request})`);
      return;
    }
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    log(`${report.where} ${errorKind(error)}`, `${prefix}: unexpected error, ${request} (${report.where}): ${text}`);
  };
}
