import type { WriteBatch } from '../../src/adapter/types';
import { CatalogError } from '../../src/errors';

interface Pending {
  batch: WriteBatch;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** At most this many entities in one group: a bulk batch goes alone, single writes gather. */
const MAX_GROUP_ENTITIES = 2_000;
/** At most this many batches in one group. */
const MAX_GROUP_BATCHES = 256;

/**
 * Group commit: while one transaction of this adapter commits, the batches that arrive wait, then go
 * together in the next transaction, and each is acknowledged when that transaction has committed (so
 * a write is never acknowledged before the sync that covers it). Concurrent single writes then share
 * one `COMMIT`, and one turn of the change feed's counter lock, which every commit with events holds
 * until its `COMMIT` is durable: without grouping, writers would take turns at one sync each.
 *
 * A group takes the waiting batches in arrival order while their entities are distinct from the
 * group's (two writes of one entity are never merged: the second must see the first) and the group
 * stays small. When a group fails the way a batch can fail on its own (a CONFLICT, or an error the
 * server reported, which rolled the transaction back), each of its batches is committed again alone,
 * so each gets its own answer. An error without a server's answer (the connection broke, perhaps
 * during `COMMIT`) fails every batch of the group, as it would have failed each alone.
 */
export class CommitGroups {
  private readonly waiting: Pending[] = [];
  private busy = false;

  constructor(private readonly write: (batches: readonly WriteBatch[]) => Promise<void>) {}

  commit(batch: WriteBatch): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ batch, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.waiting.length > 0) await this.run(this.nextGroup());
    } finally {
      this.busy = false;
    }
  }

  /** The longest prefix of the waiting batches whose entities are distinct, within the bounds. */
  private nextGroup(): Pending[] {
    const urns = new Set<string>();
    let entities = 0;
    let taken = 0;
    for (const pending of this.waiting) {
      const writes = pending.batch.entities ?? [];
      if (taken > 0 && (taken === MAX_GROUP_BATCHES || entities + writes.length > MAX_GROUP_ENTITIES)) break;
      if (writes.some((w) => urns.has(w.urn))) break;
      for (const w of writes) urns.add(w.urn);
      entities += writes.length;
      taken++;
    }
    return this.waiting.splice(0, taken);
  }

  private async run(group: Pending[]): Promise<void> {
    try {
      await this.write(group.map((p) => p.batch));
      for (const p of group) p.resolve();
      return;
    } catch (error) {
      if (group.length === 1 || !rolledBack(error)) {
        for (const p of group) p.reject(error);
        return;
      }
    }
    for (const p of group) {
      try {
        await this.write([p.batch]);
        p.resolve();
      } catch (error) {
        p.reject(error);
      }
    }
  }
}

/**
 * Whether the transaction certainly did not commit because of what a batch holds: the adapter's own
 * refusal (a version moved, a job not held), or an error the server answered with (a server never
 * answers a `COMMIT` that succeeded with an error).
 */
function rolledBack(error: unknown): boolean {
  if (error instanceof CatalogError) return error.code === 'CONFLICT' || error.code === 'INVALID_INPUT';
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
