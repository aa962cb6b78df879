/**
 * When a verification may try to record its token's `lastUsedAt`: at most once per `resolutionMs` per
 * token in this process (however many requests verify it at once), and not at all for `backoffMs` after
 * the storage failed to take such a write (a full disk must not turn every read into a failed write).
 * Bounded: the attempts of at most `maxTokens` tokens are kept, the oldest dropped first.
 */
export class LastUseThrottle {
  private readonly attempts = new Map<string, number>();
  private pausedUntil = -Infinity;

  constructor(
    private readonly resolutionMs: number,
    private readonly backoffMs = 30_000,
    private readonly maxTokens = 10_000,
  ) {}

  /** Whether to try now; a yes counts as the token's attempt. */
  shouldTry(tokenId: string, now: number): boolean {
    if (now < this.pausedUntil) return false;
    const last = this.attempts.get(tokenId);
    if (last !== undefined && now >= last && now - last < this.resolutionMs) return false;
    this.attempts.delete(tokenId);
    if (this.attempts.size >= this.maxTokens) {
      const oldest = this.attempts.keys().next().value;
      if (oldest !== undefined) this.attempts.delete(oldest);
    }
    this.attempts.set(tokenId, now);
    return true;
  }

  /** The storage refused the write: no token tries again for `backoffMs`. */
  failed(now: number): void {
    this.pausedUntil = now + this.backoffMs;
  }
}
