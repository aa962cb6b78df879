/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line must
 * be a HELP or TYPE comment or a sample of a declared family; label values are unescaped; histograms
 * must have cumulative buckets ending in `+Inf` equal to their `_count`. Throws naming the bad line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample with this name whose labels include `labels` (0 when none does). */
  value(name: string, labels?: Record<string, string>): number;
  /** The sum over every sample with this name whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: string): number {
  // As Prometheus reads them (Go's ParseFloat): NaN and Inf in any letter case.
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a number "${text}" in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`label without "=" in: ${line}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name "${name}" in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`label value not quoted in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        value +=
          next === 'n'
            ? '\n'
            : next === '\\'
              ? '\\'
              : next === '"'
                ? '"'
                : (() => {
                    throw new Error(`bad escape in: ${line}`);
                  })();
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`expected "," between labels in: ${line}`);
  }
  return labels;
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
    if (base && ['histogram', 'summary'].includes(types.get(base) ?? '')) return base;
  }
  return undefined;
}

const includes = (labels: Record<string, string>, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([k, v]) => labels[k] === v);

export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!match) continue; // a plain comment
      const [, kind, name, rest] = match as unknown as [string, string, string, string | undefined];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (kind === 'TYPE') {
        if (!rest || !TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (types.has(name)) throw new Error(`TYPE twice for ${name}`);
        types.set(name, rest);
      }
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
    if (!familyOf(name, types)) throw new Error(`sample of an undeclared family: ${line}`);
    samples.push({ name, labels: labelText ? parseLabels(labelText, line) : {}, value: parseValue(valueText, line) });
  }
  // Histograms: cumulative buckets, +Inf equals _count, per label set.
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${family}_bucket without le`);
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) {
        if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family} buckets are not cumulative for ${key}`);
      }
      const last = buckets[buckets.length - 1]!;
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === key);
      if (last.labels.le !== '+Inf' || !count || count.value !== last.value)
        throw new Error(`${family}: +Inf bucket and _count differ for ${key}`);
    }
  }
  const matching = (name: string, labels: Record<string, string>) => samples.filter((s) => s.name === name && includes(s.labels, labels));
  return {
    types,
    samples,
    value(name, labels = {}) {
      const found = matching(name, labels);
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value ?? 0;
    },
    sum(name, labels = {}) {
      return matching(name, labels).reduce((total, s) => total + s.value, 0);
    },
  };
}
