/**
 * The benchmark harness: each figure is printed beside a baseline measured in the same process, with
 * the ratio and the goal, so a slow machine slows both sides alike.
 */
export interface Figure {
  workload: string;
  /** What was measured, e.g. "rows/s" or "ms p99". */
  unit: string;
  value: number;
  baseline?: number;
  baselineName?: string;
  /** `higher` when a bigger value is better (throughput), `lower` for latencies. */
  better: 'higher' | 'lower';
  /** The goal, as text (e.g. "≥ 0.5× baseline"). */
  goal?: string;
  /** Whether the goal is met, when it can be judged. */
  met?: boolean;
}

export function now(): number {
  return performance.now();
}

export async function time<T>(fn: () => Promise<T> | T): Promise<{ ms: number; result: T }> {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

/** Per-iteration latencies in ms. */
export async function latencies(iterations: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await fn(i);
    out.push(performance.now() - start);
  }
  return out;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** value / baseline for throughputs, baseline / value for latencies: ≥ 1 means "as fast as the baseline or faster". */
export function ratio(figure: Figure): number | undefined {
  if (figure.baseline === undefined) return undefined;
  return figure.better === 'higher' ? figure.value / figure.baseline : figure.baseline / figure.value;
}

function fmt(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(3);
}

/** A p50 measured against hand-written SQL in the same run, with the search goal of at most 1.5× it. */
export function againstHandSql(workload: string, p50: number, hand50: number): Figure {
  return {
    workload,
    unit: 'ms',
    value: p50,
    baseline: hand50,
    baselineName: 'hand SQL',
    better: 'lower',
    goal: '≤ 1.5× hand SQL',
    met: p50 <= 1.5 * hand50,
  };
}

export function printTable(title: string, figures: readonly Figure[]): void {
  const rows = figures.map((f) => [
    f.workload,
    `${fmt(f.value)} ${f.unit}`,
    f.baseline === undefined ? '' : `${fmt(f.baseline)} ${f.unit} (${f.baselineName ?? 'baseline'})`,
    fmt(ratio(f)),
    f.goal ?? '',
    f.met === undefined ? '' : f.met ? 'met' : 'NOT MET',
  ]);
  const header = ['workload', 'figure', 'baseline', 'speed vs baseline', 'goal', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(`\n## ${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/**
 * Latencies of two functions run alternately, so that machine noise hits both alike; `warmUp` rounds of
 * each first. A baseline that answers synchronously is timed without an await.
 */
export async function interleaved(
  iterations: number,
  library: () => Promise<unknown>,
  baseline: () => unknown,
  warmUp = 3,
): Promise<{ library: number[]; baseline: number[] }> {
  const runBaseline = async (): Promise<void> => {
    const result = baseline();
    if (result instanceof Promise) await result;
  };
  for (let i = 0; i < warmUp; i++) {
    await library();
    await runBaseline();
  }
  const out = { library: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < iterations; i++) {
    let start = performance.now();
    await library();
    out.library.push(performance.now() - start);
    start = performance.now();
    await runBaseline();
    out.baseline.push(performance.now() - start);
  }
  return out;
}
