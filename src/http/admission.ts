import { availableParallelism } from 'node:os';
import { CatalogError } from '../errors';

/**
 * Admission control: how many requests of each class run at once, how many wait, and how long. A request
 * that would wait longer than `maxQueueMs` (by the queue ahead of it and the recent service time), or
 * finds the queue full, is refused at once with 503 UNAVAILABLE and `Retry-After`. A request admitted to the
 * queue is served: one still waiting after `maxQueueMs` (the estimate was wrong) makes newcomers be refused at
 * once until the queue catches up, and only past ten times the bound is it refused itself.
 * docs/operations.md ("Serving under pressure").
 */
export interface AdmissionOptions {
  /**
   * Units of work running at once in each class (reads, writes, GraphQL); a GraphQL request weighs 1 to 4
   * units by its cost (a search with a total or facets weighs more). 0 turns admission control off.
   * Default: 4 per core (8 on two cores).
   */
  maxInFlight?: number;
  /** Requests waiting in each class beyond those running. Default 32 × `maxInFlight`. */
  maxQueued?: number;
  /** Longest wait a request is admitted to, in ms (judged at its arrival). Default 500. */
  maxQueueMs?: number;
}

export type RequestClass = 'read' | 'write' | 'graphql';

export type ShedReason = 'queue-full' | 'wait' | 'loop-lag';

/**
 * The event loop's recent lag: a timer every 20 ms notes how late it fires; the figure decays by half
 * each tick. One timer per process (unref'd: it never keeps a process alive), started by the first
 * admission control.
 */
const LOOP_TICK_MS = 20;
let loopLag = 0;
let lastTick = 0;
let loopTimer: NodeJS.Timeout | undefined;
function startLoopMonitor(): void {
  if (loopTimer) return;
  lastTick = performance.now();
  loopTimer = setInterval(() => {
    const now = performance.now();
    loopLag = Math.max(now - lastTick - LOOP_TICK_MS, loopLag / 2);
    lastTick = now;
  }, LOOP_TICK_MS);
  loopTimer.unref();
}
/** The lag seen by the last ticks, or the lateness of the tick due now when that is more. */
function loopLagMs(): number {
  return loopTimer ? Math.max(loopLag, performance.now() - lastTick - LOOP_TICK_MS) : 0;
}

/** What `admit` hands back: call it once when the request's work is done (its answer is ready). */
export type Release = () => void;

const MAX_UNITS = 4;
/** A waiter still queued after this many times `maxQueueMs` is refused (a slot held far longer than ever seen). */
const OVERDUE_LIMIT = 10;
const RETRY_AFTER_SECONDS = 1;
/** Expected waits that are no estimate: waiters are overdue, or no request was timed yet and a round of work waits. */
const OVERDUE = Infinity;
const UNTIMED = Number.MAX_VALUE;

/** What to say of a wait that is not an estimate; undefined for an estimate. */
function waitReason(expectedMs: number): string | undefined {
  if (expectedMs === OVERDUE) return 'requests ahead waited past the bound';
  if (expectedMs === UNTIMED) return 'a round of work waits already and no request has been timed yet';
  return undefined;
}

/** The defaults of `AdmissionOptions`, from this machine's cores. */
function defaultAdmission(cores = availableParallelism()): Required<AdmissionOptions> {
  const maxInFlight = 4 * Math.max(1, cores);
  return { maxInFlight, maxQueued: 32 * maxInFlight, maxQueueMs: 500 };
}

/** INVALID_INPUT naming each bad admission option. */
export function checkAdmissionOptions(options: AdmissionOptions | false | undefined): void {
  if (options === undefined || options === false) return;
  if (typeof options !== 'object' || options === null) throw new CatalogError('INVALID_INPUT', 'admission must be an object or false');
  for (const name of ['maxInFlight', 'maxQueued', 'maxQueueMs'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new CatalogError('INVALID_INPUT', `admission.${name} must be an integer of 0 or more, got ${String(value)}`);
    }
  }
}

