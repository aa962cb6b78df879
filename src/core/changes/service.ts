import type { Actor } from '../access/actor';
import type { ChangeEvent, ChangePage, StorageAdapter } from '../../adapter/types';
import { parseChangeId } from '../../adapter/change-signal';
import type { Authorizer } from '../access/authorization';
import { CatalogError, isCatalogError } from '../../errors';

interface ChangeReadOptions {
  /** Cursor: only events committed after the one with this id (default: from the oldest kept). */
  after?: string;
  /** 1..1000, default 100. */
  limit?: number;
  entityTypes?: readonly string[];
  aspects?: readonly string[];
}

interface ChangeFollowOptions {
  after?: string;
  /** Stops the iteration (the iterator then ends; nothing is left waiting). */
  signal?: AbortSignal;
  entityTypes?: readonly string[];
  aspects?: readonly string[];
}

export interface ChangeFeed {
  /** `{ events, next }`: events in commit order; pass `next` as `after` to continue. Needs VIEW_CHANGE_FEED. */
  read(actor: Actor, options?: ChangeReadOptions): Promise<{ events: ChangeEvent[]; next: string }>;
  /**
   * Every event after `after`, then waits for new ones until `signal` aborts or the consumer stops. While
   * the storage is unavailable it waits and reads on from where it was (no event skipped or repeated).
   */
  follow(actor: Actor, options?: ChangeFollowOptions): AsyncIterable<ChangeEvent>;
}

interface Deps {
  adapter: StorageAdapter;
  authorizer: Authorizer;
  principal(actor: unknown): Promise<Actor>;
}

const MAX_LIMIT = 1000;
/** How long one wait lasts before `follow` reads again anyway (a safety net under notifications). */
const WAIT_MS = 1000;

function checkStrings(value: unknown, path: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new CatalogError('INVALID_INPUT', `${path} must be an array of strings`);
  return value as string[];
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function createChangeFeed(deps: Deps): ChangeFeed {
  const { adapter } = deps;

  function requireFeed(): Required<Pick<StorageAdapter, 'readChanges'>> {
    if (!adapter.capabilities.changeFeed || !adapter.readChanges)
      throw new CatalogError('UNSUPPORTED', `the ${adapter.name} adapter keeps no change feed`);
    return adapter as Required<Pick<StorageAdapter, 'readChanges'>>;
  }

  async function authorize(actor: Actor): Promise<void> {
    await deps.authorizer.require(await deps.principal(actor), 'VIEW_CHANGE_FEED');
  }

  /** Reads one page and checks the cursor against what retention kept. */
  async function page(options: ChangeReadOptions): Promise<{ events: ChangeEvent[]; next: string }> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new CatalogError('INVALID_INPUT', `limit must be an integer from 1 to ${MAX_LIMIT}, got ${String(limit)}`);
    const entityTypes = checkStrings(options.entityTypes, 'entityTypes');
    const aspects = checkStrings(options.aspects, 'aspects');
    let after: bigint | undefined;
    if (options.after !== undefined && options.after !== '') {
      after = typeof options.after === 'string' ? parseChangeId(options.after) : undefined;
      if (after === undefined)
        throw new CatalogError(
          'INVALID_INPUT',
          `after: malformed change cursor ${JSON.stringify(options.after)} (a cursor is the id of an event, e.g. "42")`,
        );
    }
    const result: ChangePage = await requireFeed().readChanges({ after: after?.toString(), limit, entityTypes, aspects });
    if (after !== undefined) {
      const oldest =
        result.oldestId !== undefined ? BigInt(result.oldestId) : result.lastId !== undefined ? BigInt(result.lastId) + 1n : undefined;
      if (oldest !== undefined && after < oldest - 1n) {
        throw new CatalogError(
          'INVALID_INPUT',
          `after: change cursor ${after} is older than what is kept; the oldest cursor still available is "${oldest - 1n}" (events before it were removed by retention)`,
        );
      }
    }
    const last = result.events.at(-1);
    const scanned = result.scannedId !== undefined ? BigInt(result.scannedId) : undefined;
    const next =
      scanned !== undefined && (after === undefined || scanned > after) ? scanned.toString() : last ? last.id : (after?.toString() ?? '0');
    return { events: result.events, next };
  }

  return {
    async read(actor, options = {}) {
      await authorize(actor);
      return page(options);
    },
    follow(actor, options = {}) {
      return {
        [Symbol.asyncIterator]: async function* () {
          await authorize(actor);
          const { signal } = options;
          let after = options.after;
          while (!signal?.aborted) {
            let read: { events: ChangeEvent[]; next: string };
            try {
              read = await page({ after, limit: 500, entityTypes: options.entityTypes, aspects: options.aspects });
            } catch (error) {
              // The storage away for a while (a database restarting): the follower waits and reads on from
              // where it was, rather than ending.
              if (!isCatalogError(error) || error.code !== 'UNAVAILABLE') throw error;
              await pause(WAIT_MS, signal);
              continue;
            }
            const { events, next } = read;
            after = next;
            for (const event of events) {
              if (signal?.aborted) return;
              yield event;
            }
            if (events.length === 500) continue;
            if (adapter.waitForChanges) await adapter.waitForChanges({ afterId: after, timeoutMs: WAIT_MS, signal });
            else await new Promise<void>((resolve) => setTimeout(resolve, 100));
          }
        },
      };
    },
  };
}
