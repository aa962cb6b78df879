/**
 * Counters and histograms for the hot path: recording is a few additions on plain numbers (prom-client's
 * own metrics hash their labels on every call, which cost several percent of a single write), and a
 * prom-client registry renders them at scrape time through the metric shape it reads (`get()`), so the
 * text format stays the library's.
 */

interface SeriesValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: SeriesValue[];
  aggregator: 'sum';
}

/** What a prom-client registry needs of a metric to render and reset it. */
interface RegistrableMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<MetricSnapshot>;
  reset(): void;
}

type LabelKey = string | number;
type Level = Map<LabelKey, unknown>;

/**
 * Children by label values, up to four labels, in nested maps keyed by the values themselves (the
 * callers pass the same few strings again and again: no key is built per call). Bounded: label values
 * are bounded sets, and past 2,000 children the series starts over.
 */
class Series<C> {
  readonly entries: Array<{ labels: Record<string, string>; child: C }> = [];
  private root: Level = new Map();

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: () => C,
  ) {}

  get(a: LabelKey, b: LabelKey = '', c: LabelKey = '', d: LabelKey = ''): C {
    const depth = this.labelNames.length;
    let level = this.root;
    for (let i = 0; i < depth - 1; i++) {
      const key = i === 0 ? a : i === 1 ? b : c;
      let next = level.get(key) as Level | undefined;
      if (!next) {
        next = new Map();
        level.set(key, next);
      }
      level = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : d;
    const found = level.get(last) as C | undefined;
    return found === undefined ? this.add(level, last, [a, b, c, d]) : found;
  }

  private add(level: Level, key: LabelKey, values: readonly LabelKey[]): C {
    const labels: Record<string, string> = {};
    this.labelNames.forEach((name, i) => (labels[name] = String(values[i])));
    const child = this.make();
    if (this.entries.length >= 2000) {
      // Start over; the path to this child is gone with the old maps.
      this.clear();
      return this.addFromRoot(values, labels, child);
    }
    level.set(key, child);
    this.entries.push({ labels, child });
    return child;
  }

  private addFromRoot(values: readonly LabelKey[], labels: Record<string, string>, child: C): C {
    let level = this.root;
    for (let i = 0; i < this.labelNames.length - 1; i++) {
      let next = level.get(values[i]!) as Level | undefined;
      if (!next) {
        next = new Map();
        level.set(values[i]!, next);
      }
      level = next;
    }
    level.set(values[this.labelNames.length - 1]!, child);
    this.entries.push({ labels, child });
    return child;
  }

  clear(): void {
    this.root = new Map();
    this.entries.length = 0;
  }
}

export interface CounterChild {
  value: number;
}

export class FastCounter implements RegistrableMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series: Series<CounterChild>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
  ) {
    this.series = new Series(labelNames, () => ({ value: 0 }));
  }

  /** The child of these label values (in `labelNames` order): `child.value += n` counts. */
  child(a: LabelKey, b?: LabelKey, c?: LabelKey, d?: LabelKey): CounterChild {
    return this.series.get(a, b, c, d);
  }

  async get(): Promise<MetricSnapshot> {
    const values = this.series.entries.map(({ labels, child }) => ({ value: child.value, labels }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}

export class HistogramChild {
  /** Observations per bucket, not cumulative (the last slot is above every bound). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

export class FastHistogram implements RegistrableMetric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series<HistogramChild>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    this.series = new Series(labelNames, () => new HistogramChild(bounds));
  }

  child(a: LabelKey, b?: LabelKey, c?: LabelKey): HistogramChild {
    return this.series.get(a, b, c);
  }

  async get(): Promise<MetricSnapshot> {
    const values: SeriesValue[] = [];
    for (const { labels, child } of this.series.entries) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += child.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: child.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: child.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: child.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