/** The refusal of a request that would wait too long: 503 with `Retry-After: 1`. */
class OverloadedError extends CatalogError {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor(requestClass: RequestClass, why: string) {
    super('UNAVAILABLE', `the service is overloaded (${requestClass} requests: ${why}); try again in ${RETRY_AFTER_SECONDS} s`, {
      reason: 'overloaded',
    });
  }
}

/**
 * An OverloadedError without a stack trace: under overload thousands are made each second, and
 * capturing the stack was a twentieth of the process's time (a CPU profile of 1,000 connections of
 * searches). The refusal is an answer, never logged, so the stack has no reader.
 */
function overloaded(requestClass: RequestClass, why: string): OverloadedError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new OverloadedError(requestClass, why);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

interface Waiter {
  units: number;
  grant: () => void;
  timer: NodeJS.Timeout;
}

/** One class's gate: units running, a FIFO queue of waiters, and the recent time a unit of work takes. */
class Gate {
  private running = 0;
  private queuedUnits = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;
  /**
   * Smoothed milliseconds a request keeps its units (0 until one is timed). Per request, not per unit: a
   * request of k units holds k units for that long, so the work ahead drains at the units in use per
   * `slotMs` (expectedWaitMs). (Divided by k, the estimate of a queue of 3-unit searches was a third
   * of their wait: under 1,000 connections, requests admitted on an estimate of 500 ms waited 1.5-1.9 s.)
   */
  private slotMs = 0;
  /** When a waiter last passed its `maxQueueMs` still queued (the estimate of its wait was wrong). */
  private lastOverdueAt = -Infinity;

  constructor(
    readonly name: RequestClass,
    private readonly maxInFlight: number,
    private readonly maxQueued: number,
    private readonly maxQueueMs: number,
    private readonly onShed: (requestClass: RequestClass, why: ShedReason) => void,
  ) {}

  inFlight(): number {
    return this.running;
  }

  /** Whether requests wait, or every unit is taken. */
  saturated(): boolean {
    return this.queued() > 0 || this.running >= this.maxInFlight;
  }

  queued(): number {
    return this.queue.length - this.head;
  }

  /**
   * The check at a request's arrival, before any work is spent on it (authentication, its body): throws
   * when a request of one unit would be refused now.
   */
  precheck(): void {
    if (this.queued() === 0 && this.running < this.maxInFlight) return; // it would run at once
    if (this.queued() >= this.maxQueued) {
      this.onShed(this.name, 'queue-full');
      throw overloaded(this.name, `${this.queued()} waiting already`);
    }
    const expectedMs = this.expectedWaitMs(1);
    if (expectedMs > this.maxQueueMs) {
      this.onShed(this.name, 'wait');
      throw overloaded(this.name, waitReason(expectedMs) ?? `the wait would be about ${Math.round(expectedMs)} ms`);
    }
  }

  /**
   * The wait ahead of `units` more: the units queued and running drain at the units requests of this size
   * can use at once (`maxInFlight` rounded down to a multiple of `units`) per `slotMs`. While waiters are
   * overdue (one passed its bound within the last `maxQueueMs`), a newcomer behind them would be too:
   * the whole bound (OVERDUE). Measured under 1,000 connections: the service time alone let requests in
   * that then waited past their 500 ms. Before any request was timed there is no estimate: one round of
   * work (`maxInFlight` units) may wait, its time about to be known, and no more (UNTIMED). Admitted on an
   * estimate of 0, the first second of a storm queued 240 searches that waited up to 2 s.
   */
  private expectedWaitMs(units: number): number {
    const ahead = this.queuedUnits + this.running + units - this.maxInFlight;
    if (ahead <= 0) return 0;
    if (performance.now() - this.lastOverdueAt < this.maxQueueMs) return OVERDUE;
    if (this.slotMs === 0) return ahead <= this.maxInFlight ? 0 : UNTIMED;
    const usable = Math.floor(this.maxInFlight / units) * units;
    return this.slotMs * (ahead / usable);
  }

