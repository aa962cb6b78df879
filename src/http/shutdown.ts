import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { ListenerLifecycle } from './node-listener';

/**
 * The graceful stop of a node:http server: no new connection is accepted; every open change-feed
 * stream ends at once (its client resumes from its last event id, on this server when it comes back or
 * on another instance); answers in flight are finished with `Connection: close`; idle keep-alive
 * connections are closed; whatever is still open after the bound is cut.
 *
 * The stop also waits for the work of every request to settle, not only for its answer: a client that
 * left while its write was running closed its response early, and the owner closing the catalog then
 * would fail that write half-way through its commit ("the adapter is closed" in the log).
 *
 * An idle keep-alive connection is closed once its last answer is `IDLE_GRACE_MS` old: a client that
 * sent its next request just as the stop began (still in the socket's buffer, unseen by the parser) gets
 * that request answered (with `Connection: close`) instead of a reset connection.
 */
const IDLE_GRACE_MS = 1_000;

interface SocketState {
  /** Requests of this connection being answered. */
  active: number;
  /** When its last answer finished (or it connected). */
  lastAt: number;
}

export class GracefulShutdown implements ListenerLifecycle {
  private readonly streams = new Set<() => void>();
  private readonly sockets = new Map<Socket, SocketState>();
  private requests = 0;
  /** Request handlers that have not settled, answered or not. */
  private working = 0;
  private workSettled: Array<() => void> = [];
  private stopping: Promise<void> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: Server,
    private readonly timeoutMs: number,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.set(socket, { active: 0, lastAt: performance.now() });
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Whether the stop has begun (answers then carry `Connection: close`). */
  closing(): boolean {
    return this.stopping !== undefined;
  }

  /** Requests being answered now, streams included. */
  inFlight(): number {
    return this.requests;
  }

  /** Counts a request until its response closes. */
  track(response: ServerResponse): void {
    this.requests++;
    const state = this.sockets.get(response.socket as Socket);
    if (state) state.active++;
    response.once('close', () => {
      this.requests--;
      if (state) {
        state.active--;
        state.lastAt = performance.now();
      }
      if (this.stopping) this.sweepSoon(0);
    });
  }

  /** The work of one request (its handler): the stop waits for it to settle, whether or not its client stayed. */
  hold(work: Promise<unknown>): void {
    this.working++;
    const settled = () => {
      if (--this.working === 0) for (const resolve of this.workSettled.splice(0)) resolve();
    };
    work.then(settled, settled);
  }

  /** A stream to end at the stop (`cancel` ends it); returns its removal, for a stream that ended by itself. */
  openStream(cancel: () => void): () => void {
    if (this.stopping) {
      cancel();
      return () => undefined;
    }
    this.streams.add(cancel);
    return () => this.streams.delete(cancel);
  }

  close(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      // Past the bound, connections are cut and work still running is no longer waited for.
      const timer = setTimeout(() => {
        this.server.closeAllConnections();
        for (const settled of this.workSettled.splice(0)) settled();
      }, this.timeoutMs);
      timer.unref();
      // net's close, not http's: http's closes idle connections at once, and with them requests already
      // sent on them but not yet read. The listening socket closes now; connections close as they go idle.
      NetServer.prototype.close.call(this.server, () => {
        if (this.sweepTimer) clearTimeout(this.sweepTimer);
        this.server.closeIdleConnections(); // also stops node's timeout checks of this server
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        if (this.working === 0) done();
        else this.workSettled.push(done);
      });
      for (const cancel of [...this.streams]) cancel();
      this.streams.clear();
      this.sweep();
    });
    return this.stopping;
  }

  /**
   * Closes every connection without a request that answered its last one over `IDLE_GRACE_MS` ago (a
   * client that is busy sends its next request well within it); checks again when the next one is due.
   */
  private sweep(): void {
    const now = performance.now();
    let nextDue = Infinity;
    for (const [socket, state] of this.sockets) {
      if (state.active > 0) continue;
      const idleFor = now - state.lastAt;
      if (idleFor >= IDLE_GRACE_MS) socket.destroy();
      else nextDue = Math.min(nextDue, IDLE_GRACE_MS - idleFor);
    }
    if (nextDue !== Infinity) this.sweepSoon(nextDue);
  }

  private sweepSoon(ms: number): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.sweep();
    }, ms);
  }
}
