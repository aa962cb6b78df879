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
export interface RegistrableMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<MetricSnapshot>;
  reset(): void;
}

/** Children by label values; bounded (label values are bounded sets; past 2,000 the map starts over). */
class Series<C> {
  readonly children = new Map<string, { labels: Record<string, string>; child: C }>();

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: () => C,
  ) {}

  get(values: readonly string[]): C {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let entry = this.children.get(key);
    if (!entry) {
      if (this.children.size >= 2000) this.children.clear();
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] ?? ''));
      entry = { labels, child: this.make() };
      this.children.set(key, entry);
    }
    return entry.child;
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
  child(...values: string[]): CounterChild {
    return this.series.get(values);
  }

  async get(): Promise<MetricSnapshot> {
    const values = [...this.series.children.values()].map(({ labels, child }) => ({ value: child.value, labels }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.children.clear();
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

  child(...values: string[]): HistogramChild {
    return this.series.get(values);
  }

  async get(): Promise<MetricSnapshot> {
    const values: SeriesValue[] = [];
    for (const { labels, child } of this.series.children.values()) {
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
    this.series.children.clear();
  }
}