  /** `waitedMs`: how long the request was already kept before it came here (it counts against the bound). */
  admit(requested: number, waitedMs = 0): Release | Promise<Release> {
    const units = Math.min(Math.max(1, requested), this.maxInFlight);
    if (this.queued() === 0 && this.running + units <= this.maxInFlight) {
      // Its work starts on a later turn of the event loop too. Started here, a request whose work needs
      // no I/O (SQLite is synchronous) ran to its answer before the next request of the same turn was
      // even read: every one found the gates empty, none was ever refused, and one turn of the loop
      // served 500 searches back to back (3.3 s; seen once token checks stopped waiting on WebCrypto).
      // Deferred, every request read in a turn is admitted, queued or refused before any of them runs.
      const release = this.start(units);
      return new Promise<Release>((resolve) => setImmediate(() => resolve(release)));
    }
    if (this.queued() >= this.maxQueued) {
      this.onShed(this.name, 'queue-full');
      throw overloaded(this.name, `${this.queued()} waiting already`);
    }
    const expectedMs = this.expectedWaitMs(units);
    // A request kept before it came here (held after a refusal on its connection) has that much less to wait.
    const allowedMs = this.maxQueueMs - waitedMs;
    // Held its whole bound already: it runs on a free slot or not at all.
    if (expectedMs > allowedMs || allowedMs <= 0) {
      this.onShed(this.name, 'wait');
      throw overloaded(
        this.name,
        waitReason(expectedMs) ??
          (waitedMs > 0
            ? `it was held ${Math.round(waitedMs)} ms already and would wait about ${Math.round(expectedMs)} ms more`
            : `the wait would be about ${Math.round(expectedMs)} ms`),
      );
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        units,
        // Started on a later turn of the event loop, not in the chain of promise callbacks of the
        // release that freed the slot: so granted, a queue of waiting searches ran one after another
        // without the loop turning (no socket read, no connection accepted) for as long as it lasted.
        // The slot is taken now, so nothing overtakes it.
        grant: () => {
          const release = this.start(units);
          setImmediate(() => resolve(release));
        },
        // Past its bound it is still served (refused now, it would have waited for nothing), but newcomers
        // are refused at once until the queue catches up; past OVERDUE_LIMIT bounds it is refused.
        timer: setTimeout(
          () => {
            this.lastOverdueAt = performance.now();
            waiter.timer = setTimeout(
              () => {
                const at = this.queue.indexOf(waiter, this.head);
                if (at >= 0) this.queue.splice(at, 1);
                this.queuedUnits -= units;
                this.lastOverdueAt = performance.now();
                this.onShed(this.name, 'wait');
                reject(overloaded(this.name, `waited ${OVERDUE_LIMIT * this.maxQueueMs} ms`));
              },
              (OVERDUE_LIMIT - 1) * this.maxQueueMs,
            );
          },
          Math.max(0, allowedMs),
        ),
      };
      this.queue.push(waiter);
      this.queuedUnits += units;
    });
  }

  private start(units: number): Release {
    this.running += units;
    const startedAt = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= units;
      const slot = performance.now() - startedAt;
      this.slotMs = this.slotMs === 0 ? slot : this.slotMs * 0.9 + slot * 0.1;
      this.drain();
    };
  }

  private drain(): void {
    while (this.head < this.queue.length) {
      const next = this.queue[this.head]!;
      if (this.running + next.units > this.maxInFlight) break;
      this.head++;
      this.queuedUnits -= next.units;
      clearTimeout(next.timer);
      next.grant();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** The gates of one request handler. */
export class Admission {
  private readonly gates: Record<RequestClass, Gate>;
  private readonly maxLagMs: number;
  /** Smoothed weight of recent GraphQL requests. */
  private graphqlUnits = 2;

  constructor(
    options: AdmissionOptions,
    private readonly onShed: (requestClass: RequestClass, why: ShedReason) => void,
  ) {
    const defaults = defaultAdmission();
    const maxInFlight = options.maxInFlight ?? defaults.maxInFlight;
    const maxQueued = options.maxQueued ?? 32 * maxInFlight;
    const maxQueueMs = options.maxQueueMs ?? defaults.maxQueueMs;
    const gate = (name: RequestClass) => new Gate(name, maxInFlight, maxQueued, maxQueueMs, onShed);
    // The whole wait bound, not less: a host starved of CPU by other processes lags too, and a burst of
    // ordinary requests on a busy machine must not be shed for it.
    this.maxLagMs = Math.max(20, maxQueueMs);
    startLoopMonitor();
    this.gates = { read: gate('read'), write: gate('write'), graphql: gate('graphql') };
  }

  /**
   * At a request's arrival: throws OverloadedError when its class would refuse it anyway, or when a
   * gate is saturated and the event loop itself lags by more than `maxQueueMs` (requests then
   * wait before they can even be read: for CPU-bound work the loop is the queue).
   */
  precheck(requestClass: RequestClass): void {
    const lag = loopLagMs();
    // Only while requests contend for the gates: a lone slow call (a big import) sheds nothing.
    if (lag > this.maxLagMs && Object.values(this.gates).some((g) => g.saturated())) {
      this.onShed(requestClass, 'loop-lag');
      throw overloaded(requestClass, `the server's event loop lags ${Math.round(lag)} ms`);
    }
    this.gates[requestClass].precheck();
  }

  /** The units recent requests of the class weighed (GraphQL: smoothed over the last few dozen; else 1). */
  typicalUnits(requestClass: RequestClass): number {
    return requestClass === 'graphql' ? Math.max(1, Math.round(this.graphqlUnits)) : 1;
  }

  /** What a request of the class turned out to weigh, once its body was read. */
  noteUnits(requestClass: RequestClass, units: number): void {
    if (requestClass === 'graphql') this.graphqlUnits = this.graphqlUnits * 0.9 + units * 0.1;
  }

  /** Resolves (or returns at once) with the release of the slot; throws OverloadedError when refused. */
  admit(requestClass: RequestClass, units = 1, waitedMs = 0): Release | Promise<Release> {
    return this.gates[requestClass].admit(units, waitedMs);
  }

  /** Requests running and waiting now, by class. */
  state(): Record<RequestClass, { inFlight: number; queued: number }> {
    const of = (g: Gate) => ({ inFlight: g.inFlight(), queued: g.queued() });
    return { read: of(this.gates.read), write: of(this.gates.write), graphql: of(this.gates.graphql) };
  }
}

/** Makes an admission control from the option (undefined: the defaults; false or `maxInFlight: 0`: none). */
export function admissionOf(
  options: AdmissionOptions | false | undefined,
  onShed: (requestClass: RequestClass, why: ShedReason) => void,
): Admission | undefined {
  if (options === false || options?.maxInFlight === 0) return undefined;
  return new Admission(options ?? {}, onShed);
}

const SEARCH_FIELD = /\b(search\w*|scroll\w*|aggregate\w*|browse\w*)\s*\(/g;
const COUNTING = /\b(total|facets|aggregations|count)\b/;

/**
 * The weight of a GraphQL request, from its text without parsing it: 1, plus 1 for each search-like
 * field (search, scroll, aggregate, browse), plus 1 when it asks for a total or facets; at most 4.
 */
export function graphqlUnits(body: unknown): number {
  const query = typeof body === 'object' && body !== null ? (body as { query?: unknown }).query : undefined;
  if (typeof query !== 'string') return 1;
  const searches = Math.min(2, query.match(SEARCH_FIELD)?.length ?? 0);
  const counting = searches > 0 && COUNTING.test(query) ? 1 : 0;
  return Math.min(MAX_UNITS, 1 + searches + counting);
}
