/**
 * A tiny per-request batch loader: every `load` made while a request resolves one level of its
 * result is collected and answered by one call of `batch`, and each key is loaded once per request.
 * The batch runs on `setImmediate`, after all promise callbacks and ticks queued so far, so that the
 * fields of every item of a list have asked for their keys before it goes.
 */
export class BatchLoader<K, V> {
  private readonly cache = new Map<K, Promise<V>>();
  private pending: Array<{ key: K; resolve: (value: V) => void; reject: (error: unknown) => void }> = [];

  /** `batch` answers the distinct keys in order: a value, or an Error for that key alone. */
  constructor(private readonly batch: (keys: readonly K[]) => Promise<ReadonlyArray<V | Error>>) {}

  load(key: K): Promise<V> {
    const cached = this.cache.get(key);
    if (cached) return cached;
    const promise = new Promise<V>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.dispatch());
      this.pending.push({ key, resolve, reject });
    });
    this.cache.set(key, promise);
    return promise;
  }

  loadMany(keys: readonly K[]): Promise<V[]> {
    return Promise.all(keys.map((key) => this.load(key)));
  }

  /** Forgets every loaded key (a mutation changed what they would load). */
  clear(): void {
    this.cache.clear();
  }

  private dispatch(): void {
    const pending = this.pending;
    this.pending = [];
    const keys = pending.map((p) => p.key);
    let answered: Promise<ReadonlyArray<V | Error>>;
    try {
      answered = this.batch(keys);
    } catch (error) {
      answered = Promise.reject(error);
    }
    answered.then(
      (values) => {
        pending.forEach((p, i) => {
          const value = values[i];
          if (value instanceof Error) p.reject(value);
          else if (i >= values.length) p.reject(new Error(`batch answered ${values.length} of ${keys.length} keys`));
          else p.resolve(value as V);
        });
      },
      (error: unknown) => {
        for (const p of pending) p.reject(error);
      },
    );
  }
}
