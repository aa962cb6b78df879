import type { Catalog } from '../catalog';
import { actorUrn, requireActor, type Actor } from '../core/access';
import type { EntityView } from '../core/entities';
import { invalidInput } from '../errors';
import { urnProblem } from '../core/urn';
import { BatchLoader } from './batch-loader';

/** What the host puts in the GraphQL context, once per request: the authenticated actor. */
export interface CatalogGraphQLContext {
  /** The actor URN the host authenticated (e.g. from a verified bearer token); absent means UNAUTHENTICATED. */
  actorUrn?: string | null;
  /**
   * The scopes of the access token the request was made with (`VerifiedAccessToken.privileges`), when it is
   * scoped: the request may use only those of them the actor holds. Absent: the actor's privileges.
   */
  scopes?: readonly string[] | null;
  /** Epoch ms (`Date.now()` clock) after which no further field starts: it fails with TIMEOUT. */
  deadline?: number;
}

/** What one request keeps between its resolvers. */
export interface RequestState {
  actor: Actor;
  /** Entities by URN with all their aspects, read in batches; null when absent. */
  entities: BatchLoader<string, EntityView | null>;
}

/** Entities per storage read: keeps each read's URN list within what every adapter handles well. */
const READ_CHUNK = 500;

/** The actor of the request (with its token's scopes, when scoped); UNAUTHENTICATED when the host set none (or not a URN). */
function actorOf(context: unknown): Actor {
  const given = typeof context === 'object' && context !== null ? (context as CatalogGraphQLContext) : undefined;
  const urn = requireActor(given?.actorUrn);
  return Array.isArray(given?.scopes) ? { urn, scopes: [...given.scopes] } : urn;
}

/**
 * Per-request state, kept on the context object the host builds for each request (so it goes away
 * with the request). The actor is checked first: a request without one gets UNAUTHENTICATED.
 *
 * On the context itself, under a symbol of this schema's own (not enumerable): a WeakMap keyed by the
 * contexts would do as well for a full collection, but V8's young-generation collections treat a weak
 * map's values as alive, so every request's state (its loader and the entities it loaded) would be
 * promoted and kept until the next full collection. A context that cannot take a property (frozen)
 * still gets its state, from a weak map.
 */
export function createRequestStates(catalog: Catalog): (context: unknown) => RequestState {
  const held = Symbol('metacatalog request state');
  const frozenContexts = new WeakMap<object, RequestState>();
  return (context) => {
    const actor = actorOf(context);
    const key = context as object & { [held]?: RequestState };
    const known = key[held] ?? frozenContexts.get(key);
    if (known && actorUrn(known.actor) === actorUrn(actor)) return known;
    const state: RequestState = {
      actor,
      entities: new BatchLoader(async (urns) => {
        const answers: Array<EntityView | null | Error> = urns.map((urn) => {
          const problem = urnProblem(urn);
          // A malformed URN fails its own field only, not the batch it came with.
          return problem ? invalidInput([{ path: 'urn', message: problem }]) : null;
        });
        const valid = urns.filter((_, i) => answers[i] === null);
        const found = new Map<string, EntityView>();
        for (let start = 0; start < valid.length; start += READ_CHUNK) {
          for (const view of await catalog.entities.getMany(actor, valid.slice(start, start + READ_CHUNK))) found.set(view.urn, view);
        }
        return answers.map((answer, i) => answer ?? found.get(urns[i]!) ?? null);
      }),
    };
    if (Object.isExtensible(key)) Object.defineProperty(key, held, { value: state, writable: true, configurable: true });
    else frozenContexts.set(key, state);
    return state;
  };
}
