/** How a log line that repeats is limited: by default one line, then one count, per 10 s and kind. */
export interface RepeatLimitOptions {
  /** The interval in which a kind of line is written once (default 10 000 ms). */
  intervalMs?: number;
  /** Kinds of line remembered at once (default 200): past that, the oldest kind's count is written and forgotten. */
  maxKinds?: number;
  clock?: () => number;
}

/** Writes a line; `kind` says which lines count as the same (e.g. an error's code and message, without ids). */
export interface RepeatLimitedLog {
  (kind: string, line: string): void;
  /** Writes the counts held back so far (at a stop, so that nothing counted is lost). */
  flush(): void;
}

interface Kind {
  /** The line that was written for this kind, repeated in the count's line. */
  line: string;
  since: number;
  held: number;
}

/**
 * A log that writes the first line of each kind at once and, instead of the repeats within the interval,
 * one line with their count when the interval ends: a failing disk or database, hit by every request,
 * makes one line per interval, not one (with a stack trace) per request.
 */
export function limitRepeats(write: (line: string) => void, options: RepeatLimitOptions = {}): RepeatLimitedLog {
  const intervalMs = options.intervalMs ?? 10_000;
  const maxKinds = options.maxKinds ?? 200;
  const clock = options.clock ?? Date.now;
  const kinds = new Map<string, Kind>();
  let timer: NodeJS.Timeout | undefined;

  const writeCount = (kind: Kind, now: number): void => {
    if (kind.held === 0) return;
    const seconds = Math.max(1, Math.round((now - kind.since) / 1000));
    const first = kind.line.split('\n', 1)[0]!;
    write(`${first} (and ${kind.held} more time${kind.held === 1 ? '' : 's'} in the last ${seconds} s)\n`);
    kind.held = 0;
  };
  const sweep = (): void => {
    const now = clock();
    for (const [key, kind] of kinds) {
      if (now - kind.since < intervalMs) continue;
      writeCount(kind, now);
      kinds.delete(key);
    }
    if (kinds.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const log = ((key: string, line: string): void => {
    const now = clock();
    const known = kinds.get(key);
    if (known && now - known.since < intervalMs) {
      known.held++;
      return;
    }
    if (known) {
      writeCount(known, now);
      kinds.delete(key);
    }
    write(line.endsWith('\n') ? line : `${line}\n`);
    kinds.set(key, { line, since: now, held: 0 });
    if (kinds.size > maxKinds) {
      const [oldestKey, oldest] = kinds.entries().next().value as [string, Kind];
      writeCount(oldest, now);
      kinds.delete(oldestKey);
    }
    if (!timer) {
      timer = setInterval(sweep, Math.max(10, Math.floor(intervalMs / 2)));
      timer.unref();
    }
  }) as RepeatLimitedLog;
  log.flush = () => {
    const now = clock();
    for (const kind of kinds.values()) writeCount(kind, now);
  };
  return log;
}

/** What makes two errors the same kind in a log: their code and message, not where or when they happened. */
export function errorKind(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${typeof code === 'string' ? code : error.name}: ${error.message}`;
  }
  return String(error);
}
