import type { Server, ServerResponse } from 'node:http';
import type { ListenerLifecycle } from './node-listener';

/**
 * The graceful stop of a node:http server: no new connection is accepted; every open change-feed
 * stream ends at once (its client resumes from its last event id, on this server when it comes back or
 * on another instance); answers in flight are finished with `Connection: close`; idle keep-alive
 * connections are closed; whatever is still open after the bound is cut.
 */
export class GracefulShutdown implements ListenerLifecycle {
  private readonly streams = new Set<() => void>();
  private requests = 0;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly server: Server,
    private readonly timeoutMs: number,
  ) {}

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
    response.once('close', () => {
      this.requests--;
      if (this.stopping && this.requests === 0) this.server.closeIdleConnections();
    });
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
      const timer = setTimeout(() => this.server.closeAllConnections(), this.timeoutMs);
      timer.unref();
      this.server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      for (const cancel of [...this.streams]) cancel();
      this.streams.clear();
      this.server.closeIdleConnections();
    });
    return this.stopping;
  }
}
